# Reproduction (our own minimal rewrite) of the code posted in
# https://github.com/tensorflow/tensorflow/issues/36988
# A whole training run (epochs loop, tqdm over the dataset) decorated with @tf.function.
import tensorflow as tf
from tqdm import tqdm

import losses


@tf.function
def fit_detector(net, batches, epochs=50, lr=1e-5, weights_path=None):
    opt = tf.keras.optimizers.Adam(lr=lr)
    for epoch in range(epochs):
        batches = batches.shuffle(1000)
        for images, boxes, labels in tqdm(batches, desc="Epoch {} of {}".format(epoch + 1, epochs)):
            with tf.GradientTape() as tape:
                loc, cls = net(images, training=True)
                box_loss = losses.smooth_l1(boxes, loc)
                cls_loss = losses.focal(labels, cls)
                total = box_loss * 0.6 + cls_loss * 0.4
            grads = tape.gradient(total, net.trainable_variables)
            opt.apply_gradients(zip(grads, net.trainable_variables))
        if weights_path:
            net.save_weights(weights_path)
