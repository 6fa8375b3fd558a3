# Reproduction (our own minimal rewrite) of the code posted in
# https://github.com/tensorflow/tensorflow/issues/57982
# RAM grows per call of a trivial tf.function on TF 2.8-2.10, not on 2.5.
import tensorflow as tf


@tf.function
def pass_through(frame):
    return frame


frame = tf.zeros((6, 6, 7))
for step in range(100000000):
    if step % 20000 == 0:
        print("step", step)
    out = pass_through(frame)
