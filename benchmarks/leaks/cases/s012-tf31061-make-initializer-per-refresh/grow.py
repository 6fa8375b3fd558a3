# Reproduction of https://github.com/tensorflow/tensorflow/issues/31061
# (minimal rewrite of the setup described in the thread; names ours, model elided).
# Reported: each call of the refresh function creates new ops and memory grows.
import numpy as np
import tensorflow as tf

iterator = tf.data.Iterator.from_structure((tf.float32, tf.int64), (tf.TensorShape([None, 32, 32, 3]), tf.TensorShape([None])))
images_t, labels_t = iterator.get_next()
logits = tf.layers.dense(tf.layers.flatten(images_t), 10)
loss = tf.losses.sparse_softmax_cross_entropy(labels_t, logits)
train_op = tf.train.AdamOptimizer().minimize(loss)


def refresh_dataset(sess, imgs, labels):
    with tf.name_scope("dataset"):
        dataset = tf.data.Dataset.from_tensor_slices((imgs, labels)).shuffle(1000).batch(64)
    sess.run(iterator.make_initializer(dataset))


def train(rounds=100, steps=200):
    imgs = np.random.rand(5000, 32, 32, 3).astype(np.float32)
    labels = np.random.randint(0, 10, 5000)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(rounds):
            refresh_dataset(sess, imgs, labels)
            for _ in range(steps):
                try:
                    sess.run(train_op)
                except tf.errors.OutOfRangeError:
                    break
            new_imgs = np.random.rand(500, 32, 32, 3).astype(np.float32)
            imgs = np.concatenate([imgs, new_imgs])
            labels = np.concatenate([labels, np.random.randint(0, 10, 500)])
