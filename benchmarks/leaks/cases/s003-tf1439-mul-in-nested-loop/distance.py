# Reproduction of https://github.com/tensorflow/tensorflow/issues/1439
# (minimal rewrite of the snippet posted in the thread; names ours).
# Reported: sess.run in this loop gets slower and slower.
import numpy as np
import tensorflow as tf

features = np.random.rand(128, 384).astype(np.float32)
codebook = np.random.rand(96, 32, 4).astype(np.float32)

a_in = tf.placeholder(tf.float32)
b_in = tf.placeholder(tf.float32)
sess = tf.Session()
for img in range(128):
    for sub in range(96):
        for cent in range(32):
            a = features[img, sub * 4:(sub + 1) * 4]
            b = codebook[sub, cent]
            product = tf.mul(a_in, b_in)
            total = tf.reduce_sum(product)
            value = sess.run(total, feed_dict={a_in: a, b_in: b})
            print(value)
