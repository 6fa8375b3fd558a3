# Reproduction of https://github.com/tensorflow/tensorflow/issues/11273
# (minimal rewrite of the posted script, names ours; the matplotlib plot is dropped).
# Reported: building a fresh graph with one tf.layers.dense in each of 1000 iterations grows
# memory, while the same graph built with tf.get_variable and tf.matmul does not.
import os

import numpy as np
import psutil
import tensorflow as tf


def resident_gb():
    return psutil.Process(os.getpid()).memory_info()[0] / 2.0 ** 30


def build_graphs(iterations=1000):
    usage = []
    for step in range(iterations):
        usage.append(resident_gb())
        print("iter", step, usage[-1])
        with tf.Graph().as_default():
            features = tf.constant(np.ones((100, 1000), dtype=np.float32))
            features = tf.layers.dense(features, units=1000)
    return usage


if __name__ == "__main__":
    build_graphs()
