# Reproduction of https://github.com/tensorflow/tensorflow/issues/56423
# (TF 2.9.1, also reported with TF 2.10 in keras-team/keras#18145): a small functional
# model compiled with jit_compile=True inside a MirroredStrategy scope and trained with
# fit; after a number of steps/epochs the process aborts with std::system_error
# "Resource temporarily unavailable" (threads are never released). Model, strategy and
# batch sizes as posted; the dataset options and the fit call were elided in the thread,
# the random data, epochs and names below are ours.
import numpy as np
import tensorflow as tf


def build_model():
    inputs = tf.keras.layers.Input(shape=(5,), name="input_a")
    x = tf.keras.layers.Dense(512, activation="relu")(inputs)
    x = tf.keras.layers.Dense(512, activation="relu")(x)
    outputs = tf.keras.layers.Dense(1, name="output")(x)
    return tf.keras.models.Model(inputs=inputs, outputs=outputs)


strategy = tf.distribute.MirroredStrategy()
print(f"Can see {strategy.num_replicas_in_sync} gpus")
with strategy.scope():
    model = build_model()
    model.compile(loss="mse", jit_compile=True)

BATCH_SIZE_PER_REPLICA = 1024
GLOBAL_BATCH_SIZE = BATCH_SIZE_PER_REPLICA * strategy.num_replicas_in_sync

options = tf.data.Options()
options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
features = np.random.rand(200_000, 5).astype(np.float32)
targets = np.random.rand(200_000, 1).astype(np.float32)
dataset = (
    tf.data.Dataset.from_tensor_slices((features, targets))
    .batch(GLOBAL_BATCH_SIZE)
    .with_options(options)
)

model.fit(dataset, epochs=100)
