# Reproduction of https://github.com/tensorflow/tensorflow/issues/7127
# (minimal rewrite of the two fetches described in the thread; the input pipeline and
# the network are small stand-ins of ours, names ours).
# Reported: fetching epoch[0] together with the train step runs at ~15 examples/s and
# slowly fills RAM; fetching epoch itself runs at ~100 examples/s and stays flat.
import tensorflow as tf


def input_pipeline(batch_size):
    epoch = tf.Variable([0], trainable=False, name="epoch")
    labels = tf.random_uniform([batch_size], maxval=10, dtype=tf.int32)
    images = tf.random_uniform([batch_size, 64, 64, 3])
    return epoch, labels, images


def train(num_steps=100000, batch_size=32):
    epoch, labels, images = input_pipeline(batch_size)
    logits = tf.layers.dense(tf.layers.flatten(images), 10)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    train_step = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    for _ in range(num_steps):
        current_epoch, _ = sess.run([epoch[0], train_step])
    return current_epoch


if __name__ == "__main__":
    train()
