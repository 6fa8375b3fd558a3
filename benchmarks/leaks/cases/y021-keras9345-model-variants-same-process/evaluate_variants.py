# Reproduction (our own minimal rewrite) of the situation in
# https://github.com/keras-team/keras/issues/9345 (Keras 2.1, TensorFlow backend, 16 GB machine):
# a script generates 57 variations of a model and evaluates each one 3 times in the same Python
# process; memory climbs until the machine swaps, and the last summary shows layer input_156,
# i.e. Keras still holds the earlier models. Variants, data and sizes are ours.
import numpy as np
from keras.layers import Dense, Input
from keras.models import Model

x = np.random.rand(5000, 100)
y = np.random.rand(5000, 1)


def build_variant(width, depth):
    inputs = Input(shape=(100,))
    hidden = inputs
    for _ in range(depth):
        hidden = Dense(width, activation="relu")(hidden)
    outputs = Dense(1)(hidden)
    model = Model(inputs, outputs)
    model.compile(optimizer="adam", loss="mse")
    return model


variants = [(width, depth) for width in (32, 64, 128) for depth in range(1, 20)]
scores = {}
for width, depth in variants:
    runs = []
    for _ in range(3):
        model = build_variant(width, depth)
        model.fit(x, y, epochs=5, verbose=0)
        runs.append(model.evaluate(x, y, verbose=0))
    scores[(width, depth)] = float(np.mean(runs))
