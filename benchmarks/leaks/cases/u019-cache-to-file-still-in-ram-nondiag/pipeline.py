# Reproduction (our own minimal rewrite) of the pipeline posted in
# https://github.com/tensorflow/tensorflow/issues/56404 (TF 2.9): a generator of file paths
# and labels, decoded by a map, cached to a file, masked, shuffled. The generator, the map
# functions, sizes and the epoch loop are ours; the posted snippet gives only the chain.
import numpy as np
import tensorflow as tf

AUTOTUNE = tf.data.AUTOTUNE
class_count = 20
shuffle_buffer = 1000
cache_path = "/tmp/train_cache"


def labelled_paths():
    for index in range(50000):
        yield f"images/{index:06d}.png", np.eye(class_count, dtype=np.float32)[index % class_count]


def decode(path, label):
    image = tf.image.decode_png(tf.io.read_file(path), channels=3)
    return tf.image.resize(image, (224, 224)), label


def mask_border(image, label):
    return image * tf.pad(tf.ones((200, 200, 3)), [[12, 12], [12, 12], [0, 0]]), label


train = tf.data.Dataset.from_generator(labelled_paths, output_types=(tf.string, tf.float32),
                                       output_shapes=((), (class_count,)))
train = train.map(decode, num_parallel_calls=AUTOTUNE)
train = train.cache(cache_path)
train = train.map(mask_border, num_parallel_calls=AUTOTUNE)
train = train.shuffle(shuffle_buffer)

for epoch in range(10):
    for image, label in train.batch(32):
        pass
