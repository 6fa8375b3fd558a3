# Reproduction (our own minimal rewrite) of the DQN notebook code fixed by
# https://github.com/yandexdataschool/Practical_RL/pull/77 (TF 1.x graph mode, Keras layers):
# load_weigths_into_target_network builds new tf.assign ops every time the training loop
# refreshes the target network. The environment and replay buffer are random stand-ins
# of ours; the network sizes and loop constants are ours.
import numpy as np
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras.layers import Conv2D, Dense, Flatten

state_shape, n_actions = (64, 64, 4), 4

tf.reset_default_graph()
sess = tf.InteractiveSession()


class DQNAgent:
    def __init__(self, name, state_shape, n_actions, epsilon=0.0, reuse=False):
        with tf.variable_scope(name, reuse=reuse):
            self.network = keras.models.Sequential([
                Conv2D(16, (3, 3), strides=2, activation="relu", input_shape=state_shape),
                Conv2D(32, (3, 3), strides=2, activation="relu"),
                Flatten(),
                Dense(256, activation="relu"),
                Dense(n_actions, activation="linear"),
            ])
            self.state_t = tf.placeholder("float32", [None] + list(state_shape))
            self.qvalues_t = self.network(self.state_t)
        self.weights = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope=name)
        self.epsilon = epsilon

    def get_qvalues(self, state_t):
        return tf.get_default_session().run(self.qvalues_t, {self.state_t: state_t})


agent = DQNAgent("dqn_agent", state_shape, n_actions, epsilon=0.5)
target_network = DQNAgent("target_network", state_shape, n_actions)

obs_ph = tf.placeholder(tf.float32, shape=(None,) + state_shape)
actions_ph = tf.placeholder(tf.int32, shape=[None])
rewards_ph = tf.placeholder(tf.float32, shape=[None])
next_obs_ph = tf.placeholder(tf.float32, shape=(None,) + state_shape)
is_done_ph = tf.placeholder(tf.float32, shape=[None])

current_q = tf.reduce_sum(agent.network(obs_ph) * tf.one_hot(actions_ph, n_actions), axis=1)
next_q = tf.reduce_max(target_network.network(next_obs_ph), axis=1)
reference_q = rewards_ph + 0.99 * next_q * (1 - is_done_ph)
td_loss = tf.reduce_mean((current_q - tf.stop_gradient(reference_q)) ** 2)
train_step = tf.train.AdamOptimizer(1e-3).minimize(td_loss, var_list=agent.weights)
sess.run(tf.global_variables_initializer())


def load_weigths_into_target_network(agent, target_network):
    """ assign target_network.weights variables to their respective agent.weights values. """
    assigns = []
    for w_agent, w_target in zip(agent.weights, target_network.weights):
        assigns.append(tf.assign(w_target, w_agent, validate_shape=True))
    tf.get_default_session().run(assigns)


def sample_batch(batch_size):
    # stand-in for sampling the experience replay buffer
    return {
        obs_ph: np.random.rand(batch_size, *state_shape),
        actions_ph: np.random.randint(0, n_actions, batch_size),
        rewards_ph: np.random.rand(batch_size),
        next_obs_ph: np.random.rand(batch_size, *state_shape),
        is_done_ph: np.zeros(batch_size),
    }


for i in range(10 ** 5):
    _, loss_t = sess.run([train_step, td_loss], sample_batch(batch_size=64))
    if i % 500 == 0:
        load_weigths_into_target_network(agent, target_network)
