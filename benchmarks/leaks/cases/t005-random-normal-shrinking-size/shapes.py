# Reproduction (our own minimal rewrite) of the code posted in
# https://stackoverflow.com/questions/67265103 (TF 2.2, Keras functional model)
# Each step feeds an input whose height/width changes with the loop counter.
import os

import numpy as np
import psutil
import tensorflow as tf

proc = psutil.Process(os.getpid())


class ShapeProbe:
    def make_net(self):
        image = tf.keras.Input(shape=(None, None, 3), batch_size=1)
        feat = tf.keras.layers.Conv2D(100, (2, 2), padding="SAME", name="feat")(image)
        flat = tf.reshape(feat, (-1,))
        squared = tf.multiply(flat, flat)
        return tf.keras.models.Model(inputs=image, outputs=squared)

    def run(self):
        net = self.make_net()
        net.summary()
        sides = np.arange(1000)
        for i in range(1000):
            batch = tf.random.normal([1, sides[999 - i], sides[999 - i], 3])
            with tf.GradientTape() as tape:
                out = net(batch)
            print(i, tf.shape(out), proc.memory_info().rss)


if __name__ == "__main__":
    ShapeProbe().run()
