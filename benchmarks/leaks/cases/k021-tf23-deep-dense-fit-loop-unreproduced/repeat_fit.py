# Reproduction of https://github.com/tensorflow/tensorflow/issues/43702
# Our rewrite of the script posted in the thread (names ours, same structure and sizes): a 200-layer
# Dense chain is built, compiled eagerly and fitted on one sample, then cleared, 1000 times.
import gc
import os

import psutil
import tensorflow as tf
from tensorflow import keras


def train_once():
    first = keras.layers.Input(shape=(1,))
    layer = first
    for _ in range(200):
        layer = keras.layers.Dense(1)(layer)
    model = keras.Model(inputs=first, outputs=layer)
    model.compile(loss="mse", run_eagerly=True)
    model.fit(x=[0], y=[0], verbose=0)


print(tf.__version__)
tf.get_logger().setLevel("ERROR")
process = psutil.Process(os.getpid())
previous = 0
first_rss = 0
for i in range(1000):
    train_once()
    keras.backend.clear_session()
    gc.collect()
    rss = process.memory_info().rss
    if i == 0:
        first_rss = rss
    print(f"iteration {i}: rss {rss >> 20} MB ({(rss - previous) >> 10:+} KB; "
          f"{((rss - first_rss) // max(1, i)) >> 10:+} KB/it.)")
    previous = rss
