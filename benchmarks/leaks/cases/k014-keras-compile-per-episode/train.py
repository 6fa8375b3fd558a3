# Reproduction of https://github.com/keras-team/keras/issues/9151
# Our minimal rewrite of the posted snippet, not the reporter's code: names and the elided
# layers are ours; the model is built once and compiled and fitted inside the episode loop.
import numpy as np
from keras.models import Sequential
from keras.layers import Dense
import keras.backend as K

episodes = 1000
x = np.random.rand(256, 20)
y = np.random.rand(256, 5)


def custom_loss(y_true, y_pred):
    return K.mean(K.square(y_pred - y_true), axis=-1)


model = Sequential()
model.add(Dense(64, activation='relu', input_dim=20))
model.add(Dense(5))

for i in range(episodes):
    model.compile(loss=custom_loss, optimizer='rmsprop')
    model.fit(x, y, verbose=0)
