# Reproduction (our own minimal rewrite) of the code posted in
# https://github.com/tensorflow/tensorflow/issues/33434 (TF 2.0)
# The same traced function called with tensors of a new shape traces a new graph.
import tensorflow as tf


@tf.function
def add(a, b):
    print("tracing add")
    return a + b


add(tf.constant(1), tf.constant(2))
add(tf.constant([1, 2]), tf.constant([2, 4]))
add(tf.constant([333, 2]), tf.constant([2, 4444]))
