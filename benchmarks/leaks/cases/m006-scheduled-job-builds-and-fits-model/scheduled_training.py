# Reproduction (our own minimal rewrite) of the code posted in
# https://github.com/agronholm/apscheduler/issues/600 (TF 2.9, APScheduler 3.9 in Docker):
# a scheduled job builds, compiles and trains a tiny Keras model and predicts with it; RSS
# measured around each run grows by several MB per run, and TensorFlow warns that calls to
# the predict function trigger retracing.
import os
from functools import wraps

import numpy as np
import psutil
import tensorflow as tf
from tensorflow import keras
from apscheduler.schedulers.blocking import BlockingScheduler
from apscheduler.triggers.interval import IntervalTrigger


def memory(func):
    @wraps(func)
    def wrapper(*args, **kwargs):
        before = psutil.Process(os.getpid()).memory_info().rss / 1024 / 1024
        print(f"before {func.__name__}: {before:.4f} MB")
        result = func(*args, **kwargs)
        after = psutil.Process(os.getpid()).memory_info().rss / 1024 / 1024
        print(f"after {func.__name__}: {after:.4f} MB")
        return result
    return wrapper


@memory
def train_and_predict():
    xs = np.array([-1.0, 0.0, 1.0, 2.0, 3.0, 4.0], dtype=float)
    ys = np.array([-3.0, -1.0, 1.0, 3.0, 5.0, 7.0], dtype=float)

    model = tf.keras.Sequential([keras.layers.Dense(units=1, input_shape=[1])])
    model.compile(optimizer="sgd", loss="mean_squared_error")
    model.fit(xs, ys, epochs=5000, verbose=0)
    print(model.predict(np.array([10.0])))


scheduler = BlockingScheduler()
scheduler.add_job(train_and_predict, IntervalTrigger(seconds=5))
scheduler.start()
