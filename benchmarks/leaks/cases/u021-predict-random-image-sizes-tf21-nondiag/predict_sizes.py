# Reproduction (our own minimal rewrite) of the script posted in
# https://github.com/tensorflow/tensorflow/issues/38598 (TF 2.1, CPU): a fully convolutional
# model predicting images of a random size each time, logging RSS before every prediction.
import os

import numpy as np
import psutil

os.environ["CUDA_VISIBLE_DEVICES"] = "-1"
import tensorflow as tf  # noqa: E402

print(tf.version.GIT_VERSION, tf.version.VERSION)

image_in = tf.keras.layers.Input((None, None, 3))
features = tf.keras.layers.Conv2D(filters=64, kernel_size=(3, 3), padding="same")(image_in)
conv_net = tf.keras.models.Model(inputs=image_in, outputs=features)

for count in range(10000):
    rss_mib = psutil.Process().memory_info().rss / (1024 * 1024)
    print(f"Memory usage after {count} prediction(s): {rss_mib:.3f} MiB", flush=True)
    height_width = np.random.randint(128, 1024, (2,)).tolist()
    picture = np.random.uniform(0, 256, [*height_width, 3])
    conv_net.predict(picture[np.newaxis])
