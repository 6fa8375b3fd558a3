# Reproduction of https://github.com/keras-team/keras/issues/9967
# (minimal rewrite of the server code posted in the thread; the Flask route and names are ours).
# Reported: a Flask server predicting with a Keras model grows in memory steadily while CPU stays low.
import numpy as np
import tensorflow as tf
from flask import Flask, jsonify, request
from keras.models import load_model

app = Flask(__name__)

model_name = "mymodel.h5"
model = load_model("./models/" + model_name)
graph = tf.get_default_graph()


def predict(graph, model, feat):
    with graph.as_default():
        result = model.predict(feat)
        result = np.squeeze(result)
        if result > 0.5:
            return 1, result
        else:
            return 0, 1 - result


@app.route("/predict", methods=["POST"])
def handle():
    feat = np.array(request.get_json()["features"])[np.newaxis]
    label, score = predict(graph, model, feat)
    return jsonify({"label": label, "score": float(score)})
