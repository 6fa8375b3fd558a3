# Reproduction of https://github.com/tensorflow/hub/issues/45 (comment of 2018-05-20)
# (minimal rewrite of the worker posted in the thread, Python 2 upstream; names ours, Redis and logging elided).
# Reported: memory grows monotonically in the inference loop; with the graph finalized, embedder(...) raises.
import time

import tensorflow as tf
import tensorflow_hub as tf_hub

BATCH_SIZE = 64


def minibatch(items, size):
    for start in range(0, len(items), size):
        yield items[start:start + size]


def embedding_worker(jobs, store):
    embedder = tf_hub.Module("https://tfhub.dev/google/universal-sentence-encoder/1")
    table_op = tf.tables_initializer()
    var_op = tf.global_variables_initializer()
    with tf.Session() as session:
        session.run([var_op, table_op])
        for batch in minibatch(jobs, BATCH_SIZE):
            ids, sentences = zip(*batch)
            started = time.time()
            sentence_batch = embedder(list(sentences))
            vectors = session.run(sentence_batch)
            store.update(zip(ids, vectors))
            print("batch of %d in %.2fs" % (len(ids), time.time() - started))
