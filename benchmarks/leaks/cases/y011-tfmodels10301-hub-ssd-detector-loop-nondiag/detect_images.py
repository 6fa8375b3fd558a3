# Reproduction (our own minimal rewrite) of the code posted in
# https://github.com/tensorflow/models/issues/10301 (TF 2, Docker/Windows):
# an SSD MobileNet v2 detector loaded once from TF Hub, called on every image of a
# dataset, with del, gc.collect() and clear_session() after each image; RSS still
# grows linearly with the number of predictions. Image reading is ours.
import gc

import numpy as np
import tensorflow as tf
import tensorflow_hub as hub
from tensorflow.keras import backend as K

detector = hub.load("https://tfhub.dev/tensorflow/ssd_mobilenet_v2/2")


def read_image(path):
    data = tf.io.read_file(path)
    return tf.expand_dims(tf.io.decode_jpeg(data, channels=3), 0)


def run(image_paths):
    for path in image_paths:
        image = read_image(path)
        detections = detector(image)
        del detections, image
        gc.collect()
        K.clear_session()
