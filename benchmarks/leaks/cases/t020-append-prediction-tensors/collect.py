# Reproduction (our own minimal rewrite) of the code posted in
# https://github.com/tensorflow/tensorflow/issues/34606 (TF 2.0, GPU)
# Model outputs kept as tensors in a Python list over the whole dataset.
import numpy as np
import tensorflow as tf


def predict_all(model, dataset):
    preds = []
    for data in dataset:
        pred = model(data)
        preds.append(pred)
    return preds


def predict_all_numpy(model, dataset):
    preds = []
    for data in dataset:
        pred = model(data)
        preds.append(np.array(pred))
    return preds
