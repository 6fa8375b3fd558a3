# Reproduction (our own minimal rewrite) of the measurement posted in
# https://github.com/keras-team/keras/issues/19500 (TensorFlow 2.16.1, Keras 3).
# A ResNet152V2 is called directly on one batch of 20 blank images ten times;
# resident memory goes from ~0.8 GB to ~7 GB over the first runs, gc.collect() or not.
import gc

import numpy as np
import psutil
import tensorflow as tf

network = tf.keras.applications.ResNet152V2()
batch = np.zeros([20, 224, 224, 3], dtype=np.uint8)

for run in range(10):
    gc.collect()
    rss_mib = psutil.Process().memory_info().rss / (1024 * 1024)
    print(f"after {run} run(s): {rss_mib:.0f} MiB", flush=True)
    network(batch)
