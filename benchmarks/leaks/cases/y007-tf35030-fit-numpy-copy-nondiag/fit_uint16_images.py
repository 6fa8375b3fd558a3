# Reproduction (our own minimal rewrite) of the test posted in
# https://github.com/tensorflow/tensorflow/issues/35030 (TF 2.0.0 and 2.1.0-rc0):
# 5000 uint16 images of 512x512 (about 2.5 GB) fed as NumPy arrays to model.fit of a
# one-convolution model; resident memory jumps by several GB inside fit.
import numpy as np
import tensorflow as tf

image_count = 5000
side = 512
max_signal = 5000

x_train = np.random.randint(max_signal + 1, size=(image_count, side, side, 1), dtype=np.uint16)
y_train = np.random.randint(2, size=(image_count, side, side, 1)).astype(bool)
x_val = np.random.randint(max_signal + 1, size=(image_count, side, side, 1), dtype=np.uint16)
y_val = np.random.randint(2, size=(image_count, side, side, 1)).astype(bool)

inputs = tf.keras.Input((side, side, 1))
scaled = tf.keras.layers.Lambda(lambda t: t / max_signal)(inputs)
outputs = tf.keras.layers.Conv2D(1, (3, 3), activation="sigmoid", padding="same")(scaled)
model = tf.keras.Model(inputs=[inputs], outputs=[outputs])

model.compile(optimizer=tf.keras.optimizers.Adam(), loss=tf.keras.losses.BinaryCrossentropy())
model.fit(x=x_train, y=y_train, validation_data=(x_val, y_val), batch_size=8, epochs=3)
