# Reproduction of https://github.com/qixiang109/tensorflow-seq2seq-autoencoder/issues/1
# (minimal rewrite of the project's model step/fit, Python 2 upstream; names ours, network reduced).
# Reported: memory is eaten continually until the process is killed on a large dataset.
import time

import numpy as np
import tensorflow as tf


class Seq2SeqAutoencoder(object):
    def __init__(self, seq_len, batch, state_size):
        self.inputs = tf.placeholder(tf.float32, [seq_len, None, state_size])
        cell = tf.nn.rnn_cell.BasicLSTMCell(state_size)
        steps = tf.unstack(self.inputs)
        self.decoder_outputs, self.encoder_states = tf.nn.static_rnn(cell, steps, dtype=tf.float32)
        self.loss = tf.reduce_mean(tf.square(tf.stack(self.decoder_outputs) - self.inputs))
        self.update = tf.train.AdamOptimizer(1e-3).minimize(self.loss)
        self.global_step = tf.Variable(0, trainable=False)

    def step(self, batch, is_train, session):
        feed = {self.inputs: batch}
        if is_train:
            states, outputs, loss, _ = session.run([self.encoder_states, tf.transpose(tf.pack(self.decoder_outputs), [1, 0, 2]), self.loss, self.update], feed)
        else:
            states, outputs, loss = session.run([self.encoder_states, tf.transpose(tf.pack(self.decoder_outputs), [1, 0, 2]), self.loss], feed)
        return states, outputs, loss

    def fit(self, train_set, valid_set, steps_per_checkpoint, session):
        while True:
            start = time.time()
            batch = train_set[np.random.randint(len(train_set))]
            _, _, step_loss = self.step(batch, True, session)
            print("step loss %.5f time %.2f" % (step_loss, time.time() - start))
            if np.random.randint(steps_per_checkpoint) == 0:
                for valid_batch in valid_set:
                    _, _, valid_loss = self.step(valid_batch, False, session)
                print("validation loss %.5f" % valid_loss)


def main():
    model = Seq2SeqAutoencoder(seq_len=20, batch=64, state_size=128)
    data = [np.random.rand(20, 64, 128).astype(np.float32) for _ in range(8)]
    with tf.Session() as session:
        session.run(tf.global_variables_initializer())
        model.fit(data[:6], data[6:], 100, session)
