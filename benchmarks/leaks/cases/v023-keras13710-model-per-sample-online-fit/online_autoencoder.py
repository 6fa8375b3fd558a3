# Reproduction of https://github.com/keras-team/keras/issues/13710
# (written from the thread: only the loop `model.fit(sample, sample)` per incoming sample was
# posted; the autoencoder, its sizes and the stream are ours, and the model object is created
# in the consumer loop as the reporter found his code did).
# Reported: incremental training of an autoencoder on streaming data gets slower after every
# fit call (233 s, 234 s, 240 s per one-sample fit around sample 560).
import numpy as np
from keras.layers import Dense, Input
from keras.models import Model


def make_autoencoder(width=256, code=32):
    inputs = Input(shape=(width,))
    encoded = Dense(code, activation="relu")(inputs)
    decoded = Dense(width, activation="sigmoid")(encoded)
    autoencoder = Model(inputs, decoded)
    autoencoder.compile(optimizer="adam", loss="mse")
    return autoencoder


def consume(stream):
    for sample in stream:
        model = make_autoencoder(sample.shape[1])
        model.fit(sample, sample, epochs=1)


if __name__ == "__main__":
    consume(np.random.rand(1, 256) for _ in range(1000))
