# Reproduction (our own minimal rewrite) of the setup in
# https://github.com/autonomio/talos/issues/318 (talos 0.5/0.6, Keras on the TensorFlow
# backend, 2019): a hyperparameter scan started from the Ubuntu terminal with python3 runs
# for a while, its memory keeps increasing, and the OS kills the process. Each permutation
# builds a new Keras model in the same TensorFlow graph. Model, data and sizes are ours.
import numpy as np
import talos
from keras.layers import Conv2D, Dense, Flatten, MaxPooling2D
from keras.models import Sequential


def image_model(x_train, y_train, x_val, y_val, params):
    model = Sequential()
    model.add(Conv2D(params["filters"], (3, 3), activation="relu", input_shape=(32, 32, 3)))
    model.add(MaxPooling2D())
    model.add(Flatten())
    model.add(Dense(params["dense"], activation="relu"))
    model.add(Dense(10, activation="softmax"))
    model.compile(optimizer="adam", loss="categorical_crossentropy", metrics=["acc"])
    history = model.fit(x_train, y_train, validation_data=(x_val, y_val),
                        epochs=params["epochs"], batch_size=params["batch_size"], verbose=0)
    return history, model


if __name__ == "__main__":
    x = np.random.rand(3000, 32, 32, 3).astype(np.float32)
    y = np.eye(10)[np.random.randint(0, 10, 3000)]
    params = {"filters": [16, 32, 64], "dense": [64, 128, 256],
              "batch_size": [32, 64], "epochs": [3, 5]}
    talos.Scan(x, y, params=params, model=image_model, dataset_name="terminal_scan")
