# Reproduction of https://github.com/tensorflow/tensorflow/issues/25073 (TF 1.11/1.12,
# tf.keras): one small Sequential model, recompiled before every fit() on the same
# single sample; fit() time grows with every round. Without the recompile it stays flat.
# Minimal rewrite of the posted script; the round count and optimizer are ours.
import time

import numpy as np
import tensorflow as tf
from tensorflow.keras.layers import Activation, Dense
from tensorflow.keras.models import Sequential

sample = np.array([[0, 1, 1, 1, 0, 0, 0, 1, 1, 1]])
target = np.array([[1, 0, 0, 0, 0, 0, 0, 0, 0, 0]])

model = Sequential()
init = tf.keras.initializers.TruncatedNormal(mean=0.0, stddev=0.05, seed=1)
model.add(Dense(25, input_dim=10, kernel_initializer=init, bias_initializer="zeros"))
model.add(Activation("relu"))
init = tf.keras.initializers.TruncatedNormal(mean=0.0, stddev=0.05, seed=2)
model.add(Dense(10, kernel_initializer=init, bias_initializer="zeros"))
model.add(Activation("softmax"))

for round_index in range(1000):
    model.compile(optimizer="sgd", loss="categorical_crossentropy")
    start = time.time()
    model.fit(sample, target, epochs=1, verbose=0)
    print(round_index, time.time() - start)
