# Reproduction (our own minimal rewrite) of the code posted in
# https://github.com/tensorflow/tensorflow/issues/60599 (TF 2.12):
# 50 million integers sliced into a dataset and shuffled with a buffer as large as the data.
import numpy as np
import tensorflow as tf

element_count = 50_000_000
indices = tf.data.Dataset.from_tensor_slices(np.arange(element_count))
shuffled = iter(indices.shuffle(element_count))
print(next(shuffled))
