# Reproduction (our own minimal rewrite) of the Colab snippet posted in
# https://github.com/tensorflow/tensorflow/issues/46012 (TF 2.4). The same tiny model is
# built, compiled, fitted and used to predict six times in a loop; from the fifth round
# on, predict logs "5 out of the last 5 calls to predict_function triggered
# tf.function retracing".
import numpy as np
from keras import Sequential
from keras.layers import Dense, Input

inputs = np.random.uniform(-1, 1, size=(1, 1000))
target = np.array([[0.7974]])

for _ in range(6):
    regressor = Sequential([
        Input(shape=1000),
        Dense(1, activation="sigmoid"),
    ])
    regressor.compile(loss="mse", optimizer="adam")
    regressor.fit(inputs, target, batch_size=1, epochs=100, verbose=0)
    print(regressor.predict(inputs))
