# Reproduction (our own minimal rewrite) of the situation in
# https://github.com/tensorflow/tensorflow/issues/38628 (TF 2.1): a @tf.function runs an RNN
# step by step for beam search with a Python `for` loop; AutoGraph unrolls it, so the
# first call takes very long and builds a very large graph. The posted gist is not in our
# copy; vocabulary, sizes and the beam bookkeeping are ours.
import tensorflow as tf

vocab_size, embed_dim, units, beam_width, max_len = 5000, 128, 512, 8, 200

embedding = tf.keras.layers.Embedding(vocab_size, embed_dim)
cell = tf.keras.layers.GRUCell(units)
projection = tf.keras.layers.Dense(vocab_size)


@tf.function
def beam_search(initial_state, start_token):
    state = tf.tile(initial_state, [beam_width, 1])
    tokens = tf.fill([beam_width], start_token)
    scores = tf.zeros([beam_width])
    outputs = []
    for step in range(max_len):
        output, [state] = cell(embedding(tokens), [state])
        log_probs = tf.nn.log_softmax(projection(output))
        total = tf.reshape(scores[:, None] + log_probs, [-1])
        scores, flat_ids = tf.math.top_k(total, k=beam_width)
        beam_ids = flat_ids // vocab_size
        tokens = flat_ids % vocab_size
        state = tf.gather(state, beam_ids)
        outputs.append(tokens)
    return tf.stack(outputs, axis=1), scores


if __name__ == "__main__":
    encoder_state = tf.random.normal([1, units])
    for _ in range(10):
        sequences, final_scores = beam_search(encoder_state, 1)
