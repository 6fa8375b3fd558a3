# Reproduction of https://github.com/tensorflow/tensorflow/issues/32954
# (written from the thread: the posted script could not be run by the maintainer and was not
# visible to us; the models, sizes and data are ours, the calls are the ones described).
# Reported: a GAN trained with Keras 2.2.4 on TensorFlow 2.0.0 leaks memory until it crashes;
# the reporter finds that .fit() called in a loop is the cause, clear_session only slows the
# growth, and replacing .fit() by .train_on_batch() makes the training stable.
import numpy as np
from keras.layers import Dense
from keras.models import Sequential


def build_gan(noise_dim=100, data_dim=784):
    generator = Sequential([Dense(256, activation="relu", input_dim=noise_dim),
                            Dense(data_dim, activation="tanh")])
    discriminator = Sequential([Dense(256, activation="relu", input_dim=data_dim),
                                Dense(1, activation="sigmoid")])
    discriminator.compile(loss="binary_crossentropy", optimizer="adam")
    discriminator.trainable = False
    combined = Sequential([generator, discriminator])
    combined.compile(loss="binary_crossentropy", optimizer="adam")
    return generator, discriminator, combined


def train(real_images, epochs=200, batch_size=64, noise_dim=100):
    generator, discriminator, combined = build_gan(noise_dim, real_images.shape[1])
    batches = real_images.shape[0] // batch_size
    for epoch in range(epochs):
        for index in range(batches):
            picked = real_images[index * batch_size:(index + 1) * batch_size]
            noise = np.random.normal(0, 1, (batch_size, noise_dim))
            fakes = generator.predict(noise)
            discriminator.fit(np.concatenate([picked, fakes]),
                              np.concatenate([np.ones(batch_size), np.zeros(batch_size)]),
                              batch_size=batch_size, epochs=1, verbose=0)
            combined.fit(noise, np.ones(batch_size), batch_size=batch_size, epochs=1, verbose=0)


if __name__ == "__main__":
    train(np.random.rand(6400, 784))
