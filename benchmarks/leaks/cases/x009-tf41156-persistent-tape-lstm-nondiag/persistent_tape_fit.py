# Reproduction of https://github.com/tensorflow/tensorflow/issues/41156 (TF 2.2):
# a model with an LSTM layer whose custom train_step (adapted from the Keras guide
# "Customizing what happens in fit") records with tf.GradientTape(persistent=True).
# fit() hangs on the first batch while the process slowly uses all RAM; persistent=False
# trains normally. The posted code is a Colab notebook not in our copy: the layer sizes,
# data and epochs below are ours.
import numpy as np
import tensorflow as tf


class PersistentTapeModel(tf.keras.Model):
    def train_step(self, data):
        x, y = data
        with tf.GradientTape(persistent=True) as tape:
            y_pred = self(x, training=True)
            loss = self.compiled_loss(y, y_pred, regularization_losses=self.losses)
        gradients = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
        self.compiled_metrics.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}


inputs = tf.keras.Input(shape=(20, 8))
hidden = tf.keras.layers.LSTM(32)(inputs)
outputs = tf.keras.layers.Dense(1)(hidden)
model = PersistentTapeModel(inputs, outputs)
model.compile(optimizer="adam", loss="mse", metrics=["mae"])

x = np.random.random((1000, 20, 8)).astype("float32")
y = np.random.random((1000, 1)).astype("float32")
model.fit(x, y, epochs=3)
