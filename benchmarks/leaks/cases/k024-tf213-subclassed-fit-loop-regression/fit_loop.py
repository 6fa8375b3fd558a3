# Reproduction of https://github.com/tensorflow/tensorflow/issues/61791 (also keras-team/tf-keras#286)
# Our rewrite of the reporter's script (names ours; same subclassed model and sizes); the loop body
# elided in the excerpt (random data, fit, clear_session, gc.collect) is ours.
import gc

import numpy as np
import psutil
import tensorflow as tf


class WideModel(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.dense1 = tf.keras.layers.Dense(1000, activation=tf.nn.relu)
        self.dense2 = tf.keras.layers.Dense(10000, activation=tf.nn.relu)
        self.dense3 = tf.keras.layers.Dense(10000, activation=tf.nn.relu)
        self.dense4 = tf.keras.layers.Dense(1000, activation=tf.nn.softmax)

    def call(self, inputs):
        x = self.dense1(inputs)
        x = self.dense2(x)
        x = self.dense3(x)
        return self.dense4(x)


def free_memory():
    memory = psutil.virtual_memory()
    return memory.available / 1024 ** 2, memory.percent


if __name__ == '__main__':
    gpus = tf.config.experimental.list_physical_devices('GPU')
    for gpu in gpus:
        tf.config.experimental.set_memory_growth(device=gpu, enable=True)
    x = np.random.rand(1000, 100).astype(np.float32)
    y = np.random.randint(0, 1000, size=(1000,))
    for round_index in range(100):
        model = WideModel()
        model.compile(optimizer='sgd', loss='sparse_categorical_crossentropy')
        model.fit(x, y, epochs=1, batch_size=32, verbose=0)
        del model
        tf.keras.backend.clear_session()
        gc.collect()
        print(round_index, free_memory())
