# Reproduction (our own minimal rewrite) of the pattern discussed in
# https://github.com/MokkeMeguru/TFGENZOO/issues/15 (TF 2.1, TensorFlow Probability): a Glow
# style flow layer builds a tfp Normal distribution object inside call() on every forward
# pass to sample and score the latent; the owner finds the objects pile up ("training time
# and memory leak are terrible") and plans to sample without tfp. Network and sizes ours.
import tensorflow as tf
import tensorflow_probability as tfp

tfd = tfp.distributions


class GaussianizeSplit(tf.keras.layers.Layer):
    def build(self, input_shape):
        channels = input_shape[-1]
        self.prior = tf.keras.layers.Conv2D(channels, 3, padding="same")

    def call(self, x, temperature=1.0):
        mean, log_scale = tf.split(self.prior(x), 2, axis=-1)
        distribution = tfd.Normal(loc=mean, scale=tf.exp(log_scale) * temperature)
        z = distribution.sample()
        log_prob = tf.reduce_sum(distribution.log_prob(z), axis=[1, 2, 3])
        return z, log_prob


class TinyGlow(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.squeeze_conv = tf.keras.layers.Conv2D(8, 3, padding="same")
        self.split = GaussianizeSplit()

    def call(self, images):
        return self.split(self.squeeze_conv(images))


model = TinyGlow()
optimizer = tf.keras.optimizers.Adam(1e-4)


@tf.function
def train_step(images):
    with tf.GradientTape() as tape:
        _, log_prob = model(images)
        loss = -tf.reduce_mean(log_prob)
    gradients = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss


images = tf.random.uniform([16, 32, 32, 3])
for step in range(100000):
    loss = train_step(images)
