# Reproduction of https://github.com/tensorflow/tensorflow/issues/29483
# (minimal rewrite of the Flask service posted in the thread; names ours, logging dropped).
# Reported: process memory grows with requests and is never given back.
import numpy as np
import tensorflow as tf
from flask import Flask
from tensorflow.python.platform import gfile

app = Flask(__name__)

with gfile.FastGFile("../facenet.pb", "rb") as f:
    graph_def = tf.GraphDef()
    graph_def.ParseFromString(f.read())

graph = tf.Graph()
with graph.as_default():
    tf.import_graph_def(graph_def, input_map=None, name="")
    images_in = tf.get_default_graph().get_tensor_by_name("input:0")
    embeddings = tf.get_default_graph().get_tensor_by_name("embeddings:0")
    phase_train = tf.get_default_graph().get_tensor_by_name("phase_train:0")
    tensors = {"images": images_in, "embeddings": embeddings, "phase_train": phase_train}

sess = tf.Session(graph=graph)


@app.route("/", methods=["POST"])
def classify():
    face = np.load("test.npy")
    result = sess.run(tensors["embeddings"], feed_dict={tensors["images"]: face, tensors["phase_train"]: False})
    return str(result.shape)


if __name__ == "__main__":
    app.run()
