# Reproduction (our own minimal rewrite) of the measurement described in
# https://github.com/keras-team/keras/issues/20411 (Keras 3, JAX backend, Colab gist).
# MobileNetV2 is compiled with steps_per_execution of 1, 5, 10 and 20 and run; the model
# is traced once per step of an execution, so compile time and memory grow with the
# setting (622 MB at 1, 6337 MB at 20). The gist is not in our copy: the data, the
# epochs and the fit call are ours.
import os

os.environ["KERAS_BACKEND"] = "jax"

import keras
import numpy as np

images = np.random.rand(64, 224, 224, 3).astype("float32")
labels = np.random.randint(0, 1000, size=(64,))

for steps in (1, 5, 10, 20):
    network = keras.applications.MobileNetV2(weights=None)
    network.compile(
        optimizer="adam",
        loss="sparse_categorical_crossentropy",
        steps_per_execution=steps,
    )
    network.fit(images, labels, batch_size=2, epochs=1, verbose=0)
