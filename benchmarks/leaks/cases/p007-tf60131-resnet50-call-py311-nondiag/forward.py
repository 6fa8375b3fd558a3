# Reproduction of https://github.com/tensorflow/tensorflow/issues/60131
# Our minimal rewrite of the posted memleak.py (TF 2.12.0, Python 3.11, CPU only), names ours:
# one ResNet50 built once, then called directly on the same single uint8 image in an endless
# loop while RSS is printed. The reporter notes VGG19 does not show the growth.
import numpy as np
import psutil
import tensorflow as tf

network = tf.keras.applications.ResNet50()

image = (np.random.rand(1, 224, 224, 3) * 255).astype('uint8')

for step in range(1, 9999999):
    network(image)
    rss_mib = psutil.Process().memory_info().rss / (1024 * 1024)
    print(f'RSS after {step} call(s): {rss_mib:.3f} MiB', flush=True)
