# Reproduction of https://github.com/tensorflow/tensorflow/issues/26108
# (minimal rewrite of the posted script, names ours).
# Reported: on the TF 2.0 nightlies of February 2019, compiling the same small model again and
# again raises memory by about 20 MB at a time; found in a genetic algorithm that generates,
# compiles and tests many models.
import tensorflow as tf


def build():
    return tf.keras.models.Sequential([
        tf.keras.layers.Flatten(input_shape=(28, 28)),
        tf.keras.layers.Dense(512, activation=tf.nn.relu),
        tf.keras.layers.Dropout(0.2),
        tf.keras.layers.Dense(10, activation=tf.nn.softmax),
    ])


def recompile(model, times=100000):
    for _ in range(times):
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])


if __name__ == "__main__":
    recompile(build())
