# Reproduction (our own minimal rewrite) of the code posted in
# https://github.com/tensorflow/tensorflow/issues/38002 (TF 2.0): token classification on
# one-document batches whose length varies from 100 to 8000 tokens, trained through a
# @tf.function without an input signature.
import numpy as np
import tensorflow as tf
from tensorflow.keras.layers import Conv1D, Input
from tensorflow.keras.models import Model

feature_dims = 40
target_names = ["entity", "section", "role"]

tokens = Input(shape=(None, feature_dims))
shared = Conv1D(filters=100, kernel_size=5, padding="same", activation="relu")(tokens)
heads = [Conv1D(filters=3, kernel_size=5, activation="softmax", padding="same", name=name)(shared)
         for name in target_names]
tagger = Model(tokens, heads)

loss_fn = tf.keras.losses.CategoricalCrossentropy()
optimizer = tf.keras.optimizers.Adam()


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        predictions = tagger(x)
        loss = loss_fn(y, predictions)
    gradients = tape.gradient(loss, tagger.trainable_variables)
    optimizer.apply_gradients(zip(gradients, tagger.trainable_variables))


def documents(count=500):
    for _ in range(count):
        length = np.random.randint(100, 8001)
        x = np.random.rand(1, length, feature_dims).astype("float32")
        labels = [tf.one_hot(np.random.randint(0, 3, (1, length)), 3) for _ in target_names]
        yield x, labels


for x, y in documents():
    train_step(x, y)
