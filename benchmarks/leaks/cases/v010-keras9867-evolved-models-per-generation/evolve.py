# Reproduction of https://github.com/keras-team/keras/issues/9867
# (written from the description; only a gist of timings was linked, so the genome encoding,
# the layers, the data and the population sizes are ours).
# Reported: a genetic algorithm that builds and trains one Keras model per individual (15
# epochs each, Keras 2.1.5 on TensorFlow 1.7) gets slower and slower: ~6 s per model in the
# first generation, ~54 s in the fourth, although models do not get bigger; setting the model
# to None and gc.collect() do not help.
import gc
import random
import time

import numpy as np
from keras.layers import Conv2D, Dense, Flatten
from keras.models import Sequential


def random_genome():
    return [random.choice([8, 16, 32]) for _ in range(random.randint(1, 3))]


def build(genome, input_shape, classes):
    model = Sequential()
    for index, filters in enumerate(genome):
        if index == 0:
            model.add(Conv2D(filters, 3, activation="relu", input_shape=input_shape))
        else:
            model.add(Conv2D(filters, 3, activation="relu"))
    model.add(Flatten())
    model.add(Dense(classes, activation="softmax"))
    model.compile(optimizer="adam", loss="categorical_crossentropy", metrics=["accuracy"])
    return model


def evolve(images, labels, generations=10, population=20):
    for generation in range(generations):
        for _ in range(population):
            started = time.time()
            model = build(random_genome(), images.shape[1:], labels.shape[1])
            model.fit(images, labels, epochs=15, verbose=0)
            print(generation, "t:", time.time() - started)
            model = None
            gc.collect()


if __name__ == "__main__":
    evolve(np.random.rand(500, 48, 48, 1), np.eye(7)[np.random.randint(7, size=500)])
