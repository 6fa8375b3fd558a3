# Reproduction of https://github.com/tensorflow/tensorflow/issues/41973
# Our rewrite of the reporter's minimal script (names ours, same calls and sizes): a new functional
# model is built, compiled and fitted on every pass of an endless loop.
import gc
import tracemalloc

import numpy as np
from tensorflow import keras
from tensorflow.keras import layers

if __name__ == "__main__":
    tracemalloc.start()
    while True:
        features = keras.Input(shape=(10,))
        prediction = layers.Dense(1)(features)
        model = keras.Model(inputs=features, outputs=prediction)
        model.compile(optimizer="adam", loss="mse")
        x = np.random.rand(1000, 10)
        y = np.random.rand(1000)
        model.fit(x, y)
        gc.collect()
        current, peak = tracemalloc.get_traced_memory()
        print(f"current {current / 10**6} MB; peak {peak / 10**6} MB")
