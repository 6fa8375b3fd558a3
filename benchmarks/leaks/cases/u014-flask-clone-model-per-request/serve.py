# Reproduction (our own minimal rewrite) of the setup described in
# https://github.com/tensorflow/tensorflow/issues/47673 (TF 2.3.1): a Flask app loads its
# Keras models at startup and, for every inference request, works on an in-memory copy.
# The route, JSON handling and model path are ours; the three copy calls are as posted.
import numpy as np
import tensorflow as tf
from flask import Flask, jsonify, request

app = Flask(__name__)
base_model = tf.keras.models.load_model("models/image_classifier")


@app.route("/classify", methods=["POST"])
def classify():
    pixels = np.asarray(request.get_json()["pixels"], dtype=np.float32)[np.newaxis, ...]
    worker_model = tf.keras.models.clone_model(base_model)
    worker_model.build()
    worker_model.set_weights(base_model.get_weights())
    scores = worker_model.predict(pixels)
    return jsonify(label=int(np.argmax(scores[0])))


if __name__ == "__main__":
    app.run(host="127.0.0.1", port=5000)
