# Reproduction (our own minimal rewrite) of the situation in
# https://github.com/tensorflow/tensorflow/issues/40171 (TF 2.2, Colab): a Keras model is
# saved with tf.saved_model.save, then repeatedly loaded with tf.saved_model.load and
# deleted, as a dynamic model server that loads and unloads models would do.
# The posted gist is not in our copy; the model and the loop count are ours.
import gc
import os

import psutil
import tensorflow as tf

export_dir = "/tmp/reload_model"


def build_and_export():
    model = tf.keras.Sequential([
        tf.keras.layers.Dense(256, activation="relu", input_shape=(64,)),
        tf.keras.layers.Dense(256, activation="relu"),
        tf.keras.layers.Dense(10),
    ])
    tf.saved_model.save(model, export_dir)


def serve_once(path):
    loaded = tf.saved_model.load(path)
    infer = loaded.signatures["serving_default"]
    infer(tf.zeros([1, 64]))
    del infer, loaded
    gc.collect()


if __name__ == "__main__":
    build_and_export()
    process = psutil.Process(os.getpid())
    for i in range(500):
        tf.keras.backend.clear_session()
        serve_once(export_dir)
        if i % 50 == 0:
            print(i, process.memory_info().rss // 2 ** 20, "MiB")
