# Reproduction (our own minimal rewrite) of the code posted in
# https://github.com/tensorflow/tensorflow/issues/34907 (TF 2.1rc0)
# predict_on_batch with a batch size that changes on every call.
import numpy as np
import tensorflow as tf

net = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=[1])])
net.compile(optimizer=tf.optimizers.Adam(), loss=tf.losses.MeanSquaredError())

for n in range(1, 300):
    net.predict_on_batch(np.ones([n, 1]))
