# Reproduction (our own minimal rewrite) of the situation in
# https://github.com/keras-team/keras/issues/19071 (TF 2.15 + Keras 3.0.2, Windows):
# a small tabular model trained with run_eagerly=True, a custom loss and Adam on about
# 829,215 rows and 8381 classes; a memory callback prints RSS at each epoch's start and end.
# The model and the loss are not in our copy: the layers, the feature count and the loss
# body below are ours; the row count, the class count and batch size 2048 follow the thread.
import os

import keras
import numpy as np
import psutil

row_count = 829_215
class_count = 8381
feature_count = 4
batch_size = 2048


class MemoryUsageCallback(keras.callbacks.Callback):
    def on_epoch_begin(self, epoch, logs=None):
        print("epoch", epoch, "begin rss", psutil.Process(os.getpid()).memory_info().rss)

    def on_epoch_end(self, epoch, logs=None):
        print("epoch", epoch, "end rss", psutil.Process(os.getpid()).memory_info().rss)


def presence_loss(y_true, y_pred):
    positive = keras.ops.sum(y_true * keras.ops.log(y_pred + 1e-5), axis=-1)
    negative = keras.ops.sum((1.0 - y_true) * keras.ops.log(1.0 - y_pred + 1e-5), axis=-1)
    return -keras.ops.mean(positive + negative / class_count)


features = np.random.rand(row_count, feature_count).astype("float32")
labels = keras.utils.to_categorical(np.random.randint(class_count, size=row_count), class_count)

model = keras.Sequential([
    keras.Input((feature_count,)),
    keras.layers.Dense(256, activation="relu"),
    keras.layers.Dense(256, activation="relu"),
    keras.layers.Dense(class_count, activation="sigmoid"),
])
model.compile(optimizer=keras.optimizers.Adam(), loss=presence_loss, run_eagerly=True)
model.fit(features, labels, batch_size=batch_size, epochs=10, callbacks=[MemoryUsageCallback()])
