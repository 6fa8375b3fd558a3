# Reproduction of https://github.com/GPflow/GPflow/issues/590
# (minimal rewrite of the script posted in the thread; names ours).
# Reported: each ScipyOptimizer().minimize() takes longer than the last although the data size is fixed.
import time

import gpflow
import numpy as np
import tensorflow as tf

for trial in range(50):
    N = 12
    X = np.random.rand(N, 1)
    Y = np.sin(12 * X) + 0.66 * np.cos(25 * X) + np.random.randn(N, 1) * 0.1 + 3

    kernel = gpflow.kernels.Matern52(1, lengthscales=0.3)
    model = gpflow.models.GPR(X, Y, kern=kernel)

    start = time.time()
    gpflow.train.ScipyOptimizer().minimize(model)
    print(time.time() - start)
    print(len(tf.all_variables()))
