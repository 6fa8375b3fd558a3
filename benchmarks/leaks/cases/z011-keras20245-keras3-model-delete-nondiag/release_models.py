# Reproduction (our own minimal rewrite) of the situation in
# https://github.com/keras-team/keras/issues/20245 (Keras 3, Colab; the same with the
# tensorflow, jax and torch backends): a model with large Dense layers is created and used,
# then deleted, and the RAM is not given back. The gist's loop body is not in our copy;
# the sizes, the data and the number of rounds are ours.
import gc
import os

os.environ["KERAS_BACKEND"] = "torch"

import keras
import numpy as np
import psutil


def build_model():
    return keras.Sequential([
        keras.Input(shape=(100,)),
        keras.layers.Dense(1000, activation="relu"),
        keras.layers.Dense(10000, activation="softmax"),
    ])


def one_round(x, y):
    model = build_model()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    model.fit(x, y, epochs=1, batch_size=64, verbose=0)
    model.predict(x, verbose=0)
    del model
    keras.backend.clear_session()
    gc.collect()


if __name__ == "__main__":
    x = np.random.rand(512, 100).astype("float32")
    y = np.random.randint(0, 10000, size=(512,))
    process = psutil.Process()
    for round_index in range(20):
        one_round(x, y)
        print(round_index, process.memory_info().rss // 2 ** 20, "MiB")
