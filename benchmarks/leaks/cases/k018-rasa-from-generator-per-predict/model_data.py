# Reproduction of https://github.com/RasaHQ/rasa/pull/5529
# Our minimal rewrite of the prediction path that PR removed, not Rasa's code: names are ours;
# a data holder whose as_tf_dataset builds a from_generator pipeline on every call.
import numpy as np
import tensorflow as tf


class FeatureData:
    def __init__(self, features):
        self.features = features

    def _gen(self, batch_size):
        n = len(self.features)
        for start in range(0, n, batch_size):
            yield self.features[start:start + batch_size]

    def as_tf_dataset(self, batch_size):
        return tf.data.Dataset.from_generator(
            lambda: self._gen(batch_size),
            output_types=tf.float32,
            output_shapes=tf.TensorShape([None, self.features.shape[-1]]),
        )
