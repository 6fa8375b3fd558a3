# Reproduction of https://github.com/keras-team/keras/issues/19471
# Our rewrite of the reporter's snippet (names ours, same calls): a keras.applications VGG16 is
# created 200 times, with the session cleared before each, as in a parametrized test.
import os

os.environ["KERAS_BACKEND"] = "tensorflow"
import keras

for i in range(200):
    keras.backend.clear_session()
    network = keras.applications.vgg16.VGG16()
    depth = len(network.layers)
    del network
    print(depth)
