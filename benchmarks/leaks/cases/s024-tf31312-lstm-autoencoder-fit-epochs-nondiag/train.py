# Reproduction of https://github.com/tensorflow/tensorflow/issues/31312 (comment of 2019-10-11)
# (minimal rewrite of the model and fit call posted in the thread; imports, data and names ours).
# Reported: RAM creeps up each epoch of one fit() call (97% of 16 GB by epoch 30) with TF 2.0, not with 1.14.
import numpy as np
from tensorflow.keras.layers import LSTM, Dense, RepeatVector, TimeDistributed
from tensorflow.keras.models import Sequential

timesteps, n_features = 20, 2
num_epochs = 100
data = np.random.rand(23764, timesteps, n_features).astype(np.float32)

model = Sequential()
# encoder
model.add(LSTM(32, activation="relu", input_shape=(timesteps, n_features), return_sequences=True))
model.add(LSTM(16, activation="relu", return_sequences=False))
model.add(RepeatVector(timesteps))
# decoder
model.add(LSTM(16, activation="relu", return_sequences=True))
model.add(LSTM(32, activation="relu", return_sequences=True))
model.add(TimeDistributed(Dense(n_features)))
model.compile(optimizer="adam", loss="mse")

model.fit(data, data, epochs=num_epochs, batch_size=32)
