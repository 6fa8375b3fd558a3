# Reproduction (our own minimal rewrite) of the code posted in
# https://github.com/tensorflow/tensorflow/issues/46661 (TF 2.4 regression)
# Two VGG16 block-1 convolutions, called through a tf.function on the same-shaped numpy input.
import numpy as np
import psutil
import tensorflow as tf
import tqdm


class TwoConv(tf.keras.models.Model):
    def __init__(self):
        super().__init__()
        self.conv_a = tf.keras.layers.Conv2D(64, (3, 3), activation="relu", padding="same", name="block1_conv1")
        self.conv_b = tf.keras.layers.Conv2D(64, (3, 3), activation="relu", padding="same", name="block1_conv2")

    def call(self, inputs):
        return self.conv_b(self.conv_a(inputs))


net = TwoConv()


@tf.function
def forward(inputs):
    return net(inputs)


def measure(iterations):
    shape = 1, 256, 256, 3
    batch = np.random.rand(*shape)
    rss = []
    for _ in tqdm.tqdm(range(iterations)):
        forward(batch)
        rss.append(psutil.Process().memory_info().rss)
    return rss
