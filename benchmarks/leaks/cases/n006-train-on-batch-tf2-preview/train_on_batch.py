# Reproduction (our own minimal rewrite) of the code posted in
# https://github.com/tensorflow/tensorflow/issues/28646 (TF 2.0 nightly, May 2019): a small
# functional conv net trained with model.train_on_batch allocates CPU memory without end;
# setting the learning phase to 1 helped on one nightly but not on later ones. Sizes ours.
import numpy as np
import tensorflow as tf


def conv(x, filters, kernel_size, strides=(1, 1), padding="same", initializer="he_normal"):
    x = tf.keras.layers.Conv2D(filters=filters, kernel_size=kernel_size, strides=strides,
                               padding=padding, kernel_initializer=initializer)(x)
    x = tf.keras.layers.BatchNormalization()(x)
    return tf.keras.layers.ReLU()(x)


def build_model(image_size=128, class_count=100):
    inputs = tf.keras.Input(shape=(image_size, image_size, 3))
    x = conv(inputs, 32, 3)
    x = conv(x, 64, 3, strides=(2, 2))
    x = conv(x, 128, 3, strides=(2, 2))
    x = tf.keras.layers.GlobalAveragePooling2D()(x)
    outputs = tf.keras.layers.Dense(class_count, activation="sigmoid")(x)
    return tf.keras.Model(inputs, outputs)


model = build_model()
model.compile(optimizer=tf.keras.optimizers.Adam(), loss="binary_crossentropy")

for step in range(100000):
    images = np.random.rand(16, 128, 128, 3).astype(np.float32)
    labels = np.random.randint(0, 2, (16, 100)).astype(np.float32)
    loss = model.train_on_batch(images, labels)
    if step % 100 == 0:
        print(step, loss)
