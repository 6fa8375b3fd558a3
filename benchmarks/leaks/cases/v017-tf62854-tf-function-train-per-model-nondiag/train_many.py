# Reproduction of https://github.com/tensorflow/tensorflow/issues/62854
# (minimal rewrite of the posted script, names ours; data, step and round counts are ours
# where the excerpt we saw ends).
# Reported: on TF 2.15, training several models one after another grows RAM after every round
# when the train method is decorated with @tf.function, although each model is deleted and
# gc.collect() runs; without @tf.function there is no growth but training is much slower.
import gc
import os

import psutil
import tensorflow as tf


class Regressor:
    def __init__(self):
        self.net = tf.keras.Sequential([
            tf.keras.layers.Dense(256),
            tf.keras.layers.Dense(256),
            tf.keras.layers.Dense(256),
            tf.keras.layers.Dense(1),
        ])
        self.optimizer = tf.optimizers.Adam()

    @tf.function
    def train(self, features, targets):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.net(features) - targets))
        grads = tape.gradient(loss, self.net.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.net.trainable_variables))
        return loss


def main(rounds=50, steps=100):
    features = tf.random.normal([256, 32])
    targets = tf.random.normal([256, 1])
    process = psutil.Process(os.getpid())
    for round_index in range(rounds):
        regressor = Regressor()
        for _ in range(steps):
            regressor.train(features, targets)
        del regressor
        gc.collect()
        print(round_index, process.memory_info().rss / 2 ** 20)


if __name__ == "__main__":
    main()
