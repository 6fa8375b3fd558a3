# Reproduction of https://github.com/keras-team/keras/issues/10697
# (minimal rewrite of the code posted in the thread; names ours).
# Reported: RSS grows ~380 MB per iteration when a Keras backend variable is assigned a numpy array in a loop.
import os

import keras
import numpy as np
import psutil


def mem_usage():
    info = psutil.Process(os.getpid()).memory_info()
    return "rss={} vss={}".format(info.rss >> 20, info.vms >> 20)


buffer = keras.backend.variable(value=np.empty((int(1E8), 1), dtype=np.float32))

for i in range(3):
    buffer.assign(np.empty((int(1E8), 1)))
    print("i: {} {}".format(i, mem_usage()))
