# Reproduction (our own minimal rewrite) of the code posted in
# https://github.com/hiveml/simple-ml-serving/issues/1 (TF 1.x, Flask): a frozen face
# embedding graph is imported once into its own graph with one global Session, and each
# POST runs the embeddings for a stored face batch. Memory still grows with requests.
# The model path, tensor names and the input file follow the post; names ours.
import numpy as np
import tensorflow as tf
from flask import Flask, jsonify
from tensorflow.python.platform import gfile

app = Flask(__name__)

with gfile.FastGFile("../20190517-152605.pb", "rb") as f:
    graph_def = tf.GraphDef()
    graph_def.ParseFromString(f.read())

graph = tf.Graph()
with graph.as_default():
    tf.import_graph_def(graph_def, input_map=None, name="")
    face_input = graph.get_tensor_by_name("input:0")
    embeddings = graph.get_tensor_by_name("embeddings:0")
    phase_train = graph.get_tensor_by_name("phase_train:0")

sess = tf.Session(graph=graph)


@app.route("/", methods=["POST"])
def classify():
    faces = np.load("test.npy")
    result = sess.run(embeddings, feed_dict={face_input: faces, phase_train: False})
    return jsonify(result.tolist())


if __name__ == "__main__":
    app.run(host="127.0.0.1", port=5000)
