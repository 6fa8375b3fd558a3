# Reproduction (our own minimal rewrite) of the notebook posted in
# https://github.com/tensorflow/tensorflow/issues/20436 (TF 1.8, eager mode, JupyterLab).
# Cell 1 runs once; the reporter re-runs cell 2 many times and memory grows on each run.

# --- cell 1 ---
import numpy as np
import tensorflow as tf

tf.enable_eager_execution()


# --- cell 2 (re-run by hand) ---
def peek_first_batch():
    images = tf.data.Dataset.from_tensor_slices(np.zeros((60000, 32, 32, 3)))
    images = images.shuffle(10000)
    images = images.batch(128)
    first = next(iter(images))


peek_first_batch()
