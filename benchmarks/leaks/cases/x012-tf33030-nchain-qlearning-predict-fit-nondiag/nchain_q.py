# Reproduction of https://github.com/tensorflow/tensorflow/issues/33030 (TF 2.0.0):
# tabular-style Q-learning on gym's NChain-v0 with a small tf.keras network; each
# environment step calls predict three times and fit once on a one-hot state. Runs in
# about 28 s per episode on TF 1.14 or Theano; on TF 2.0.0 memory grows without bound
# and the program never finishes. Minimal rewrite of the posted script, names ours.
import gym
import numpy as np
import tensorflow as tf
from tensorflow.keras import layers

env = gym.make("NChain-v0")


def q_learning_keras(env, num_episodes=1000):
    model = tf.keras.Sequential([
        layers.InputLayer(batch_input_shape=(1, 5)),
        layers.Dense(10, activation="sigmoid"),
        layers.Dense(2, activation="linear"),
    ])
    model.compile(loss="mse", optimizer="adam", metrics=["mae"])
    states = np.identity(5)
    discount, eps, decay = 0.95, 0.5, 0.999
    rewards = []
    for episode in range(num_episodes):
        state = env.reset()
        eps *= decay
        done = False
        total = 0
        while not done:
            if np.random.random() < eps:
                action = np.random.randint(0, 2)
            else:
                action = np.argmax(model.predict(states[state:state + 1]))
            new_state, reward, done, _ = env.step(action)
            target = reward + discount * np.max(model.predict(states[new_state:new_state + 1]))
            target_vec = model.predict(states[state:state + 1])[0]
            target_vec[action] = target
            model.fit(states[state:state + 1], target_vec.reshape(-1, 2), epochs=1, verbose=0)
            state = new_state
            total += reward
        rewards.append(total)
    return model, rewards


if __name__ == "__main__":
    q_learning_keras(env)
