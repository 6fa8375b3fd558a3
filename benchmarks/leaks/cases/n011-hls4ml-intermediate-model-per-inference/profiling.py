# Reproduction (our own minimal rewrite) of the code described in
# https://github.com/fastmachinelearning/hls4ml/issues/359 (hls4ml profiling, TF 2.4 Keras):
# to compare per-layer outputs, the profiling helper builds a new intermediate Keras model for
# every layer on every call and runs predict on it, so each call traces a new predict
# function ("11 out of the last 11 calls ... triggered tf.function retracing").
import numpy as np
import tensorflow as tf
from tensorflow import keras


def build_network():
    inputs = keras.Input(shape=(16,))
    x = keras.layers.Dense(64, activation="relu", name="fc1")(inputs)
    x = keras.layers.Dense(32, activation="relu", name="fc2")(x)
    outputs = keras.layers.Dense(5, activation="softmax", name="output")(x)
    return keras.Model(inputs, outputs)


def get_ymodel_keras(keras_model, X):
    ymodel = {}
    for layer in keras_model.layers:
        if isinstance(layer, keras.layers.InputLayer):
            continue
        partial_model = keras.Model(inputs=keras_model.inputs, outputs=layer.output)
        ymodel[layer.name] = partial_model.predict(X).flatten()
    return ymodel


def profile_many(keras_model, batches):
    return [get_ymodel_keras(keras_model, X) for X in batches]


if __name__ == "__main__":
    network = build_network()
    batches = [np.random.rand(100, 16).astype(np.float32) for _ in range(50)]
    print(len(profile_many(network, batches)), tf.__version__)
