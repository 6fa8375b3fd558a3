# Reproduction (our own minimal rewrite) of the situation in
# https://github.com/tensorflow/tensorflow/issues/51083 (TF 2.5, Ubuntu 20.04, inference):
# a @tf.function reads and decodes one JPEG per call with tf.io.read_file(fpath) for 10,000
# files; memory passes 30 GB and the process is killed. Replacing tf.io.read_file by
# open(fpath, 'rb').read() and dropping the decorator ends the growth, and reading the same
# files again adds nothing. The posted function body is not in our copy: decode and resize ours.
import glob

import tensorflow as tf

IMAGE_DIR = "/data/inference_images"


@tf.function
def load_image(fpath):
    img_string = tf.io.read_file(fpath)
    image = tf.io.decode_jpeg(img_string, channels=3)
    return tf.image.resize(image, (224, 224))


def run():
    for fpath in sorted(glob.glob(IMAGE_DIR + "/*.jpg"))[:10_000]:
        batch = tf.expand_dims(load_image(fpath), 0)
