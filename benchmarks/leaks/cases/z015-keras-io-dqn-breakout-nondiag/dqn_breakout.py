# Reproduction (our own minimal rewrite) of the keras-io example reported in
# https://github.com/keras-team/keras-io/issues/1483 (examples/rl/deep_q_network_breakout.py):
# Atari Breakout DQN with a Python-list replay memory trimmed to max_memory_length,
# model(state) per frame, model_target.predict per update, a GradientTape train step.
# The Atari environment is a random stand-in of ours; constants follow the example.
import numpy as np
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import layers

gamma, epsilon, num_actions = 0.99, 1.0, 4
batch_size, max_steps_per_episode = 32, 10000
epsilon_random_frames, epsilon_greedy_frames = 50000, 1000000.0
max_memory_length, update_after_actions, update_target_network = 100000, 4, 10000


def create_q_model():
    inputs = layers.Input(shape=(84, 84, 4))
    x = layers.Conv2D(32, 8, strides=4, activation="relu")(inputs)
    x = layers.Conv2D(64, 4, strides=2, activation="relu")(x)
    x = layers.Conv2D(64, 3, strides=1, activation="relu")(x)
    x = layers.Flatten()(x)
    x = layers.Dense(512, activation="relu")(x)
    return keras.Model(inputs=inputs, outputs=layers.Dense(num_actions, activation="linear")(x))


class RandomBreakout:
    # stand-in for the wrapped Atari environment (84x84x4 uint8 frames)
    def reset(self):
        return np.random.randint(0, 255, (84, 84, 4), dtype=np.uint8)

    def step(self, action):
        frame = np.random.randint(0, 255, (84, 84, 4), dtype=np.uint8)
        return frame, float(np.random.rand() < 0.01), np.random.rand() < 0.001, {}


model, model_target = create_q_model(), create_q_model()
optimizer = keras.optimizers.Adam(learning_rate=0.00025, clipnorm=1.0)
loss_function = keras.losses.Huber()
env = RandomBreakout()

action_history, state_history, state_next_history = [], [], []
rewards_history, done_history, episode_reward_history = [], [], []
running_reward, episode_count, frame_count = 0, 0, 0

while True:
    state = np.array(env.reset())
    episode_reward = 0
    for timestep in range(1, max_steps_per_episode):
        frame_count += 1
        if frame_count < epsilon_random_frames or epsilon > np.random.rand(1)[0]:
            action = np.random.choice(num_actions)
        else:
            state_tensor = tf.expand_dims(tf.convert_to_tensor(state), 0)
            action_probs = model(state_tensor, training=False)
            action = tf.argmax(action_probs[0]).numpy()
        epsilon = max(epsilon - 0.9 / epsilon_greedy_frames, 0.1)
        state_next, reward, done, _ = env.step(action)
        state_next = np.array(state_next)
        episode_reward += reward
        action_history.append(action)
        state_history.append(state)
        state_next_history.append(state_next)
        done_history.append(done)
        rewards_history.append(reward)
        state = state_next
        if frame_count % update_after_actions == 0 and len(done_history) > batch_size:
            indices = np.random.choice(range(len(done_history)), size=batch_size)
            state_sample = np.array([state_history[i] for i in indices])
            state_next_sample = np.array([state_next_history[i] for i in indices])
            rewards_sample = [rewards_history[i] for i in indices]
            action_sample = [action_history[i] for i in indices]
            done_sample = tf.convert_to_tensor([float(done_history[i]) for i in indices])
            future_rewards = model_target.predict(state_next_sample)
            updated_q_values = rewards_sample + gamma * tf.reduce_max(future_rewards, axis=1)
            updated_q_values = updated_q_values * (1 - done_sample) - done_sample
            masks = tf.one_hot(action_sample, num_actions)
            with tf.GradientTape() as tape:
                q_values = model(state_sample)
                q_action = tf.reduce_sum(tf.multiply(q_values, masks), axis=1)
                loss = loss_function(updated_q_values, q_action)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
        if frame_count % update_target_network == 0:
            model_target.set_weights(model.get_weights())
        if len(rewards_history) > max_memory_length:
            del rewards_history[:1]
            del state_history[:1]
            del state_next_history[:1]
            del action_history[:1]
            del done_history[:1]
        if done:
            break
    episode_reward_history.append(episode_reward)
    if len(episode_reward_history) > 100:
        del episode_reward_history[:1]
    running_reward = np.mean(episode_reward_history)
    episode_count += 1
    if running_reward > 40:
        break
