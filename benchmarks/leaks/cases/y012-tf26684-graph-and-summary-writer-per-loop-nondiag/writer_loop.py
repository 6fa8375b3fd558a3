# Reproduction (our own minimal rewrite) of the script posted in
# https://github.com/tensorflow/tensorflow/issues/26684 (TF 1.13.1, macOS):
# a loop that allocates a fresh graph and a summary FileWriter in it every iteration and
# prints the growth of peak RSS; the graph leaves scope each time but memory keeps rising.
import resource

import tensorflow as tf

LOGDIR = "/tmp/writer_loop"

previous_peak = 0
while True:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(peak - previous_peak)
    previous_peak = peak
    with tf.Graph().as_default():
        writer = tf.summary.FileWriter(LOGDIR)
