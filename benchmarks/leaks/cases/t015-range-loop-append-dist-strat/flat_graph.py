# Reproduction (our own minimal rewrite) of the code posted in
# https://github.com/tensorflow/tensorflow/issues/31588 (TF 2.0, tf.distribute)
# A traced step applies an MLP to each column of a flat graph in a Python range loop.
import tensorflow as tf

ITERATIONS = 64


def make_mlp():
    return tf.keras.Sequential([tf.keras.layers.Dense(128, activation="relu"),
                                tf.keras.layers.Dense(16)])


mlp = make_mlp()


@tf.function
def node_features(graph):
    outputs = list()
    for i in range(ITERATIONS):
        outputs.append(mlp(graph[:, i]))
    return tf.concat(outputs, axis=-1)
