# Reproduction (our own minimal rewrite) of the setup in
# https://github.com/autonomio/talos/issues/342 (talos, Keras with the TensorFlow backend,
# 2019): a grid search with talos.Scan over feed-forward and LSTM text classifiers; every
# permutation builds and trains a new Keras model in the same session, and after 15-20
# permutations the scan stops writing results. Data sizes are reduced and ours.
import numpy as np
import talos
from keras.layers import LSTM, Dense, Dropout
from keras.models import Sequential

sentence_length, vocabulary_size, class_count = 20, 1000, 7


def lstm_model(x_train, y_train, x_val, y_val, params):
    model = Sequential()
    model.add(LSTM(params["units"], input_shape=(sentence_length, vocabulary_size)))
    model.add(Dropout(params["dropout"]))
    model.add(Dense(class_count, activation="softmax"))
    model.compile(optimizer=params["optimizer"], loss="categorical_crossentropy",
                  metrics=["acc"])
    history = model.fit(x_train, y_train, validation_data=(x_val, y_val),
                        batch_size=params["batch_size"], epochs=params["epochs"], verbose=0)
    return history, model


x = np.random.rand(2000, sentence_length, vocabulary_size).astype(np.float32)
y = np.eye(class_count)[np.random.randint(0, class_count, 2000)]
search_space = {
    "units": [32, 64, 128, 256],
    "dropout": [0.0, 0.25, 0.5],
    "optimizer": ["adam", "rmsprop"],
    "batch_size": [32, 64],
    "epochs": [5],
}
scan = talos.Scan(x=x, y=y, params=search_space, model=lstm_model,
                  dataset_name="lstm_grid")
