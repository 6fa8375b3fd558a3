# Reproduction of https://github.com/tensorflow/tensorflow/issues/700
# (minimal rewrite of the loop posted in the thread, Python 2 print made a call; names ours).
# Reported: creating and closing a session per iteration grows process memory and per-iteration time.
import time

import tensorflow as tf

for i in range(0, 10000000):
    t0 = time.clock()

    sess = tf.Session()

    a = tf.placeholder("int16", name="a")
    y = tf.identity(a, name="y")

    sess.run(y, feed_dict={a: 3})
    sess.close()

    print(time.clock() - t0)
