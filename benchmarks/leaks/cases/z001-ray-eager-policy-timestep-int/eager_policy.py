# Reproduction (our own minimal rewrite) of the pattern described in
# https://github.com/ray-project/ray/issues/19233 (RLlib, framework="tf2", eager_tracing on):
# the policy's action helper receives the policy's Python-int global timestep, which
# grows by the batch size after every call. The network, the exploration schedule,
# the environment stand-in and all sizes are ours.
import numpy as np
import tensorflow as tf


class EagerActionPolicy:
    def __init__(self, obs_dim, num_actions, eager_tracing=True):
        self.num_actions = num_actions
        self.model = tf.keras.Sequential([
            tf.keras.layers.Dense(64, activation="relu", input_shape=(obs_dim,)),
            tf.keras.layers.Dense(num_actions),
        ])
        self.global_timestep = 0
        if eager_tracing:
            self._action_helper = tf.function(self._compute_actions_helper)
        else:
            self._action_helper = self._compute_actions_helper

    def _compute_actions_helper(self, obs_batch, timestep, explore):
        q_values = self.model(obs_batch)
        greedy = tf.argmax(q_values, axis=1)
        if not explore:
            return greedy
        epsilon = tf.maximum(0.02, 1.0 - tf.cast(timestep, tf.float32) / 10000.0)
        batch = tf.shape(obs_batch)[0]
        random_actions = tf.random.uniform([batch], 0, self.num_actions, dtype=tf.int64)
        take_random = tf.random.uniform([batch]) < epsilon
        return tf.where(take_random, random_actions, greedy)

    def compute_actions(self, obs_batch, explore=True):
        batch_size = obs_batch.shape[0]
        actions = self._action_helper(tf.convert_to_tensor(obs_batch), self.global_timestep, explore)
        self.global_timestep += int(batch_size)
        return actions.numpy()


def rollout(policy, num_envs=8, obs_dim=16, steps=100000):
    obs = np.random.rand(num_envs, obs_dim).astype("float32")
    for _ in range(steps):
        policy.compute_actions(obs)
        obs = np.random.rand(num_envs, obs_dim).astype("float32")


if __name__ == "__main__":
    rollout(EagerActionPolicy(obs_dim=16, num_actions=4))
