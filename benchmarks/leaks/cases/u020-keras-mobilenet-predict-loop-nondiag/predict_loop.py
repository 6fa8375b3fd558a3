# Reproduction (our own minimal rewrite) of the code posted in
# https://github.com/keras-team/keras/issues/13118 (Keras 2.2.4, TF 1.12, macOS, CPU only):
# a MobileNetV2 loaded once, predicting one random image forever.
import keras
import numpy as np

net = keras.applications.mobilenet_v2.MobileNetV2()
image = np.random.rand(1, 224, 224, 3)

while True:
    scores = net.predict(image)[0]
