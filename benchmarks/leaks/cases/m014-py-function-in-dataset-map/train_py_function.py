# Reproduction (our own minimal rewrite) of the situation in
# https://github.com/tensorflow/tensorflow/issues/61344 (TF 2.13): a tf.data pipeline whose map
# function calls tf.py_function; iterating it (here through model.fit) grows memory without
# bound, from under 3 GB in the first epoch to over 30 GB. The Python augmentation, model and
# sizes are ours.
import numpy as np
import tensorflow as tf


def numpy_augment(image):
    image = image.numpy()
    noise = np.random.normal(0.0, 0.05, size=image.shape).astype(np.float32)
    return np.clip(image + noise, 0.0, 1.0)


def augment(image, label):
    image = tf.py_function(numpy_augment, [image], tf.float32)
    image.set_shape([64, 64, 3])
    return image, label


images = np.random.rand(2000, 64, 64, 3).astype(np.float32)
labels = np.random.randint(0, 10, size=(2000,))

dataset = tf.data.Dataset.from_tensor_slices((images, labels))
dataset = dataset.map(augment).batch(32).prefetch(tf.data.AUTOTUNE)

model = tf.keras.Sequential([
    tf.keras.layers.Conv2D(16, 3, activation="relu", input_shape=(64, 64, 3)),
    tf.keras.layers.GlobalAveragePooling2D(),
    tf.keras.layers.Dense(10, activation="softmax"),
])
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
model.fit(dataset, epochs=100)
