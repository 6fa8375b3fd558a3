# Reproduction of https://github.com/keras-team/keras/issues/4006
# (minimal rewrite of the helper posted in the thread; names ours, the analysis loop is ours).
# Reported: getting mid-model activations takes ~0.5 s per call, too slow for ~240000 calls.
import numpy as np
from keras import backend as K


def layer_activations(model, layer, batch):
    if layer == -1:  # the input layer returns the data itself
        return [batch]
    fetch = K.function([model.layers[0].input, K.learning_phase()], [model.layers[layer].output])
    return fetch([batch, 0])


def collect(model, samples, layer):
    results = []
    for sample in samples:
        results.append(layer_activations(model, layer, sample[np.newaxis])[0])
    return results
