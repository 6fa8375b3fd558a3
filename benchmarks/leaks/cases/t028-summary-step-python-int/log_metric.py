# Reproduction (our own minimal rewrite) of the code posted in
# https://github.com/tensorflow/tensorflow/issues/34481 (TF 2.0, the tf.summary docs example)
# A traced summary function receives the Python loop counter as its step.
import tensorflow as tf

writer = tf.summary.create_file_writer("/tmp/mylogs/tf_function")


@tf.function
def log_metric(step):
    with writer.as_default():
        tf.summary.scalar("my_metric", 0.5, step=step)


for step in range(100):
    log_metric(step)
    writer.flush()
