# Reproduction of https://github.com/keras-team/keras/issues/3579
# No code was posted; our minimal rewrite of the described notebook cell: a parameter search whose
# helper builds a new Sequential model on every iteration, 40 iterations, no session clearing.
import numpy as np
from keras.layers import Dense, Dropout
from keras.models import Sequential

x_train = np.random.rand(20000, 100)
y_train = np.random.randint(0, 2, size=(20000, 1))


def train_candidate(units, dropout):
    model = Sequential()
    model.add(Dense(units, activation='relu', input_dim=100))
    model.add(Dropout(dropout))
    model.add(Dense(1, activation='sigmoid'))
    model.compile(optimizer='adam', loss='binary_crossentropy', metrics=['accuracy'])
    history = model.fit(x_train, y_train, epochs=5, batch_size=128, verbose=0)
    return history.history['acc'][-1]


results = {}
for trial in range(40):
    units = int(np.random.choice([64, 128, 256]))
    dropout = float(np.random.choice([0.1, 0.3, 0.5]))
    results[(trial, units, dropout)] = train_candidate(units, dropout)
