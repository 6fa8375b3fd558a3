# Reproduction of https://github.com/tensorflow/tensorflow/issues/41474 (TF 2.2, Jupyter):
# the CycleGAN tutorial's input pipeline adapted to the reporter's own 1024x1024 photos;
# the IPython kernel dies silently once training starts. Minimal rewrite of the posted
# pipeline (list_files per split, decode, resize to 1144 with nearest neighbour, random
# crop back to 1024, random flip, normalise to [-1, 1], shuffle with BUFFER_SIZE = 1000,
# batch 1), names ours; the file loading details and the training loop are ours.
import tensorflow as tf

BUFFER_SIZE = 1000
BATCH_SIZE = 1
IMG_WIDTH = 1024
IMG_HEIGHT = 1024
AUTOTUNE = tf.data.experimental.AUTOTUNE


def random_crop(image):
    return tf.image.random_crop(image, size=[IMG_HEIGHT, IMG_WIDTH, 3])


def normalize(image):
    image = tf.cast(image, tf.float32)
    return (image / 127.5) - 1


def random_jitter(image):
    image = tf.image.resize(image, [1144, 1144], method=tf.image.ResizeMethod.NEAREST_NEIGHBOR)
    image = random_crop(image)
    return tf.image.random_flip_left_right(image)


def process_path(file_path):
    image = tf.io.decode_jpeg(tf.io.read_file(file_path), channels=3)
    return normalize(random_jitter(image))


def make_split(pattern):
    files = tf.data.Dataset.list_files(pattern)
    images = files.map(process_path, num_parallel_calls=AUTOTUNE)
    return images.shuffle(BUFFER_SIZE).batch(BATCH_SIZE)


train_rgb = make_split("/data/cyclegan/trainA/*.jpg")
train_thermal = make_split("/data/cyclegan/trainB/*.jpg")

for epoch in range(40):
    for rgb, thermal in tf.data.Dataset.zip((train_rgb, train_thermal)):
        pass  # the generator and discriminator steps of the tutorial go here
