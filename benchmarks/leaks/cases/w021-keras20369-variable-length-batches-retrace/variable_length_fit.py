# Reproduction (our own minimal rewrite) of the situation in
# https://github.com/keras-team/keras/issues/20369 (Keras 3, TensorFlow backend, GPU).
# The model has one flexible input dimension and is trained batch by batch on inputs
# whose length changes from batch to batch; every new length retraces the train
# function, so training on the GPU is far slower than expected. The posted code is not
# in our copy: the model, the lengths and the sizes are ours.
import numpy as np
import keras

FEATURES = 16

inputs = keras.Input(shape=(None, FEATURES))
hidden = keras.layers.Conv1D(64, 5, padding="same", activation="relu")(inputs)
hidden = keras.layers.GlobalAveragePooling1D()(hidden)
outputs = keras.layers.Dense(1)(hidden)
model = keras.Model(inputs, outputs)
model.compile(optimizer="adam", loss="mse")

rng = np.random.default_rng(0)
for step in range(2000):
    length = int(rng.integers(50, 2000))
    batch = rng.normal(size=(32, length, FEATURES)).astype("float32")
    target = rng.normal(size=(32, 1)).astype("float32")
    model.train_on_batch(batch, target)
