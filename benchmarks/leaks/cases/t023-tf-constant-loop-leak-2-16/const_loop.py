# Reproduction (our own minimal rewrite) of the code posted in
# https://github.com/tensorflow/tensorflow/issues/68196 (TF 2.16.1, eager)
# A scalar tf.constant created and dropped 2000 times per call; RSS measured around it.
import time

import psutil
import tensorflow as tf


def make_scalars():
    for _ in range(2000):
        y = tf.constant(5.0)


start_rss = psutil.Process().memory_info().rss
for rnd in range(100):
    make_scalars()
    time.sleep(0.01)
    print(rnd, psutil.Process().memory_info().rss - start_rss)
