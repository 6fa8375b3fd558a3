# Reproduction of https://github.com/keras-team/keras/issues/21090
# Our rewrite of the reporter's example (names ours, same data sizes, model and cleanup calls):
# a fresh dense model is built and fitted per run, followed by clear_session and gc.collect.
import gc

import numpy as np
import psutil
import tensorflow as tf

gc.collect()

num_samples = 5000
num_features = 100
X = np.random.randn(num_samples, num_features)
y = (np.sum(X, axis=1) > 0).astype(int)


def create_model():
    model = tf.keras.models.Sequential([
        tf.keras.layers.InputLayer(shape=(num_features,)),
        tf.keras.layers.Dense(2000, activation='relu'),
        tf.keras.layers.Dense(2000, activation='relu'),
        tf.keras.layers.Dense(1, activation='sigmoid'),
    ])
    model.compile(optimizer='adam', loss='binary_crossentropy', metrics=['accuracy'])
    return model


for run in range(20):
    model = create_model()
    model.fit(X, y, epochs=3, batch_size=64, verbose=0)
    del model
    tf.keras.backend.clear_session()
    gc.collect()
    print(run, psutil.Process().memory_info().rss / 1024 ** 2, 'MB')
