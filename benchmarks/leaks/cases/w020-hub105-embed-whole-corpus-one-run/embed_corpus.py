# Reproduction (our own minimal rewrite) of the code posted in
# https://github.com/tensorflow/hub/issues/105 (TF 1.x, Universal Sentence Encoder
# hub.Module, following the example notebook). The whole corpus is fed to the encoder
# in one session.run; at 100K sentences a 16 GB laptop runs out of memory, and the
# reporter needs to scale to millions.
import tensorflow as tf
import tensorflow_hub as hub

embed_transform = hub.Module("https://tfhub.dev/google/universal-sentence-encoder/2")

with open("corpus.txt") as corpus_file:
    corpus_sentences = [line.strip() for line in corpus_file]

input_placeholder = tf.placeholder(tf.string, shape=(None))
encoding_tensor = embed_transform(input_placeholder)

with tf.Session() as session:
    session.run([tf.global_variables_initializer(), tf.tables_initializer()])
    corpus_sentence_embedding = session.run(
        encoding_tensor, feed_dict={input_placeholder: corpus_sentences}
    )
