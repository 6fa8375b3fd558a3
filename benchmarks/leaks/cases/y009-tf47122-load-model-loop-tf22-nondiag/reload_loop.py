# Reproduction (our own minimal rewrite) of the code posted in
# https://github.com/tensorflow/tensorflow/issues/47122 (TF 2.2, Ubuntu VM with 4 GB):
# a function that loads a large Keras model, called forever in a while loop;
# the VM runs out of memory after about 40 minutes.
import tensorflow as tf

MODEL_PATH = "/large/model/file"


def start_process():
    model = tf.keras.models.load_model(MODEL_PATH)


while True:
    start_process()
