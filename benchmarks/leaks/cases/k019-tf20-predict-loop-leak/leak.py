# Reproduction of https://github.com/tensorflow/tensorflow/issues/33009
# Our rewrite of the reporter's minimal script (names ours, same model, input and loop):
# a tiny functional model, then predict on one dummy sample forever.
import numpy as np
from tensorflow.keras import Input, Model
from tensorflow.keras.layers import Dense

inputs = Input(shape=(10,))
hidden = Dense(32)(inputs)
outputs = Dense(2)(hidden)

model = Model(inputs=inputs, outputs=outputs)
model.compile(optimizer='adam', loss='mse')

sample = np.random.uniform(low=0, high=1.0, size=(1, 10))

while True:
    model.predict(sample)
