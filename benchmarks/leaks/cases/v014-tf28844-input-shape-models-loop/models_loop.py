# Reproduction of https://github.com/tensorflow/tensorflow/issues/28844
# (minimal rewrite of the posted script with the input shape given, names ours; the input
# width is ours).
# Reported: on TF 2.0.0-alpha0, creating and compiling 100 small Sequential models in a loop
# piles them up in memory when input_shape is given to the first layer (flat without it).
import time

from tensorflow import keras


def make_many(count=100, width=20):
    for _ in range(count):
        model = keras.models.Sequential()
        model.add(keras.layers.Dense(120, activation="relu", input_shape=(width,)))
        model.compile(loss="binary_crossentropy", optimizer=keras.optimizers.SGD())
        time.sleep(0.1)


if __name__ == "__main__":
    make_many()
