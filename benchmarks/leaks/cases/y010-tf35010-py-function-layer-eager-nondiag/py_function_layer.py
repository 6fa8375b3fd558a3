# Reproduction (our own minimal rewrite) of the code posted in
# https://github.com/tensorflow/tensorflow/issues/35010 (TF 2.0.0, macOS, eager):
# a custom Keras layer whose call wraps a NumPy computation in tf.py_function,
# called eagerly in a loop while RSS is printed; memory grows linearly with the calls.
# The NumPy body and the sizes are ours.
import numpy as np
import psutil
import tensorflow as tf


class NumpyProjection(tf.keras.layers.Layer):
    def __init__(self, output_dim, **kwargs):
        super().__init__(**kwargs)
        self.output_dim = output_dim

    def build(self, input_shape):
        self.built = True

    def call(self, inputs):
        def project(values):
            return np.tile(values.numpy().sum(axis=1, keepdims=True), (1, self.output_dim))

        return tf.py_function(project, [inputs], tf.float32)


layer = NumpyProjection(output_dim=64)
process = psutil.Process()
for step in range(100_000):
    layer(np.random.rand(32, 128).astype("float32"))
    if step % 1000 == 0:
        print(step, process.memory_info().rss)
