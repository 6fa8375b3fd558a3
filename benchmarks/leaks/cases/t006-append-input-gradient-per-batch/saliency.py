# Reproduction (our own minimal rewrite) of the code posted in
# https://e-learn.cn/topic/4021299 ("OOM using tensorflow gradient tape but only happens when I append a list")
# Gradients w.r.t. the input are appended to a Python list for every batch of every epoch.
import tensorflow as tf


def train(model, train_dataset, los_func, opti_func, epoch_accuracy, epochs):
    input_grads = []
    for epoch in range(epochs):
        for x, y_true in train_dataset:
            with tf.GradientTape(watch_accessed_variables=False) as tape:
                x_var = tf.Variable(x)
                y_pred = model(x_var, training=True)
                loss = los_func(y_true, y_pred)
            epoch_accuracy.update_state(y_true, y_pred)
            grads, x_grad = tape.gradient(loss, (model.trainable_variables, x_var))
            input_grads.append(x_grad)
            del tape
            opti_func.apply_gradients(zip(grads, model.trainable_variables))
    return input_grads
