# Reproduction (our own minimal rewrite) of the usage fixed upstream by
# https://github.com/keras-team/keras/pull/20779 ("Fix memory leaks in `model.evaluate`",
# Keras 3.8): evaluate() created a History attached to the model and a callback thread pool
# that was never shut down, so calling evaluate repeatedly on one model kept memory growing.
# The model, data and number of calls are ours.
import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras
import numpy as np

x_val = np.random.rand(2048, 32).astype("float32")
y_val = np.random.randint(0, 10, size=(2048,))

model = keras.Sequential([
    keras.Input(shape=(32,)),
    keras.layers.Dense(128, activation="relu"),
    keras.layers.Dense(10, activation="softmax"),
])
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])

for round_index in range(5000):
    loss, accuracy = model.evaluate(x_val, y_val, batch_size=256, verbose=0)
