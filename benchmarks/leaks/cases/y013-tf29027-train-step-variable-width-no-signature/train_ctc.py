# Reproduction (our own minimal rewrite) of the code posted in
# https://github.com/tensorflow/tensorflow/issues/29027 (TF 2.0.0-dev20190520, GPU model):
# a tf.function training step over a tf.data pipeline of images with a fixed height and a
# variable width; the reporter's input_signature with a None width is commented out, and CPU
# memory grows forever. The network, loss and data below are ours; the spec follows the thread.
import numpy as np
import tensorflow as tf

IMAGE_FIX_HEIGHT = 32

DATA_TRAIN_SPEC = [
    tf.TensorSpec(shape=(None, IMAGE_FIX_HEIGHT, None, 3), dtype=tf.float32),
    tf.TensorSpec(shape=None, dtype=tf.int32),
]

model = tf.keras.Sequential([
    tf.keras.layers.Conv2D(16, 3, padding="same", activation="relu"),
    tf.keras.layers.GlobalAveragePooling2D(),
    tf.keras.layers.Dense(10),
])
optimizer = tf.keras.optimizers.Adam()


def line_images():
    for _ in range(10_000):
        width = np.random.randint(64, 512)
        yield np.random.rand(IMAGE_FIX_HEIGHT, width, 3).astype("float32"), np.random.randint(10)


dataset_train = tf.data.Dataset.from_generator(
    line_images, output_types=(tf.float32, tf.int32),
    output_shapes=((IMAGE_FIX_HEIGHT, None, 3), ())).batch(1)


# @tf.function(input_signature=DATA_TRAIN_SPEC)
@tf.function
def train_step(images, labels):
    with tf.GradientTape() as tape:
        logits = model(images, training=True)
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for images, labels in dataset_train:
    train_step(images, labels)
