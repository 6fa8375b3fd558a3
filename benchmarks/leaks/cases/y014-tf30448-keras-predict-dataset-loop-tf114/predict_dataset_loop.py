# Reproduction (our own minimal rewrite) of the example in
# https://github.com/tensorflow/tensorflow/issues/30448 (TF 1.14, graph mode, CPU):
# model.predict(x=dataset) called again and again on the same tf.data.Dataset; each call
# gets slower (0.04 s to 0.5 s within a minute) and memory keeps climbing, while predict on a
# NumPy array does not. The model and the data sizes are ours.
import time

import numpy as np
import tensorflow as tf

features = np.random.rand(256, 32).astype("float32")
dataset = tf.data.Dataset.from_tensor_slices(features).batch(32)

model = tf.keras.Sequential([
    tf.keras.layers.Dense(64, activation="relu", input_shape=(32,)),
    tf.keras.layers.Dense(1),
])
model.compile(optimizer="adam", loss="mse")

while True:
    started = time.time()
    model.predict(x=dataset, steps=8)
    print(time.time() - started)
