# Reproduction (our own minimal rewrite) of the notebook reported in
# https://github.com/stefan-jansen/machine-learning-for-trading/issues/269
# (22_deep_reinforcement_learning/04_q_learning_for_trading.ipynb): a double-DQN agent with
# predict per environment step and predict_on_batch/train_on_batch replay on every step,
# trained over many 252-day episodes. The trading environment is a random stand-in of ours;
# the agent's structure and hyperparameters follow the notebook.
from collections import deque
from random import sample

import numpy as np
import tensorflow as tf
from tensorflow.keras.layers import Dense, Dropout
from tensorflow.keras.models import Sequential
from tensorflow.keras.optimizers import Adam
from tensorflow.keras.regularizers import l2


class DDQNAgent:
    def __init__(self, state_dim, num_actions, learning_rate=1e-4, gamma=0.99,
                 epsilon_start=1.0, epsilon_end=0.01, epsilon_decay_steps=250,
                 replay_capacity=int(1e6), architecture=(256, 256), l2_reg=1e-6,
                 tau=100, batch_size=4096):
        self.state_dim, self.num_actions = state_dim, num_actions
        self.experience = deque([], maxlen=replay_capacity)
        self.learning_rate, self.gamma = learning_rate, gamma
        self.architecture, self.l2_reg = architecture, l2_reg
        self.online_network = self.build_model()
        self.target_network = self.build_model(trainable=False)
        self.update_target()
        self.epsilon = epsilon_start
        self.epsilon_decay = (epsilon_start - epsilon_end) / epsilon_decay_steps
        self.total_steps = 0
        self.tau, self.batch_size = tau, batch_size
        self.idx = tf.range(batch_size)
        self.losses = []
        self.train = True

    def build_model(self, trainable=True):
        layers = [Dense(units=units, input_dim=self.state_dim if i == 0 else None,
                        activation="relu", kernel_regularizer=l2(self.l2_reg),
                        trainable=trainable) for i, units in enumerate(self.architecture)]
        layers.append(Dropout(0.1))
        layers.append(Dense(units=self.num_actions, trainable=trainable))
        model = Sequential(layers)
        model.compile(loss="mean_squared_error", optimizer=Adam(learning_rate=self.learning_rate))
        return model

    def update_target(self):
        self.target_network.set_weights(self.online_network.get_weights())

    def epsilon_greedy_policy(self, state):
        self.total_steps += 1
        if np.random.rand() <= self.epsilon:
            return np.random.choice(self.num_actions)
        q = self.online_network.predict(state)
        return np.argmax(q, axis=1).squeeze()

    def memorize_transition(self, s, a, r, s_prime, not_done):
        if not_done:
            self.epsilon = max(self.epsilon - self.epsilon_decay, 0.01)
        self.experience.append((s, a, r, s_prime, not_done))

    def experience_replay(self):
        if self.batch_size > len(self.experience):
            return
        minibatch = map(np.array, zip(*sample(self.experience, self.batch_size)))
        states, actions, rewards, next_states, not_done = minibatch
        next_q_values = self.online_network.predict_on_batch(next_states)
        best_actions = tf.argmax(next_q_values, axis=1)
        next_q_values_target = self.target_network.predict_on_batch(next_states)
        target_q_values = tf.gather_nd(next_q_values_target,
                                       tf.stack((self.idx, tf.cast(best_actions, tf.int32)), axis=1))
        targets = rewards + not_done * self.gamma * target_q_values
        q_values = self.online_network.predict_on_batch(states)
        q_values[[self.idx, actions]] = targets
        loss = self.online_network.train_on_batch(x=states, y=q_values)
        self.losses.append(loss)
        if self.total_steps % self.tau == 0:
            self.update_target()


class RandomTradingEnv:
    # stand-in for the notebook's gym trading environment (252 trading days per episode)
    def __init__(self, state_dim=10, days=252):
        self.state_dim, self.days, self.day = state_dim, days, 0

    def reset(self):
        self.day = 0
        return np.random.randn(self.state_dim).astype("float32")

    def step(self, action):
        self.day += 1
        next_state = np.random.randn(self.state_dim).astype("float32")
        return next_state, float(np.random.randn()), self.day >= self.days, {}


if __name__ == "__main__":
    trading_environment = RandomTradingEnv()
    state_dim, max_episodes, max_episode_steps = 10, 1000, 252
    ddqn = DDQNAgent(state_dim=state_dim, num_actions=3)
    for episode in range(1, max_episodes + 1):
        this_state = trading_environment.reset()
        for episode_step in range(max_episode_steps):
            action = ddqn.epsilon_greedy_policy(this_state.reshape(-1, state_dim))
            next_state, reward, done, _ = trading_environment.step(action)
            ddqn.memorize_transition(this_state, action, reward, next_state, 0.0 if done else 1.0)
            if ddqn.train:
                ddqn.experience_replay()
            if done:
                break
            this_state = next_state
