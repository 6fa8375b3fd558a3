# Reproduction (our own minimal rewrite) of the situation reported in
# https://github.com/tensorflow/tensorflow/issues/42441 (TF 2.3): new small Keras models are
# created in rapid succession and each one is asked for predictions, and TensorFlow warns
# that calls to predict_function "triggered tf.function retracing". Sizes and names ours.
import numpy as np
import tensorflow as tf


def make_candidate(hidden_units):
    model = tf.keras.Sequential([
        tf.keras.Input(shape=(10,)),
        tf.keras.layers.Dense(hidden_units, activation="relu"),
        tf.keras.layers.Dense(1),
    ])
    model.compile(optimizer="adam", loss="mse")
    return model


features = np.random.rand(256, 10).astype(np.float32)
scores = []
for candidate_index in range(200):
    candidate = make_candidate(hidden_units=8 + candidate_index % 32)
    scores.append(float(candidate.predict(features, verbose=0).mean()))
print(len(scores))
