# Reproduction (our own minimal rewrite) of the code posted in
# https://github.com/tensorflow/tensorflow/issues/20062 (TF 1.9.0-rc0, eager)
# A dense layer and a tf.losses loss computed under a tape, 100000 times.
import tensorflow as tf

tf.enable_eager_execution()

dense = tf.keras.layers.Dense(5)
features = tf.zeros([32, 100], tf.float32)
targets = tf.zeros([32], tf.int64)

for step in range(100000):
    with tf.GradientTape() as tape:
        scores = dense(features)
        loss = tf.losses.sparse_softmax_cross_entropy(targets, scores)
