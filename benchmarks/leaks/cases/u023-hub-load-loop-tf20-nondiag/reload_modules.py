# Reproduction (our own minimal rewrite) of the code posted in
# https://github.com/tensorflow/hub/issues/472 (TF 2.0, tensorflow-hub 0.7): loading the
# same hub module repeatedly, and building a Keras model around a hub layer repeatedly,
# with del and gc.collect() after each; RSS is recorded per iteration.
import gc
import os

import psutil
import tensorflow as tf
import tensorflow_hub as hub
import tensorflow_text  # noqa: F401  (registers the ops the module needs)

MODULE_URL = "https://tfhub.dev/google/universal-sentence-encoder-large/5"
process = psutil.Process(os.getpid())

rss_gb = [process.memory_info().rss / (1024.0 ** 3)]
for _ in range(10):
    encoder = hub.load(MODULE_URL)
    del encoder
    gc.collect()
    rss_gb.append(process.memory_info().rss / (1024.0 ** 3))


def sentence_model():
    text = tf.keras.layers.Input(shape=[], dtype=tf.string)
    embedding = hub.KerasLayer(MODULE_URL, input_shape=[], dtype=tf.string, trainable=True)
    return tf.keras.models.Model(inputs=text, outputs=embedding(text))


rss_gb = [process.memory_info().rss / (1024.0 ** 3)]
for _ in range(10):
    model = sentence_model()
    del model
    gc.collect()
    rss_gb.append(process.memory_info().rss / (1024.0 ** 3))
print(rss_gb)
