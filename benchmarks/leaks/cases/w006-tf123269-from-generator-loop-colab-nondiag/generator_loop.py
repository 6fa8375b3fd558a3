# Reproduction (our own minimal rewrite) of the situation reported in
# https://github.com/tensorflow/tensorflow/issues/123269 (TF 2.20, Colab T4 runtime).
# A pipeline is built with Dataset.from_generator and consumed, then deleted and
# garbage-collected, 500 times over; host RSS still climbs (~128 MB in total).
import gc

import numpy as np
import tensorflow as tf

block = np.random.rand(1000, 1000).astype(np.float32)


def yield_block():
    yield block


for step in range(500):
    dataset = tf.data.Dataset.from_generator(
        yield_block,
        output_signature=tf.TensorSpec(shape=(1000, 1000), dtype=tf.float32),
    )
    for element in dataset:
        total = tf.reduce_sum(element)
    del dataset
    gc.collect()
