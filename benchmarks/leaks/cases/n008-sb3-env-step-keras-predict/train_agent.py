# Reproduction (our own minimal rewrite) of the setup in
# https://github.com/DLR-RM/stable-baselines3/issues/1699 (2023, TF 2.x Keras inside a custom
# gym environment): a PPO agent is trained on a demand environment whose step() asks a Keras
# forecasting model for the next demand with model.predict; RAM grows until 130 GB are used
# at about 100k timesteps. The forecasting model, spaces and reward are ours.
import gymnasium as gym
import numpy as np
import tensorflow as tf
from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import CheckpointCallback

history_length = 24


def build_demand_model():
    model = tf.keras.Sequential([
        tf.keras.Input(shape=(history_length, 1)),
        tf.keras.layers.LSTM(32),
        tf.keras.layers.Dense(1),
    ])
    model.compile(optimizer="adam", loss="mse")
    return model


class DemandEnv(gym.Env):
    def __init__(self, demand_model):
        self.demand_model = demand_model
        self.observation_space = gym.spaces.Box(0.0, np.inf, (history_length,), np.float32)
        self.action_space = gym.spaces.Box(0.0, 10.0, (1,), np.float32)
        self.history = np.ones(history_length, dtype=np.float32)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.history = np.ones(history_length, dtype=np.float32)
        return self.history.copy(), {}

    def step(self, action):
        window = self.history.reshape(1, history_length, 1)
        demand = float(self.demand_model.predict(window, verbose=0)[0, 0])
        reward = -abs(float(action[0]) - demand)
        self.history = np.roll(self.history, -1)
        self.history[-1] = demand
        return self.history.copy(), reward, False, False, {}


demand_env = DemandEnv(build_demand_model())
n_steps = 350
model = PPO("MlpPolicy", demand_env, n_steps=n_steps, batch_size=n_steps)
model.learn(total_timesteps=int(100_000_000),
            callback=CheckpointCallback(save_freq=10_000, save_path="checkpoints"))
model.save("agent")
