# Reproduction of https://github.com/tensorflow/tensorflow/issues/37960
# (minimal rewrite of the loop posted in the thread; names ours, the posted self.sess written as a module session).
# Reported: RSS grows from the first to the 10000th sess.run on a loaded SavedModel although the graph is finalized.
import gc
import os

import numpy as np
import psutil
import tensorflow as tf

process = psutil.Process(os.getpid())

N_REPS = 10000
saved_model_path = "export/1"
sess = tf.Session(graph=tf.Graph())
tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING], saved_model_path)
for i in range(N_REPS):
    sess.graph.finalize()
    tf.reset_default_graph()
    with tf.Graph().as_default() as graph:
        tf.get_default_graph().finalize()
        features = np.random.rand(1, 128).astype(np.float32)
        scores = sess.run(["loss:0"], feed_dict={"features:0": features})
        memory_used = process.memory_info().rss
        del features
    gc.collect()
