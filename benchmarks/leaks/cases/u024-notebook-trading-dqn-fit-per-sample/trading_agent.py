# Reproduction (our own minimal rewrite) of the agent and training cells of the notebook in
# https://github.com/tatsath/fin-ml/issues/15 (Chapter 9, "Reinforcement Learning based
# Trading Strategy"): the kernel dies during the first training episode. The notebook's
# price loading, state helper and plotting are replaced by small stand-ins of ours.
import random
from collections import deque

import numpy as np
from keras.layers import Dense
from keras.models import Sequential, load_model
from keras.optimizers import Adam


class TradingAgent:
    def __init__(self, state_size, is_eval=False, model_name=""):
        self.state_size = state_size
        self.action_size = 3  # hold, buy, sell
        self.memory = deque(maxlen=1000)
        self.inventory = []
        self.is_eval = is_eval
        self.gamma = 0.95
        self.epsilon = 1.0
        self.epsilon_min = 0.01
        self.epsilon_decay = 0.995
        self.model = load_model(model_name) if is_eval else self._build()

    def _build(self):
        net = Sequential()
        net.add(Dense(units=64, input_dim=self.state_size, activation="relu"))
        net.add(Dense(units=32, activation="relu"))
        net.add(Dense(units=8, activation="relu"))
        net.add(Dense(self.action_size, activation="linear"))
        net.compile(loss="mse", optimizer=Adam(lr=0.001))
        return net

    def act(self, state):
        if not self.is_eval and random.random() <= self.epsilon:
            return random.randrange(self.action_size)
        values = self.model.predict(state)
        return np.argmax(values[0])

    def replay(self, batch_size):
        recent = list(self.memory)[-batch_size:]
        for state, action, reward, next_state, done in recent:
            target = reward
            if not done:
                target = reward + self.gamma * np.amax(self.model.predict(next_state)[0])
            target_values = self.model.predict(state)
            target_values[0][action] = target
            self.model.fit(state, target_values, epochs=1, verbose=0)
        if self.epsilon > self.epsilon_min:
            self.epsilon *= self.epsilon_decay


def window_state(prices, t, width):
    start = t - width + 1
    block = prices[start:t + 1] if start >= 0 else -start * [prices[0]] + list(prices[0:t + 1])
    diffs = [1 / (1 + np.exp(-(block[i + 1] - block[i]))) for i in range(width - 1)]
    return np.array([diffs])


prices = list(np.cumsum(np.random.randn(2000)) + 100)
window_size = 1
agent = TradingAgent(window_size)
last = len(prices) - 1
batch_size = 32

for episode in range(11):
    state = window_state(prices, 0, window_size + 1)
    agent.inventory = []
    for t in range(last):
        action = agent.act(state)
        next_state = window_state(prices, t + 1, window_size + 1)
        reward = 0
        if action == 1:
            agent.inventory.append(prices[t])
        elif action == 2 and agent.inventory:
            reward = max(prices[t] - agent.inventory.pop(0), 0)
        done = t == last - 1
        agent.memory.append((state, action, reward, next_state, done))
        state = next_state
        if len(agent.memory) > batch_size:
            agent.replay(batch_size)
    if episode % 2 == 0:
        agent.model.save("model_ep" + str(episode))
