# Reproduction of https://github.com/tensorflow/tensorflow/issues/38945
# (written from the thread: the original script and notebook were not visible to us; the
# loop builds a model and fits it with validation_split each round, as the thread describes;
# layer sizes, data and round count are ours).
# Reported: on TF 2.1/2.2, memory keeps increasing when a model is trained with
# model.fit(..., validation_split=...) repeatedly in a loop.
import os

import numpy as np
import psutil
import tensorflow as tf


def make_model(width):
    model = tf.keras.Sequential([
        tf.keras.layers.Dense(64, activation="relu", input_shape=(width,)),
        tf.keras.layers.Dense(1),
    ])
    model.compile(optimizer="adam", loss="mse")
    return model


def run(rounds=200, samples=10000, width=50):
    process = psutil.Process(os.getpid())
    for step in range(rounds):
        features = np.random.rand(samples, width)
        targets = np.random.rand(samples)
        model = make_model(width)
        model.fit(features, targets, epochs=1, batch_size=32, validation_split=0.2, verbose=0)
        print(step, process.memory_info().rss / 2 ** 20)


if __name__ == "__main__":
    run()
