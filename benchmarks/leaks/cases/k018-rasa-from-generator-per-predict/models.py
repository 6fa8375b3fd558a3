# Reproduction of https://github.com/RasaHQ/rasa/pull/5529
# Our minimal rewrite: the model's predict turns each one-message input into a dataset.
import tensorflow as tf


class DialogueModel(tf.keras.Model):
    def __init__(self, units):
        super().__init__()
        self.dense = tf.keras.layers.Dense(units)
        self._predict_function = None

    def batch_predict(self, batch_in):
        return {'action_scores': self.dense(batch_in)}

    def build_for_predict(self):
        self._predict_function = tf.function(self.batch_predict)

    def predict(self, predict_data):
        if self._predict_function is None:
            self.build_for_predict()
        predict_dataset = predict_data.as_tf_dataset(batch_size=1)
        batch_in = next(iter(predict_dataset))
        return self._predict_function(batch_in)
