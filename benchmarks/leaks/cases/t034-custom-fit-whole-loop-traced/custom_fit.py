# Reproduction (our own minimal rewrite) of the structure described in
# https://github.com/tensorflow/tensorflow/issues/48732 (TF 2.3, custom GradientTape fit)
# The whole custom fit (epoch and batch loops) is decorated with @tf.function.
import tensorflow as tf

loss_fn = tf.keras.losses.SparseCategoricalCrossentropy()
optimizer = tf.keras.optimizers.Adam()


def train_batch(model, x_batch, y_batch):
    with tf.GradientTape() as tape:
        loss = loss_fn(y_batch, model(x_batch, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


@tf.function
def fit(model, x_train, y_train, epochs, batch_size):
    n_batches = x_train.shape[0] // batch_size
    for epoch in range(epochs):
        for b in range(n_batches):
            x_batch = x_train[b * batch_size:(b + 1) * batch_size]
            y_batch = y_train[b * batch_size:(b + 1) * batch_size]
            loss = train_batch(model, x_batch, y_batch)
        tf.print("epoch", epoch, "loss", loss)
