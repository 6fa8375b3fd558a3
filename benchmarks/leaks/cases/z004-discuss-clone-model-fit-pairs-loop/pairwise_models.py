# Reproduction (our own minimal rewrite) of the code posted in
# https://discuss.tensorflow.org/t/keras-model-memory-leak/19675 (TF 2.13, RTX 4090):
# for every pair of input features, two clones of one LSTM model are compiled and fitted
# with early stopping and a checkpoint, then deleted and garbage-collected.
# The posted per-pair datasets and statistics are elided ("..."); our stand-in datasets
# keep the shapes and zero one feature column.
import gc
from itertools import product

import numpy as np
import tensorflow as tf
from tensorflow.keras.layers import LSTM, Dense, Input

lag, n_features = 24, 13
x_train = np.random.rand(20000, lag, n_features).astype("float32")
x_valid = np.random.rand(4000, lag, n_features).astype("float32")


def pair_datasets(i, j):
    # stand-in for the posted "... # define different datasets"
    x_tr, x_va = x_train.copy(), x_valid.copy()
    x_tr[:, :, j] = 0.0
    x_va[:, :, j] = 0.0
    y_tr, y_va = x_train[:, -1, i:i + 1], x_valid[:, -1, i:i + 1]
    return x_tr, y_tr, x_va, y_va


l0 = Input(shape=(x_train.shape[1], x_train.shape[2]))
l1 = LSTM(32)(l0)
l2 = Dense(32, activation="relu")(l1)
l3 = Dense(1, activation="linear")(l2)
basic_model = tf.keras.Model(l0, l3)
stop_early = tf.keras.callbacks.EarlyStopping(patience=20)

for i, j in product(range(x_train.shape[2]), repeat=2):
    x_train_r, y_train_r, x_valid_r, y_valid_r = pair_datasets(i, j)
    x_train_ur, y_train_ur, x_valid_ur, y_valid_ur = pair_datasets(i, i)
    ur = tf.keras.models.clone_model(basic_model)
    ur.compile(optimizer="adam", loss="mse")
    sbm_ur = tf.keras.callbacks.ModelCheckpoint(f"raw/{i}_{j}_ur.h5", save_best_only=True)
    ur.fit(x_train_ur, y_train_ur, validation_data=(x_valid_ur, y_valid_ur), epochs=5000,
           batch_size=10000, callbacks=[stop_early, sbm_ur], verbose=0)
    r = tf.keras.models.clone_model(basic_model)
    r.compile(optimizer="adam", loss="mse")
    sbm_r = tf.keras.callbacks.ModelCheckpoint(f"raw/{i}_{j}_r.h5", save_best_only=True)
    r.fit(x_train_r, y_train_r, validation_data=(x_valid_r, y_valid_r), epochs=5000,
          batch_size=10000, callbacks=[stop_early, sbm_r], verbose=0)
    # ... statistical inference on the two fits (elided in the post)
    del r, ur
    del x_train_ur, y_train_ur, x_train_r, y_train_r, x_valid_ur, y_valid_ur, x_valid_r, y_valid_r
    gc.collect()
