# Reproduction (our own minimal rewrite) of the situation in
# https://github.com/dpressel/rude-carnie/issues/29 (age/gender classifier, TensorFlow 1.x):
# wrapped in an HTTP service, every call to classify() leaves about 15 MB more RAM in use.
# The network is a stand-in; the per-call crop batch, its eval() and the session.run follow guess.py.
import numpy as np
import tensorflow.compat.v1 as tf
from flask import Flask, jsonify, request

tf.disable_eager_execution()

RESIZE_FINAL = 227
AGE_LIST = ["(0, 2)", "(4, 6)", "(8, 12)", "(15, 20)", "(25, 32)", "(38, 43)", "(48, 53)", "(60, 100)"]


def make_multi_crop_batch(image_bytes):
    image = tf.image.decode_jpeg(image_bytes, channels=3)
    image = tf.image.resize_images(image, (256, 256))
    crops = [tf.image.resize_images(image, (RESIZE_FINAL, RESIZE_FINAL))]
    for offset in (0, 29):
        crop = tf.image.crop_to_bounding_box(image, offset, offset, RESIZE_FINAL, RESIZE_FINAL)
        crops.append(crop)
        crops.append(tf.image.flip_left_right(crop))
    image_batch = tf.stack(crops)
    return image_batch


def classify(sess, label_list, softmax_output, images, image_bytes):
    image_batch = make_multi_crop_batch(image_bytes)
    batch_results = sess.run(softmax_output, feed_dict={images: image_batch.eval(session=sess)})
    output = batch_results.mean(axis=0)
    best = int(np.argmax(output))
    return label_list[best], float(output[best])


images = tf.placeholder(tf.float32, [None, RESIZE_FINAL, RESIZE_FINAL, 3])
flat = tf.reshape(images, [-1, RESIZE_FINAL * RESIZE_FINAL * 3])
logits = tf.layers.dense(flat, len(AGE_LIST))
softmax_output = tf.nn.softmax(logits)

sess = tf.Session()
sess.run(tf.global_variables_initializer())

app = Flask(__name__)


@app.route("/classify", methods=["POST"])
def classify_route():
    label, probability = classify(sess, AGE_LIST, softmax_output, images, request.files["image"].read())
    return jsonify({"label": label, "probability": probability})


if __name__ == "__main__":
    app.run()
