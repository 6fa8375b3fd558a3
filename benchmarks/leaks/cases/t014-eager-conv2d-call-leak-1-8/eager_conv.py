# Reproduction (our own minimal rewrite) of the code posted in
# https://github.com/tensorflow/tensorflow/issues/19385 (TF 1.8, eager)
# A one-layer subclassed Keras model called a million times on the same input.
import tensorflow as tf

tf.enable_eager_execution()


class OneConv(tf.keras.Model):
    def __init__(self):
        super(OneConv, self).__init__()
        self.conv = tf.keras.layers.Conv2D(32, 3)

    def call(self, x):
        return self.conv(x)


images = tf.zeros([1, 10, 10, 3], tf.float32)
net = OneConv()
for _ in range(1000000):
    net(images)
