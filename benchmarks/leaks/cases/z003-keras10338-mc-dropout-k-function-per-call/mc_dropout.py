# Reproduction (our own minimal rewrite) of the situation in
# https://github.com/keras-team/keras/issues/10338 (Keras 2.x, TensorFlow backend):
# many predictions with dropout kept on (Monte Carlo dropout, as in keras#9412), where the
# helper builds a K.function on every call. The posted gist is not in our copy; the
# model, the data and the number of passes are ours.
import numpy as np
from keras import backend as K
from keras.layers import Dense, Dropout
from keras.models import Sequential


def build_regressor(n_features):
    model = Sequential()
    model.add(Dense(128, activation="relu", input_shape=(n_features,)))
    model.add(Dropout(0.5))
    model.add(Dense(128, activation="relu"))
    model.add(Dropout(0.5))
    model.add(Dense(1))
    model.compile(optimizer="adam", loss="mse")
    return model


def predict_with_dropout(model, x):
    dropout_forward = K.function([model.layers[0].input, K.learning_phase()],
                                 [model.layers[-1].output])
    return dropout_forward([x, 1])[0]


def predict_with_uncertainty(model, x, n_passes=100):
    samples = np.stack([predict_with_dropout(model, x) for _ in range(n_passes)])
    return samples.mean(axis=0), samples.std(axis=0)


if __name__ == "__main__":
    features = np.random.rand(256, 20)
    targets = np.random.rand(256, 1)
    regressor = build_regressor(20)
    regressor.fit(features, targets, epochs=2, verbose=0)
    for batch_start in range(0, 10000, 256):
        batch = np.random.rand(256, 20)
        mean, std = predict_with_uncertainty(regressor, batch)
