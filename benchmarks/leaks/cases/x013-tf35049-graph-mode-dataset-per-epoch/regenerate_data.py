# Reproduction of https://github.com/tensorflow/tensorflow/issues/35049 (TF 2.0.0 with eager
# execution disabled): training data must be regenerated at the end of every epoch, and
# without placeholders the reporter rebuilds the tf.data pipeline from the new NumPy array
# each epoch; the process is eventually killed for running out of memory.
# Minimal rewrite: the posted script is cut off in our copy, so the model, the data
# generator, sizes and epoch count are ours; the per-epoch Dataset rebuild is as described.
import numpy as np
import tensorflow as tf

tf.compat.v1.disable_eager_execution()

N_SAMPLES, N_FEATURES, BATCH = 50000, 256, 128


def regenerate_train_x():
    return np.random.rand(N_SAMPLES, N_FEATURES).astype(np.float32)


train_y = np.random.randint(0, 10, size=(N_SAMPLES,)).astype(np.int64)

model = tf.keras.Sequential([
    tf.keras.layers.Dense(128, activation="relu", input_shape=(N_FEATURES,)),
    tf.keras.layers.Dense(10),
])
model.compile(optimizer="adam",
              loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))

train_x = regenerate_train_x()
for epoch in range(1000):
    dataset = tf.data.Dataset.from_tensor_slices((train_x, train_y)).shuffle(N_SAMPLES).batch(BATCH)
    model.fit(dataset, epochs=1, steps_per_epoch=N_SAMPLES // BATCH, verbose=0)
    train_x = regenerate_train_x()
