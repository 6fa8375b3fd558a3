# Reproduction of https://github.com/tensorflow/tensorflow/issues/80753 (also keras-team/keras#20552)
# Our rewrite of the reporter's script, not their code: names ours; same sizes, model, callbacks and
# per-iteration cleanup (del, clear_session, gc.collect); the elided data preparation is ours.
import gc
import os

import keras
import numpy as np
import psutil
from keras.callbacks import EarlyStopping, ModelCheckpoint
from keras.layers import LSTM, Dense, Dropout, Input
from keras.models import Sequential
from keras.optimizers import Adam
from sklearn.model_selection import train_test_split

num_samples = 6
num_features = 3
num_classes = 4
epochs = 50
batch_size = 2
num_iterations = 500


def memory_mb():
    return psutil.Process(os.getpid()).memory_info().rss / 1024 ** 2


def build_model(x, classes):
    model = Sequential()
    model.add(Input(shape=(x.shape[1], x.shape[2])))
    model.add(LSTM(16, return_sequences=True))
    model.add(LSTM(16))
    model.add(Dropout(0.4))
    model.add(Dense(8, activation='tanh'))
    model.add(Dense(classes, activation='softmax'))
    model.compile(loss='categorical_crossentropy', optimizer=Adam(0.001), metrics=['accuracy'])
    return model


for iteration in range(num_iterations):
    print(f'Iteration {iteration}/{num_iterations} start {memory_mb():.2f} MB')
    x = np.random.rand(num_samples, 10, num_features)
    y = keras.utils.to_categorical(np.random.randint(0, num_classes, num_samples), num_classes)
    x_train, x_val, y_train, y_val = train_test_split(x, y, test_size=0.33)
    model = build_model(x_train, num_classes)
    callbacks = [EarlyStopping(patience=5), ModelCheckpoint('test_model.keras', save_best_only=True)]
    model.fit(x_train, y_train, validation_data=(x_val, y_val), epochs=epochs,
              batch_size=batch_size, callbacks=callbacks, verbose=0)
    del model
    keras.backend.clear_session()
    gc.collect()
    print(f'end {memory_mb():.2f} MB')
