# Reproduction (our own minimal rewrite) of the code posted in
# https://github.com/keras-team/keras/issues/15076 (TF 2.5, Keras, TensorFlow Probability):
# a PPO worker samples each action eagerly from a Keras actor and a tfp Normal; memory grows
# step after step. Decorating get_action with tf.function stops the growth in one process,
# but then the function blocks when run under multiprocessing. Network and sizes are ours.
import numpy as np
import tensorflow as tf
import tensorflow_probability as tfp


def build_actor(observation_size, action_size):
    observation = tf.keras.Input(shape=(observation_size,))
    hidden = tf.keras.layers.Dense(64, activation="tanh")(observation)
    mu = tf.keras.layers.Dense(action_size, activation="tanh")(hidden)
    sigma = tf.keras.layers.Dense(action_size, activation="softplus")(hidden)
    return tf.keras.Model(observation, [mu, sigma])


class PPOWorker:
    def __init__(self, observation_size=8, action_size=2):
        self.Model = build_actor(observation_size, action_size)

    def get_action(self, obs):
        mu, sigma = self.Model(obs)
        dist = tfp.distributions.Normal(mu, sigma)
        action = tf.squeeze(dist.sample(), axis=0)
        prob = tf.squeeze(dist.prob(action), axis=0)
        return action, prob


worker = PPOWorker()
for step in range(1_000_000):
    observation = np.random.randn(1, 8).astype(np.float32)
    action, prob = worker.get_action(observation)
