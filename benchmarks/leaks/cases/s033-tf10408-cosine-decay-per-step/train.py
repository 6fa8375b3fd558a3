# Reproduction of https://github.com/tensorflow/tensorflow/issues/10408 (comment of 2018-07-23)
# (minimal rewrite of the loop posted in the comment; names ours, the model and constants are ours).
# Reported: the training process is killed by the OOM killer after a while.
import numpy as np
import tensorflow as tf

LEARNING_RATE = 1e-3
LR_DECAY_STEPS = 1000
LEARNING_RATE_ALPHA = 0.01
DECAYED_LR_START = 100

cur_step = tf.placeholder(tf.int32, shape=[])
lr_in = tf.placeholder(tf.float32, shape=[])
features = tf.placeholder(tf.float32, [None, 32])
weights = tf.Variable(tf.zeros([32, 1]))
loss = tf.reduce_mean(tf.square(tf.matmul(features, weights) - 1.0))
train_op = tf.train.GradientDescentOptimizer(lr_in).minimize(loss)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    bno = 0
    while bno < 1000000:
        dlr = tf.train.cosine_decay_restarts(
            learning_rate=LEARNING_RATE,
            global_step=cur_step,
            first_decay_steps=LR_DECAY_STEPS,
            t_mul=1.0,
            m_mul=1.0,
            alpha=LEARNING_RATE_ALPHA
        )
        lr = sess.run([dlr], feed_dict={cur_step: bno - DECAYED_LR_START})[0]
        sess.run(train_op, feed_dict={lr_in: lr, features: np.random.rand(64, 32)})
        bno += 1
