# Reproduction (our own minimal rewrite) of the pattern described in
# https://github.com/tensorflow/tensorflow/issues/31175 (TF 2.0.0-beta1)
# The epoch loop is traced once per call because it receives model.step, a new bound method each time.
import tensorflow as tf


class Regressor(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = tf.keras.layers.Dense(1)
        self.opt = tf.keras.optimizers.SGD(0.01)

    def step(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.dense(x) - y))
        grads = tape.gradient(loss, self.trainable_variables)
        self.opt.apply_gradients(zip(grads, self.trainable_variables))
        return loss


@tf.function
def run_epoch(step_fn, dataset):
    for x, y in dataset:
        step_fn(x, y)


model = Regressor()
data = tf.data.Dataset.from_tensor_slices((tf.random.normal([1024, 8]), tf.random.normal([1024, 1]))).batch(32)
for epoch in range(1000):
    run_epoch(model.step, data)
