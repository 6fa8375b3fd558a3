# Reproduction of https://github.com/tensorflow/tensorflow/issues/27414
# (minimal rewrite of the loop posted in the thread; names ours, model elided to one op).
# Reported: memory grows fast, every image set read stays in memory.
import numpy as np
import tensorflow as tf


def model_fn(images):
    return tf.reduce_mean(images, axis=[0, 1])


def load_images(path):
    return np.load(path)


def run(paths):
    iterator = tf.data.Iterator.from_structure(output_types=tf.float32, output_shapes=[1536, 1536, 2])
    output = model_fn(iterator.get_next())
    results = []
    with tf.Session() as sess:
        for path in paths:
            images = load_images(path)  # [10, 1536, 1536, 2] float32
            dataset = tf.data.Dataset.from_tensor_slices(tf.constant(images))
            sess.run(iterator.make_initializer(dataset))
            for _ in range(10):
                results.append(sess.run(output))
    return results
