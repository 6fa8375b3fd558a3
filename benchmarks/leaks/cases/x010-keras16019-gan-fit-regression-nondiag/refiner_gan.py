# Reproduction of the GAN training code posted in https://github.com/keras-team/keras/issues/16019
# ("memory leak following model.fit() for tf 2.7, 2.8, 2.9 (nightly), works fine for 2.5").
# The participant trains a GAN with a hand-written loop instead of fit(): one object holds a
# generator and a discriminator, _run_step computes both losses, train_step records them under
# two tapes and applies the discriminator's gradients, then the generator's; host memory
# grows batch after batch on TF >= 2.7. Minimal rewrite, names ours; the networks, losses'
# details, data and sizes are ours.
import numpy as np
import tensorflow as tf
from tqdm import tqdm


def make_generator():
    inputs = tf.keras.Input(shape=(64, 64, 3))
    x = tf.keras.layers.Conv2D(32, 3, padding="same", activation="relu")(inputs)
    outputs = tf.keras.layers.Conv2D(3, 3, padding="same", activation="tanh")(x)
    return tf.keras.Model(inputs, outputs)


def make_discriminator():
    inputs = tf.keras.Input(shape=(64, 64, 3))
    x = tf.keras.layers.Conv2D(32, 3, strides=2, activation="relu")(inputs)
    x = tf.keras.layers.GlobalAveragePooling2D()(x)
    return tf.keras.Model(inputs, tf.keras.layers.Dense(1)(x))


class Refiner:
    def __init__(self):
        self.generator = make_generator()
        self.discriminator = make_discriminator()
        self.gen_optimizer = tf.keras.optimizers.Adam(1e-4)
        self.disc_optimizer = tf.keras.optimizers.Adam(1e-4)
        self.bce = tf.keras.losses.BinaryCrossentropy(from_logits=True)

    def _run_step(self, real, synthetic, training):
        refined = self.generator(synthetic, training=training)
        real_out = self.discriminator(real, training=training)
        fake_out = self.discriminator(refined, training=training)
        gen_loss = self.bce(tf.ones_like(fake_out), fake_out) + tf.reduce_mean(tf.abs(refined - synthetic))
        disc_loss = self.bce(tf.ones_like(real_out), real_out) + self.bce(tf.zeros_like(fake_out), fake_out)
        return {"gen_loss": gen_loss, "disc_loss": disc_loss}

    @tf.function
    def train_step(self, real, synthetic):
        with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
            losses = self._run_step(real, synthetic, training=True)
        gen_grads = gen_tape.gradient(losses["gen_loss"], self.generator.trainable_variables)
        disc_grads = disc_tape.gradient(losses["disc_loss"], self.discriminator.trainable_variables)
        self.disc_optimizer.apply_gradients(zip(disc_grads, self.discriminator.trainable_variables))
        self.gen_optimizer.apply_gradients(zip(gen_grads, self.generator.trainable_variables))
        return losses

    @tf.function
    def test_step(self, real, synthetic):
        return self._run_step(real, synthetic, training=False)


real_images = np.random.uniform(-1, 1, (2048, 64, 64, 3)).astype("float32")
synthetic_images = np.random.uniform(-1, 1, (2048, 64, 64, 3)).astype("float32")
dataset = tf.data.Dataset.from_tensor_slices((real_images, synthetic_images)).batch(32)

refiner = Refiner()
for epoch in range(50):
    for real, synthetic in tqdm(dataset):
        refiner.train_step(real, synthetic)
    for real, synthetic in dataset.take(8):
        refiner.test_step(real, synthetic)
