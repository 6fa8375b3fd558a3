# Reproduction (our own minimal rewrite) of the augmenter in
# https://github.com/apple/turicreate/issues/2726 ("TF image augmenter leaks memory", fixed by
# PR #2728 "Use a fresh tf.Graph for each data augmentation batch"): a function called once per
# training batch opens a session on the default graph and builds its augmentation ops there,
# so the default graph grows with every batch. The augmentation itself is simplified.
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_eager_execution()


def get_augmented_data(images, annotations, output_height, output_width):
    output_shape = (output_height, output_width)
    tf.logging.set_verbosity(tf.logging.ERROR)

    session = tf.Session()
    image_ph = tf.placeholder(tf.float32, shape=[None, None, 3])
    flipped = tf.image.random_flip_left_right(image_ph)
    jittered = tf.image.random_brightness(flipped, max_delta=0.1)
    resized = tf.image.resize_images(jittered, output_shape)

    augmented_images = []
    for image in images:
        augmented_images.append(session.run(resized, feed_dict={image_ph: image}))
    return np.array(augmented_images, dtype=np.float32), annotations
