# Reproduction (our own minimal rewrite) of the situation in
# https://github.com/grahamgower/genomatnn/issues/13 (genomatnn `apply`, TF 2.2 Keras): a
# trained CNN is applied along a genome; a generator yields batches of genotype-matrix
# windows whose batch size varies, each goes through model.predict_on_batch, and TensorFlow
# warns "5 out of the last 27 calls to predict_function triggered tf.function retracing".
# Window sizes, the network and the generator are ours.
import numpy as np
import tensorflow as tf

n_haplotypes, n_bins = 32, 64


def build_cnn():
    return tf.keras.Sequential([
        tf.keras.Input(shape=(n_haplotypes, n_bins, 1)),
        tf.keras.layers.Conv2D(16, (4, 4), activation="relu"),
        tf.keras.layers.GlobalMaxPooling2D(),
        tf.keras.layers.Dense(1, activation="sigmoid"),
    ])


def genomic_windows(chromosome_lengths, batch_size=64):
    for length in chromosome_lengths:
        n_windows = length // 100_000
        for start in range(0, n_windows, batch_size):
            count = min(batch_size, n_windows - start)
            yield np.random.rand(count, n_haplotypes, n_bins, 1).astype(np.float32)


def apply(model, chromosome_lengths):
    predictions = []
    for batch in genomic_windows(chromosome_lengths):
        predictions.append(model.predict_on_batch(batch))
    return np.concatenate(predictions)


if __name__ == "__main__":
    lengths = np.random.randint(5_000_000, 250_000_000, size=22)
    print(apply(build_cnn(), lengths).shape)
