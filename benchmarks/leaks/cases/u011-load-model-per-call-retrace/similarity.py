# Reproduction (our own minimal rewrite) of the code posted in
# https://github.com/tensorflow/tensorflow/issues/43501: a prediction helper that loads the
# saved Keras model and predicts, called each time new data arrives. The caller loop is ours;
# the reporter only says the helper is called for every new piece of data.
import numpy as np
import tensorflow as tf


def predict_similarity(cosine_features):
    scorer = tf.keras.models.load_model("model.h5")
    print(scorer.summary())
    scores = scorer.predict(cosine_features, verbose=0)
    return scores


def incoming_features():
    while True:
        yield np.random.rand(1, 10).astype("float32")


for features in incoming_features():
    print(predict_similarity(features))
