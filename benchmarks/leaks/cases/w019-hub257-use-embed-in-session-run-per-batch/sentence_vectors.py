# Reproduction (our own minimal rewrite) of the function posted in
# https://github.com/tensorflow/hub/issues/257 (TF 1.x, hub.Module Universal Sentence
# Encoder large/3). Batches of 2500 sentences are embedded one after another with the
# same module; the first calls take 12-13 s, by the 50th a call takes over a minute.
import tensorflow as tf
import tensorflow_hub as hub

ENCODER_URL = "https://tfhub.dev/google/universal-sentence-encoder-large/3"


def sentences_to_vectors(sentences, embed=None):
    if embed is None:
        embed = hub.Module(ENCODER_URL)

    with tf.Session() as session:
        session.run([tf.global_variables_initializer(), tf.tables_initializer()])
        return session.run(embed(sentences))


encoder = hub.Module(ENCODER_URL)
batches = [["sentence %d of batch %d" % (i, b) for i in range(2500)] for b in range(100)]
for batch in batches:
    vectors = sentences_to_vectors(batch, embed=encoder)
