# Reproduction of https://github.com/keras-team/keras-tuner/issues/395
# (minimal rewrite of the model builder posted in the thread, before the clear_session
# workaround a commenter added; names ours). Reported: a Hyperband search eats about
# 1 GB of RAM every 20 trials. The data, its sizes and the search settings are ours.
import keras_tuner
import numpy as np
import tensorflow as tf
from tensorflow.keras.layers import Dense, Dropout
from tensorflow.keras.models import Sequential

features = np.random.rand(20000, 30).astype("float32")
targets = np.random.rand(20000, 1).astype("float32")


def model_builder(hp):
    model = Sequential()
    drop = hp.Float("drop", min_value=0, max_value=0.2, step=0.025)
    model.add(Dense(128, activation="relu"))
    model.add(Dropout(drop))
    model.add(Dense(1, activation="relu"))
    model.compile(
        loss="mean_absolute_error",
        optimizer=tf.keras.optimizers.Adam(0.001),
        metrics=["mean_absolute_percentage_error"],
    )
    return model


if __name__ == "__main__":
    tuner = keras_tuner.Hyperband(model_builder, objective="val_loss", max_epochs=50,
                                  directory="tuning", project_name="hyperband_ram")
    tuner.search(features, targets, validation_split=0.2, epochs=50)
