# Reproduction of https://github.com/tensorflow/tensorflow/issues/29816
# (minimal rewrite of the example posted in the thread; the posted model code was elided, ours is a small Keras model).
# Reported: RSS grows every iteration of sess.run on a finalized graph (CPU build).
import os

import numpy as np
import psutil
import tensorflow as tf

graph = tf.Graph()
sess = tf.InteractiveSession(graph=graph)

with graph.as_default():
    inputs = tf.keras.layers.Input(shape=(224, 224, 3))
    features = tf.keras.layers.Conv2D(16, 3)(inputs)
    outputs = tf.keras.layers.GlobalAveragePooling2D()(features)
    model = tf.keras.models.Model(inputs=inputs, outputs=outputs)
    sess.run(tf.global_variables_initializer())

# freeze the graph so nothing can be added to it
graph.finalize()

img = np.ones((1, 224, 224, 3))

while True:
    sess.run(model.output, feed_dict={model.input: img})
    print(psutil.Process(os.getpid()).memory_info().rss)
