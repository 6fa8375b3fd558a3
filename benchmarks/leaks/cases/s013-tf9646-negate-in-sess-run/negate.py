# Reproduction of https://github.com/tensorflow/tensorflow/issues/9646
# (minimal rewrite of the "leaking" example posted in the thread; names ours).
# Reported: memory keeps growing and runs get slower when fetching -c instead of c.
import tensorflow as tf


def run():
    x = tf.constant(5.0)
    y = tf.constant(6.0)
    product = x * y
    sess = tf.Session()
    for _ in range(1000):
        value = sess.run(-product)
    return value


run()
