# Reproduction of https://github.com/keras-team/keras/issues/2973
# (minimal rewrite of the code posted in the thread; names ours, the copy loop is ours).
# Reported: copying weights from one model to another with set_weights(get_weights()) leaks memory each time.
import gc
import resource

from keras import backend as K
from keras.layers.core import Dense
from keras.models import Sequential
from keras.optimizers import rmsprop


class QModel(object):
    """Keras Sequential model with its optimizer."""

    def __init__(self, io_shape=None):
        if io_shape is None:
            raise TypeError("io_shape must be a tuple (in_size, out_size)")
        self.model = Sequential()
        self.model.add(Dense(512, input_shape=(io_shape[0],), activation="relu"))
        self.model.add(Dense(512, activation="relu"))
        self.model.add(Dense(io_shape[1], activation="linear"))
        self.optimizer = rmsprop(lr=0.001)
        self.model.compile(optimizer=self.optimizer, loss="mse")

    def get_lr(self):
        return K.get_value(self.optimizer.lr)

    def set_lr(self, lr):
        K.set_value(self.optimizer.lr, lr)


online = QModel(io_shape=(32, 16))
target = QModel(io_shape=(32, 16))

for step in range(1000):
    target.model.set_weights(online.model.get_weights())
    gc.collect()
    print(step, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
