# Reproduction (our own minimal rewrite) of the script posted in
# https://github.com/keras-team/keras/issues/13337 (Keras 2.2.5, TensorFlow 1.14 backend).
# After the MNIST CNN example has trained and saved its model, the model is loaded
# again and run on the test set ten times in a row; every round takes longer than the
# previous one and the process keeps growing. The example's training is elided here:
# a small untrained CNN of the same layout stands in for it.
import os
from time import time

import numpy as np
import psutil
from keras.layers import Conv2D, Dense, Dropout, Flatten, MaxPooling2D
from keras.models import Sequential, load_model

x_test = np.random.rand(10000, 28, 28, 1).astype("float32")

cnn = Sequential([
    Conv2D(32, (3, 3), activation="relu", input_shape=(28, 28, 1)),
    Conv2D(64, (3, 3), activation="relu"),
    MaxPooling2D(pool_size=(2, 2)),
    Dropout(0.25),
    Flatten(),
    Dense(128, activation="relu"),
    Dropout(0.5),
    Dense(10, activation="softmax"),
])
cnn.compile(loss="categorical_crossentropy", optimizer="adadelta", metrics=["accuracy"])
cnn.save("model_mnist.h5")


def print_rss():
    print(psutil.Process(os.getpid()).memory_info().rss)


for _ in range(10):
    model = load_model("model_mnist.h5")
    started = time()
    y_pred = model.predict(x_test)
    print(f"predict took {time() - started:.2f}s")
    print_rss()
