# Reproduction (our own minimal rewrite) of the situation in
# https://github.com/keras-team/keras/issues/16947 (TF 2.9.1): one model trained in a loop,
# each stage on a fresh keras.utils.Sequence of synthetic data with new parameters.
# The thread's exact sizes are not in our copy; the sizes below are ours.
import numpy as np
import tensorflow as tf


class SyntheticImages(tf.keras.utils.Sequence):
    def __init__(self, noise_level, batch_size=32, batches_per_epoch=100):
        self.noise_level = noise_level
        self.batch_size = batch_size
        self.batches_per_epoch = batches_per_epoch

    def __len__(self):
        return self.batches_per_epoch

    def __getitem__(self, index):
        clean = np.random.rand(self.batch_size, 64, 64, 1).astype("float32")
        noisy = clean + self.noise_level * np.random.randn(*clean.shape).astype("float32")
        return noisy, clean


def build_denoiser():
    inputs = tf.keras.Input(shape=(64, 64, 1))
    hidden = tf.keras.layers.Conv2D(16, 3, padding="same", activation="relu")(inputs)
    outputs = tf.keras.layers.Conv2D(1, 3, padding="same")(hidden)
    model = tf.keras.Model(inputs, outputs)
    model.compile(optimizer="adam", loss="mse")
    return model


denoiser = build_denoiser()
for stage in range(200):
    stage_data = SyntheticImages(noise_level=0.05 + 0.001 * stage)
    denoiser.fit(stage_data, epochs=1, verbose=0)
