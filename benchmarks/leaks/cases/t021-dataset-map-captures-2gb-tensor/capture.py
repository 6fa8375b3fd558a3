# Reproduction (our own minimal rewrite) of the code described in
# https://github.com/tensorflow/tensorflow/issues/62788 (TF 2.15)
# A 2 GB tensor referenced by the function given to several chained Dataset.map calls.
import tensorflow as tf

table = tf.random.uniform((512, 1024, 1024), dtype=tf.float32)


def get_data(i):
    return tf.gather(table, i % 512)[0, 0]


ds = tf.data.Dataset.range(16)
for _ in range(8):
    ds = ds.map(get_data).map(lambda x: tf.cast(x, tf.int64))

for item in ds:
    pass
