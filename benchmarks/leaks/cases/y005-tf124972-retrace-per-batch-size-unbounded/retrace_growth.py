# Reproduction (our own minimal rewrite) of the situation in
# https://github.com/tensorflow/tensorflow/issues/124972 (TF 2.21, also 2.20 and nightly):
# a @tf.function called with tensors whose leading dimension changes on every call,
# shapes [1, 128], [2, 128], ... [500, 128], as in variable-length serving workloads.
# The layer and the reduction are stand-ins of ours; the shapes follow the thread.
import gc

import numpy as np
import tensorflow as tf

projection = tf.keras.layers.Dense(128)


@tf.function
def encode(batch):
    return tf.reduce_mean(projection(batch), axis=0)


for rows in range(1, 501):
    batch = tf.constant(np.random.rand(rows, 128), dtype=tf.float32)
    encoded = encode(batch)

del encode
gc.collect()
tf.keras.backend.clear_session()
