# Reproduction (our own minimal rewrite) of the code posted in
# https://github.com/tensorflow/tensorflow/issues/51839 (TF 2.6/2.7): tf.py_function called
# eagerly in an endless loop on a NumPy function that returns large arrays; resident memory
# grows without bound, while the same loop without py_function stays flat.
import numpy as np
import tensorflow as tf


def nearest_neighbours(points, k):
    indices = np.zeros((1000, 1000, 20), dtype=np.int64)
    distances = np.zeros((1000, 1000, 20), dtype=np.float32)
    return indices, distances


while True:
    result = tf.py_function(nearest_neighbours, [0, 0], [tf.int64, tf.float32])
