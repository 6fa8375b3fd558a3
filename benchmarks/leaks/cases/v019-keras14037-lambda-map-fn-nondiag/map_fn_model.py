# Reproduction of https://github.com/keras-team/keras/issues/14037
# (minimal rewrite of the posted script, names ours; the callback's body and the epoch count
# are ours where the excerpt ends).
# Reported: Keras 2.3.1 on TF 2.2.0-rc3: training a model whose Lambda layer runs tf.map_fn
# over a @tf.function that stacks 40 copies of each row's first element leaks memory epoch
# after epoch, even with a callback that runs gc.collect().
import gc

import keras
import numpy as np
import tensorflow as tf


@tf.function
def repeat_first(row):
    return tf.stack([row[0]] * 40, axis=0)


def build(embedding_matrix):
    tokens = keras.layers.Input(shape=(40,))
    embedded = keras.layers.Embedding(4592, 300, weights=[embedding_matrix], input_length=40,
                                      trainable=False)(tokens)
    sequence = keras.layers.LSTM(40, return_sequences=True)(embedded)
    repeated = keras.layers.Lambda(lambda batch: tf.map_fn(repeat_first, batch))(sequence)
    model = keras.models.Model(inputs=tokens, outputs=repeated)
    model.compile(loss="categorical_crossentropy", optimizer="adam")
    return model


class CollectGarbage(tf.keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        gc.collect()


def main(epochs=100):
    inputs = np.random.rand(3200, 40)
    targets = np.random.rand(3200, 40, 40)
    model = build(np.random.rand(4592, 300))
    model.fit(inputs, targets, epochs=epochs, callbacks=[CollectGarbage()])


if __name__ == "__main__":
    main()
