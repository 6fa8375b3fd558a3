# Reproduction (our own minimal rewrite) of the situation described in
# https://github.com/ina-foss/inaFaceAnalyzer/issues/23 (inaFaceAnalyzer, TF 2.x Keras): the
# test suite creates a new analyzer object, which builds its Keras classifier, for each test
# and runs predict on face batches, and TensorFlow warns "5 out of the last 9 calls to
# predict_function triggered tf.function retracing". Classes, model and sizes are ours.
import numpy as np
import tensorflow as tf


def build_face_classifier():
    return tf.keras.Sequential([
        tf.keras.Input(shape=(64, 64, 3)),
        tf.keras.layers.Conv2D(16, 3, activation="relu"),
        tf.keras.layers.GlobalAveragePooling2D(),
        tf.keras.layers.Dense(2, activation="softmax"),
    ])


class FaceAnalyzer:
    def __init__(self, batch_len=32):
        self.classifier = build_face_classifier()
        self.batch_len = batch_len

    def __call__(self, faces):
        return self.classifier.predict(faces, batch_size=self.batch_len)


def test_single_image():
    analyzer = FaceAnalyzer()
    assert analyzer(np.random.rand(1, 64, 64, 3)).shape == (1, 2)


def test_video_frames():
    analyzer = FaceAnalyzer()
    assert analyzer(np.random.rand(40, 64, 64, 3)).shape == (40, 2)


def test_small_batches():
    analyzer = FaceAnalyzer(batch_len=8)
    for _ in range(5):
        assert analyzer(np.random.rand(3, 64, 64, 3)).shape == (3, 2)
