# Reproduction (our own minimal rewrite) of the situation in
# https://github.com/keras-team/keras/issues/19058 (also tensorflow/tensorflow#62783): a neural
# architecture search builds and trains hundreds of Conv2D models in one process; memory keeps
# growing although each model is deleted, garbage-collected and the session cleared. A Keras
# maintainer reproduced the growth with Keras 3 on both the TensorFlow and torch backends.
# Search space, data and sizes are ours.
import gc
import random

import keras
import numpy as np

x_train = np.random.rand(512, 32, 32, 3).astype("float32")
y_train = np.random.randint(0, 10, size=(512,))


def build_candidate(n_blocks, filters, kernel_size):
    layers = [keras.Input(shape=(32, 32, 3))]
    for _ in range(n_blocks):
        layers.append(keras.layers.Conv2D(filters, kernel_size, padding="same", activation="relu"))
    layers += [keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(10, activation="softmax")]
    model = keras.Sequential(layers)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return model


for trial in range(1000):
    candidate = build_candidate(random.randint(1, 4), random.choice([16, 32, 64]), random.choice([3, 5]))
    candidate.fit(x_train, y_train, epochs=1, batch_size=64, verbose=0)
    del candidate
    gc.collect()
    keras.backend.clear_session()
