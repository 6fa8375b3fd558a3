# Reproduction of https://github.com/tensorflow/tensorflow/issues/15802
# (minimal rewrite of the posted script, names ours; the memory_profiler decorators and the
# marker function are dropped).
# Reported: stacking two decoded images 300 times in one session keeps increasing memory;
# memory_profiler points at tf.stack.
import glob

import tensorflow as tf


def stack_pair(pattern="car_images/*.jpg", repeats=300):
    paths = glob.glob(pattern)
    sess = tf.Session()
    for _ in range(repeats):
        first_bytes = tf.gfile.FastGFile(paths[0], "rb").read()
        second_bytes = tf.gfile.FastGFile(paths[1], "rb").read()
        first = tf.image.decode_image(first_bytes, channels=3)
        second = tf.image.decode_image(second_bytes, channels=3)
        pair = tf.stack([first, second])
        stacked = sess.run(pair)
    return stacked


if __name__ == "__main__":
    stack_pair()
