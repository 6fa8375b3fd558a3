# Reproduction (our own minimal rewrite) of the code posted in
# https://github.com/tensorflow/tensorflow/issues/57690 (TF 2.10, Python 3.10).
# A dataset is built per cross-validation fold with Dataset.from_generator; the
# Python object its generator captures is never released, so in the reporter's real
# experiments (large objects per fold) memory grows fold after fold.
import tensorflow as tf


class FoldPayload:
    def __init__(self, value):
        self.value = value

    def __del__(self):
        print("payload released")


def make_dataset(payload):
    def endless_values():
        while True:
            yield tf.convert_to_tensor(payload.value, dtype=tf.float32)

    return tf.data.Dataset.from_generator(
        endless_values,
        output_signature=tf.TensorSpec(shape=(), dtype=tf.float32),
    )


def run_fold(fold):
    dataset = make_dataset(FoldPayload(fold))
    for value in dataset.take(2):
        print(fold, float(value))


for fold in range(3):
    run_fold(fold)
