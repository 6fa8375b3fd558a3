# Reproduction of https://github.com/keras-team/keras/issues/7271
# (minimal rewrite of the experiment posted in the thread; names ours).
# Reported: a Keras server's memory and response time grow with each API call that loads the model.
import time

from keras.models import load_model
from pympler import asizeof

model_file = "model.h5"

for i in range(10):
    model = load_model(model_file)
    print(asizeof.asizeof(model))
    del model
    time.sleep(2)
