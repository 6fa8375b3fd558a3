# Reproduction of https://github.com/tensorflow/tensorflow/issues/27511
# Our rewrite of the reporter's script (names ours, same calls): save ResNet50 to .h5, then load it
# 20 times in a profiled function that clears the Keras session first.
import os

import tensorflow as tf
import tensorflow.keras.backend as K
from memory_profiler import profile
from tensorflow.keras.applications import ResNet50
from tensorflow.keras.models import load_model

print(tf.__version__)
model_path = os.path.join(os.getcwd(), "model.h5")
ResNet50(weights='imagenet').save(model_path)


@profile
def load_keras_model(path):
    K.clear_session()
    model = load_model(path)
    return model


for i in range(20):
    print(i)
    load_keras_model(model_path)
