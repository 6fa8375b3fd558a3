# Reproduction of https://github.com/tensorflow/tensorflow/issues/42022
# (minimal rewrite of the repro posted in the thread; names ours).
# Reported: graphs built in a fresh tf.Graph per iteration are never garbage-collected (RSS grows).
import gc

import psutil
import tensorflow as tf

FIX_LEAK = False


def rss():
    return psutil.Process().memory_info().rss


def one_iteration():
    with tf.Graph().as_default() as graph:
        inputs = tf.keras.Input(shape=(8,), dtype="int32")
        embedded = tf.keras.layers.Embedding(input_dim=128, output_dim=128, input_length=8)(inputs)
        tf.keras.layers.LSTM(256, dropout=0.5)(embedded)
    if FIX_LEAK:
        # workaround from the thread: drop the backend's entry for the graph
        tf.keras.backend._GRAPH_LEARNING_PHASES.pop(graph, None)


for step in range(100):
    one_iteration()
    gc.collect()
    print(step, rss())
