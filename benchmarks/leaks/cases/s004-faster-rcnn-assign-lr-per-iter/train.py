# Reproduction of https://github.com/smallcorgi/Faster-RCNN_TF/issues/10
# (minimal rewrite of the training loop quoted in the thread; names ours, network elided).
# Reported: seconds per iteration grow from 0.4 to 1 over 10000 iterations.
import numpy as np
import tensorflow as tf

BASE_LR = 0.001
GAMMA = 0.1
STEPSIZE = 50000


class Solver(object):
    def __init__(self, sess, loss, data):
        self.sess = sess
        self.loss = loss
        self.data = data

    def train_model(self, max_iters):
        sess = self.sess
        lr = tf.Variable(BASE_LR, trainable=False)
        train_op = tf.train.MomentumOptimizer(lr, 0.9).minimize(self.loss)
        sess.run(tf.global_variables_initializer())
        for step in range(max_iters):
            if step >= STEPSIZE:
                sess.run(tf.assign(lr, BASE_LR * GAMMA))
            else:
                sess.run(tf.assign(lr, BASE_LR))
            batch = self.data[step % len(self.data)]
            loss_value, _ = sess.run([self.loss, train_op], feed_dict={"data:0": batch})
            if (step + 1) % 10 == 0:
                print("iter %d loss %.4f lr %f" % (step + 1, loss_value, lr.eval()))


def train_net(max_iters=70000):
    images = tf.placeholder(tf.float32, [None, 64], name="data")
    weights = tf.Variable(tf.random_normal([64, 1]))
    loss = tf.reduce_mean(tf.square(tf.matmul(images, weights)))
    data = [np.random.rand(8, 64) for _ in range(10)]
    with tf.Session() as sess:
        Solver(sess, loss, data).train_model(max_iters)
