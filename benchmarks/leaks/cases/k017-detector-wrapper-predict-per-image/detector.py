# Reproduction of https://github.com/tensorflow/tensorflow/issues/41404
# Our minimal rewrite of the steps described in the report, not the reporter's code: names and the
# image loop are ours; the compat.v1 session setup, load_model and per-image model.predict are kept.
import numpy as np
import tensorflow as tf


class Detector:
    def __init__(self, model_path):
        self.model_path = model_path
        config = tf.compat.v1.ConfigProto()
        config.gpu_options.per_process_gpu_memory_fraction = 0.25
        session = tf.compat.v1.Session(config=config)
        tf.compat.v1.keras.backend.set_session(session)
        self.model = tf.keras.models.load_model(self.model_path, compile=False)

    def detect(self, image_np):
        return self.model.predict(image_np)
