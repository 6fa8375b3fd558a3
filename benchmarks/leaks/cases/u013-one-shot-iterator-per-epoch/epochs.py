# Reproduction (our own minimal rewrite) of the code posted in
# https://github.com/tensorflow/tensorflow/issues/14868 (TF 1.4): a one-shot iterator is
# made again before every epoch so that each epoch is reshuffled without epochs merging.
import time

import tensorflow as tf

sample_count = 1000
epoch_count = 50
batch_size = 32
numbers = tf.data.Dataset.range(sample_count)

variant = 1  # 1: reshuffle, rebatch, new iterator; 2: rebatch, new iterator; 3: new iterator only

with tf.Session() as sess:
    for epoch in range(epoch_count):
        started = time.time()
        if variant == 1:
            epoch_data = numbers.shuffle(sample_count).batch(batch_size)
            iterator = epoch_data.make_one_shot_iterator()
        elif variant == 2:
            epoch_data = numbers.batch(batch_size)
            iterator = epoch_data.make_one_shot_iterator()
        else:
            iterator = numbers.make_one_shot_iterator()
        next_element = iterator.get_next()
        while True:
            try:
                sess.run(next_element)
            except tf.errors.OutOfRangeError:
                break
        print(epoch, time.time() - started)
