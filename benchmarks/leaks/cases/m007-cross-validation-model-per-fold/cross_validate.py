# Reproduction (our own minimal rewrite) of the situation in
# https://github.com/keras-team/keras/issues/13975 (TF 2.0, tf.keras): cross-validation that
# builds and trains a new model for every fold and replicate keeps the memory of the earlier
# models; the reporter has to call clear_session() at the start of every fold. The model,
# data and fold counts are ours.
import gc

import numpy as np
import tensorflow as tf
from sklearn.model_selection import KFold

N_REPLICATES = 5
N_FOLDS = 10

features = np.random.rand(20000, 64).astype("float32")
labels = np.random.randint(0, 2, size=(20000, 1))


def build_model():
    model = tf.keras.Sequential([
        tf.keras.layers.Dense(256, activation="relu", input_shape=(64,)),
        tf.keras.layers.Dense(256, activation="relu"),
        tf.keras.layers.Dense(1, activation="sigmoid"),
    ])
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    return model


scores = []
for replicate in range(N_REPLICATES):
    folds = KFold(n_splits=N_FOLDS, shuffle=True, random_state=replicate)
    for train_index, test_index in folds.split(features):
        model = build_model()
        model.fit(features[train_index], labels[train_index], epochs=5, batch_size=128, verbose=0)
        scores.append(model.evaluate(features[test_index], labels[test_index], verbose=0))
        del model
        gc.collect()
