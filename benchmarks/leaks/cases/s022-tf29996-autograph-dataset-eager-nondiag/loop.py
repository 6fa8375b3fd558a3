# Reproduction of https://github.com/tensorflow/tensorflow/issues/29996
# (minimal rewrite of the code posted in the thread; names ours).
# Reported: memory grows when a tf.autograph.to_graph function iterates a dataset eagerly; not with @tf.function.
import os

import numpy as np
import psutil
import tensorflow as tf

process = psutil.Process(os.getpid())


# @tf.function
def train_epoch(weights, batches):
    for batch in batches:
        weights * batch


train_epoch = tf.autograph.to_graph(train_epoch)

data = np.random.normal(0., 1., [10000, 2])
batches = tf.data.Dataset.from_tensor_slices(data).batch(32)

weights = tf.Variable([1., 1.], dtype=tf.float64)

for i in range(5000):
    train_epoch(weights, batches)
    if i % 50 == 0:
        print(process.memory_info().rss)
