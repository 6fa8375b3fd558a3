# Reproduction of https://github.com/maxpumperla/hyperas/issues/16
# Our minimal rewrite, not the reporter's code (the reporter posted none): the search follows the
# hyperas template the maintainer quotes in the thread, whose model function returns the trained
# Keras model inside the hyperopt result dict. Names, layer sizes and max_evals are ours
# (the report: a mid-size network, memory exhausted after about 50 trials).
from hyperas import optim
from hyperas.distributions import choice, uniform
from hyperopt import STATUS_OK, Trials, tpe
from keras.datasets import mnist
from keras.layers.core import Activation, Dense, Dropout
from keras.models import Sequential
from keras.utils import np_utils


def data():
    (x_train, y_train), (x_test, y_test) = mnist.load_data()
    x_train = x_train.reshape(60000, 784).astype('float32') / 255
    x_test = x_test.reshape(10000, 784).astype('float32') / 255
    y_train = np_utils.to_categorical(y_train, 10)
    y_test = np_utils.to_categorical(y_test, 10)
    return x_train, y_train, x_test, y_test


def model(x_train, y_train, x_test, y_test):
    net = Sequential()
    net.add(Dense(512, input_shape=(784,)))
    net.add(Activation('relu'))
    net.add(Dropout({{uniform(0, 1)}}))
    net.add(Dense({{choice([256, 512, 1024])}}))
    net.add(Activation('relu'))
    net.add(Dropout({{uniform(0, 1)}}))
    net.add(Dense(10))
    net.add(Activation('softmax'))
    net.compile(loss='categorical_crossentropy', optimizer={{choice(['rmsprop', 'adam', 'sgd'])}})
    net.fit(x_train, y_train, batch_size={{choice([64, 128])}}, nb_epoch=1,
            show_accuracy=True, verbose=2, validation_data=(x_test, y_test))
    score, acc = net.evaluate(x_test, y_test, show_accuracy=True, verbose=0)
    return {'loss': -acc, 'status': STATUS_OK, 'model': net}


if __name__ == '__main__':
    trials = Trials()
    best_run = optim.minimize(model=model, data=data, algo=tpe.suggest, max_evals=100, trials=trials)
    print(best_run)
