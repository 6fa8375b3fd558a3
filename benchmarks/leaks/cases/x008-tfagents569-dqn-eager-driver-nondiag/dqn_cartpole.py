# Reproduction of https://github.com/tensorflow/agents/issues/569
# (minimal rewrite of the posted script; names ours). A DQN agent on CartPole: RSS climbs
# within 30 seconds while the collect driver runs eagerly in a loop; replacing collection
# with agent.train on replay samples shows a second, separate growth.
import tensorflow as tf
from tf_agents.agents.dqn import dqn_agent
from tf_agents.drivers import dynamic_step_driver
from tf_agents.environments import suite_gym, tf_py_environment
from tf_agents.networks import q_network
from tf_agents.replay_buffers import tf_uniform_replay_buffer
from tf_agents.utils import common

tf.compat.v1.enable_v2_behavior()

env = tf_py_environment.TFPyEnvironment(suite_gym.load("CartPole-v0"))
q_net = q_network.QNetwork(env.observation_spec(), env.action_spec(), fc_layer_params=(100,))
agent = dqn_agent.DqnAgent(
    env.time_step_spec(),
    env.action_spec(),
    q_network=q_net,
    optimizer=tf.keras.optimizers.Adam(1e-3),
    td_errors_loss_fn=common.element_wise_squared_loss,
    train_step_counter=tf.Variable(0),
)
agent.initialize()

replay = tf_uniform_replay_buffer.TFUniformReplayBuffer(
    data_spec=agent.collect_data_spec, batch_size=env.batch_size, max_length=100000)
driver = dynamic_step_driver.DynamicStepDriver(
    env, agent.collect_policy, observers=[replay.add_batch], num_steps=1)


def collect(iterations=100000):
    for _ in range(iterations):
        driver.run()


def train(iterations=100000):
    samples = iter(replay.as_dataset(num_parallel_calls=3, sample_batch_size=64, num_steps=2).prefetch(3))
    for _ in range(iterations):
        experience, _ = next(samples)
        agent.train(experience)


if __name__ == "__main__":
    collect()
    train()
