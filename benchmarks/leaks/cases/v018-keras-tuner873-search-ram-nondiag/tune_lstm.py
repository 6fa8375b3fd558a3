# Reproduction of https://github.com/keras-team/keras-tuner/issues/873
# (minimal rewrite of the posted build function and search, names ours; the window sizes,
# data, trial count and the output activations offered are ours where the excerpt ends).
# Reported: a BayesianOptimization search over stacked-LSTM models keeps using more RAM from
# trial to trial, without releasing it in between, until the machine or the program crashes
# (CPU only, Ubuntu 22.04).
import keras_tuner as kt
import numpy as np
from tensorflow.keras.layers import LSTM, Dense, Dropout
from tensorflow.keras.models import Sequential

STEPS, FEATURES = 30, 4
ACTIVATIONS = ["linear", "relu", "sigmoid", "tanh", "softmax", "softplus"]


def build_model(hp):
    model = Sequential()
    model.add(LSTM(hp.Int("lstm_1_unit", min_value=4, max_value=512, sampling="log"),
                   return_sequences=True, input_shape=(STEPS, FEATURES)))
    extra = hp.Int("additional_layers", min_value=1, max_value=5, step=1)
    for i in range(extra):
        units = hp.Int(f"lstm_{i + 2}_unit", min_value=4, max_value=512, sampling="log")
        model.add(LSTM(units, return_sequences=i < extra - 1))
    model.add(Dropout(hp.Float("dropout_rate", min_value=0, max_value=0.5, step=0.1)))
    model.add(Dense(hp.Int("dense_units", min_value=4, max_value=256, sampling="log"),
                    activation=hp.Choice("dense_activation", values=ACTIVATIONS)))
    model.add(Dense(1, activation=hp.Choice("output_activation", values=ACTIVATIONS)))
    model.compile(optimizer="adam", loss="mse")
    return model


def search(max_trials=200):
    features = np.random.rand(2000, STEPS, FEATURES)
    targets = np.random.rand(2000)
    tuner = kt.BayesianOptimization(build_model, objective="val_loss", max_trials=max_trials)
    tuner.search(features, targets, epochs=20, validation_split=0.2)


if __name__ == "__main__":
    search()
