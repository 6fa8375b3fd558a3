# Reproduction (our own minimal rewrite) of the situation in
# https://github.com/ageron/handson-ml/issues/119 (TensorFlow 1.x notebook, DQN on Ms. Pac-Man):
# RAM keeps growing during training until the machine runs out. The Atari environment is
# replaced by random frames and the Q-network by a small stand-in; the replay memory, the
# preprocessing and the training-loop structure follow the notebook.
from collections import deque

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_eager_execution()

input_height, input_width, input_channels = 88, 80, 1
n_outputs = 9
replay_memory_size = 500000
replay_memory = deque([], maxlen=replay_memory_size)
batch_size = 50
training_interval = 4
n_steps = 4000000


def preprocess_observation(obs):
    img = obs[1:176:2, ::2]
    img = img.sum(axis=2)
    img = (img - 128) / 128 - 1
    return img.reshape(input_height, input_width, input_channels)


def q_network(state, name):
    with tf.variable_scope(name):
        flat = tf.reshape(state, [-1, input_height * input_width * input_channels])
        hidden = tf.layers.dense(flat, 512, activation=tf.nn.relu)
        return tf.layers.dense(hidden, n_outputs)


X_state = tf.placeholder(tf.float32, [None, input_height, input_width, input_channels])
online_q_values = q_network(X_state, "q_networks/online")
X_action = tf.placeholder(tf.int32, [None])
y = tf.placeholder(tf.float32, [None, 1])
q_value = tf.reduce_sum(online_q_values * tf.one_hot(X_action, n_outputs), axis=1, keepdims=True)
loss = tf.reduce_mean(tf.square(y - q_value))
training_op = tf.train.MomentumOptimizer(0.001, 0.95, use_nesterov=True).minimize(loss)


def fake_frame():
    return np.random.randint(0, 256, (210, 160, 3), dtype=np.uint8)


def sample_memories(size):
    indices = np.random.permutation(len(replay_memory))[:size]
    cols = [[], [], [], [], []]
    for idx in indices:
        for col, value in zip(cols, replay_memory[idx]):
            col.append(value)
    cols = [np.array(col) for col in cols]
    return cols[0], cols[1], cols[2].reshape(-1, 1), cols[3], cols[4].reshape(-1, 1)


with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    state = preprocess_observation(fake_frame())
    for step in range(n_steps):
        q_values = sess.run(online_q_values, feed_dict={X_state: [state]})
        action = int(np.argmax(q_values))
        next_state = preprocess_observation(fake_frame())
        reward, done = float(np.random.rand() < 0.01), np.random.rand() < 0.001
        replay_memory.append((state, action, reward, next_state, 1.0 - done))
        state = next_state
        if step % training_interval != 0 or len(replay_memory) < batch_size:
            continue
        X_state_val, X_action_val, rewards, X_next_state_val, continues = sample_memories(batch_size)
        next_q_values = sess.run(online_q_values, feed_dict={X_state: X_next_state_val})
        y_val = rewards + continues * 0.99 * np.max(next_q_values, axis=1, keepdims=True)
        sess.run(training_op, feed_dict={X_state: X_state_val, X_action: X_action_val, y: y_val})
