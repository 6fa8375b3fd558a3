# Reproduction of https://github.com/tensorflow/tensorflow/issues/31419
# (minimal rewrite of the code posted in the thread; names ours).
# Reported: memory drops steadily until the process is killed around iteration 2400 (TF 1.14).
import numpy as np
import tensorflow as tf

for i in range(5000):
    print(i)
    batch = np.random.random((1024, 1024))
    tf.convert_to_tensor(batch, dtype=tf.float32)
