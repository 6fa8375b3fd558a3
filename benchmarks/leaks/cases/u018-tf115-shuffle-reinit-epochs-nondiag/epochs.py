# Reproduction (our own minimal rewrite) of the code posted in
# https://github.com/tensorflow/tensorflow/issues/35132 (TF 1.12 and 1.15): a generator
# dataset with a shuffle buffer, re-initialized for each of 100 epochs in one session.
import numpy as np
import tensorflow as tf


def feature_rows():
    for _ in range(250):
        for _ in range(100):
            yield "a", "b", np.random.randn(300, 120)


def passthrough(first, second, features):
    return first, second, features


rows = tf.data.Dataset.from_generator(feature_rows, (tf.string, tf.string, tf.float32))
rows = rows.shuffle(20000)
rows = rows.batch(200, drop_remainder=True)
rows = rows.map(passthrough)
row_iter = rows.make_initializable_iterator()
next_rows = row_iter.get_next()

session_config = tf.ConfigProto()
session_config.gpu_options.allow_growth = True
with tf.Session(config=session_config) as sess:
    for epoch in range(100):
        sess.run(row_iter.initializer)
        while True:
            try:
                fetched = sess.run([next_rows])
                print(len(fetched[0]))
            except tf.errors.OutOfRangeError:
                break
