# Reproduction of https://github.com/keras-team/keras/issues/2102
# (written after the sample posted in the thread by tzachar: Sequential/Dense/Activation
# models built and trained in a loop, memory and time printed per round with psutil and
# timeit; layer sizes, data and round count are ours).
# Reported: with the TensorFlow backend, memory grows round after round when a new model is
# built in a loop (k-fold experiments, KerasClassifier grid sweeps); no growth on Theano.
import gc
import os
import timeit

import numpy as np
import psutil
from keras.layers.core import Activation, Dense
from keras.models import Sequential


def resident_mb():
    return psutil.Process(os.getpid()).memory_info().rss / 2.0 ** 20


def make_model(input_dim):
    model = Sequential()
    model.add(Dense(128, input_dim=input_dim))
    model.add(Activation("relu"))
    model.add(Dense(1))
    model.add(Activation("sigmoid"))
    model.compile(loss="binary_crossentropy", optimizer="adam")
    return model


def run_folds(features, targets, folds=100):
    for fold in range(folds):
        started = timeit.default_timer()
        model = make_model(features.shape[1])
        model.fit(features, targets, nb_epoch=1, verbose=0)
        del model
        gc.collect()
        print(fold, resident_mb(), timeit.default_timer() - started)


if __name__ == "__main__":
    run_folds(np.random.rand(1000, 20), np.random.randint(2, size=(1000, 1)))
