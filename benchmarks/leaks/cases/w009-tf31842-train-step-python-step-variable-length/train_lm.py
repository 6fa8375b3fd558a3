# Reproduction (our own minimal rewrite) of the training step posted in
# https://github.com/tensorflow/tensorflow/issues/31842 (TF 2.0 beta, a GPT-2 style
# language model). The tf.function train step is a method that takes the batch and the
# Python step counter from enumerate(); batches are padded to their own longest text.
# Host memory grows until the training process is killed.
import numpy as np
import tensorflow as tf

VOCAB = 5000


class TinyLanguageModel(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.embed = tf.keras.layers.Embedding(VOCAB, 128)
        self.mix = tf.keras.layers.Dense(128, activation="relu")
        self.head = tf.keras.layers.Dense(VOCAB)
        self.optimizer_ = tf.keras.optimizers.Adam(1e-4)
        self.loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def call(self, tokens, training=False):
        return self.head(self.mix(self.embed(tokens)))

    @tf.function
    def train_step(self, batch, step, grad_clip=True, clip_value=1.0):
        inputs = batch[:, :-1]
        targets = batch[:, 1:]
        with tf.GradientTape() as tape:
            logits = self(inputs, training=True)
            loss = self.loss_fn(targets, logits)
        gradients = tape.gradient(loss, self.trainable_variables)
        if grad_clip:
            gradients = [tf.clip_by_value(g, -clip_value, clip_value) for g in gradients]
        self.optimizer_.apply_gradients(zip(gradients, self.trainable_variables))
        return loss

    def fit_texts(self, dataset):
        for step, batch in enumerate(dataset):
            loss = self.train_step(batch, step)
            if step % 100 == 0:
                print(step, float(loss))


def token_texts():
    rng = np.random.default_rng(0)
    while True:
        yield rng.integers(1, VOCAB, size=rng.integers(20, 512))


texts = tf.data.Dataset.from_generator(
    token_texts, output_signature=tf.TensorSpec(shape=(None,), dtype=tf.int64)
)
TinyLanguageModel().fit_texts(texts.padded_batch(8).take(100000))
