# Reproduction (our own minimal rewrite) of the pattern diagnosed in
# https://github.com/minimaxir/gpt-2-simple/issues/71 (TF 1.x): each text generation
# builds the "sample_sequence" ops again in the session's graph and then runs them, so a
# long-running server (Cloud Run) keeps every request's ops. Model and sizes are ours.
import tensorflow.compat.v1 as tf

tf.disable_eager_execution()

vocab_size = 512
hidden_size = 64


def load_weights(session):
    with session.graph.as_default():
        embeddings = tf.get_variable("wte", [vocab_size, hidden_size])
        session.run(tf.global_variables_initializer())
    return embeddings


def sample_sequence(embeddings, context, length):
    with tf.name_scope("sample_sequence"):
        def step(index, tokens):
            hidden = tf.nn.embedding_lookup(embeddings, tokens[:, -1])
            logits = tf.matmul(hidden, embeddings, transpose_b=True)
            next_token = tf.random.categorical(logits, 1, dtype=tf.int32)
            return index + 1, tf.concat([tokens, next_token], axis=1)

        _, tokens = tf.while_loop(
            lambda index, tokens: index < length, step, [tf.constant(0), context],
            shape_invariants=[tf.TensorShape([]), tf.TensorShape([1, None])])
        return tokens


def generate(session, embeddings, prefix_ids, length=40):
    context = tf.placeholder(tf.int32, [1, None])
    output = sample_sequence(embeddings, context, length)
    return session.run(output, feed_dict={context: [prefix_ids]})


def serve(session, embeddings, requests):
    for prefix_ids in requests:
        tokens = generate(session, embeddings, prefix_ids)
        print(tokens.shape, len(session.graph.get_operations()))


if __name__ == "__main__":
    session = tf.Session()
    embeddings = load_weights(session)
    serve(session, embeddings, [[1, 2, 3]] * 200)
