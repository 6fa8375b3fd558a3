# Reproduction (our own minimal rewrite) of the situation in
# https://github.com/jupyter/notebook/issues/3390 (Jupyter 5.0, Python 2.7, Keras on TensorFlow,
# GPU): notebook cells that build and train a small Keras network are executed again and again
# to test different parameters; each re-run trains slower until the kernel is restarted.
# The cells are written here as "# %%" blocks; the network, data and parameters are ours.
# %%
import numpy as np
from keras.layers import Dense
from keras.models import Sequential

x_train = np.random.rand(2000, 50)
y_train = np.random.randint(2, size=(2000, 1))

# %%  (re-executed with a new hidden size and learning rate each time)
hidden_units = 64
model = Sequential()
model.add(Dense(hidden_units, activation="relu", input_dim=50))
model.add(Dense(1, activation="sigmoid"))
model.compile(optimizer="adam", loss="binary_crossentropy")
model.fit(x_train, y_train, epochs=20, batch_size=32, verbose=0)
