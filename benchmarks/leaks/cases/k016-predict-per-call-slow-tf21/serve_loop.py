# Reproduction of https://github.com/tensorflow/tensorflow/issues/40261
# Our minimal rewrite of the timing loop posted in the thread, not the reporter's code: the model
# layers are ours (an LSTM with dropout, as described); one-sample predict calls in a loop are kept.
import time

import numpy as np
import tensorflow as tf

model = tf.keras.Sequential([
    tf.keras.layers.LSTM(64, input_shape=(15, 60), return_sequences=True),
    tf.keras.layers.Dropout(0.2),
    tf.keras.layers.LSTM(64),
    tf.keras.layers.Dropout(0.2),
    tf.keras.layers.Dense(1),
])
model.compile(optimizer='adam', loss='mse')

start = time.time()
i = 0
while i < 100:
    model.predict(np.random.rand(1, 15, 60))
    i += 1
print('seconds per predict:', (time.time() - start) / 100)
