# Reproduction of https://github.com/keras-team/keras/issues/6457
# (written from the description and the posted make_trainable helper: a GAN loop that flips
# the discriminator's trainable flag and compiles again on every iteration; the generator,
# discriminator and data are small stand-ins of ours).
# Reported: compile time and memory grow with every successive compile call in the loop;
# clear_session cannot be used because it would reset the learned weights.
import numpy as np
from keras.layers import Dense
from keras.models import Sequential


def set_trainable(net, flag):
    net.trainable = flag
    for layer in net.layers:
        layer.trainable = flag


def build_nets(noise_dim=100, data_dim=784):
    generator = Sequential([Dense(256, activation="relu", input_dim=noise_dim),
                            Dense(data_dim, activation="tanh")])
    discriminator = Sequential([Dense(256, activation="relu", input_dim=data_dim),
                                Dense(1, activation="sigmoid")])
    stacked = Sequential([generator, discriminator])
    return generator, discriminator, stacked


def train(real_images, epochs=10000, batch_size=32, noise_dim=100):
    generator, discriminator, stacked = build_nets(noise_dim, real_images.shape[1])
    for epoch in range(epochs):
        picked = real_images[np.random.randint(0, real_images.shape[0], batch_size)]
        noise = np.random.normal(0, 1, (batch_size, noise_dim))
        fakes = generator.predict(noise)
        set_trainable(discriminator, True)
        discriminator.compile(loss="binary_crossentropy", optimizer="adam")
        discriminator.train_on_batch(np.concatenate([picked, fakes]),
                                     np.concatenate([np.ones(batch_size), np.zeros(batch_size)]))
        set_trainable(discriminator, False)
        stacked.compile(loss="binary_crossentropy", optimizer="adam")
        stacked.train_on_batch(noise, np.ones(batch_size))


if __name__ == "__main__":
    train(np.random.rand(6000, 784))
