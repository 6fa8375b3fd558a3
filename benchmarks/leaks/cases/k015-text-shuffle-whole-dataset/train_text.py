# Reproduction of https://github.com/tensorflow/tensorflow/issues/32376
# Our minimal rewrite of the TF2 "load text" tutorial pipeline the reporter followed with a larger
# corpus, not the reporter's code: names are ours; shuffle buffer = number of elements, as reported.
import tensorflow as tf
import tensorflow_datasets as tfds

FILE_NAMES = ['part_a.txt', 'part_b.txt', 'part_c.txt']
NUM_ELEMENTS = 1265800
BATCH_SIZE = 64
TAKE_SIZE = 5000


def add_label(line, label):
    return line, tf.cast(label, tf.int64)


labeled_sets = []
for label, name in enumerate(FILE_NAMES):
    lines = tf.data.TextLineDataset(name)
    labeled_sets.append(lines.map(lambda ex: add_label(ex, label)))

all_data = labeled_sets[0]
for extra in labeled_sets[1:]:
    all_data = all_data.concatenate(extra)
all_data = all_data.shuffle(NUM_ELEMENTS, reshuffle_each_iteration=False)

tokenizer = tfds.features.text.Tokenizer()
vocabulary = set()
for text, _ in all_data:
    vocabulary.update(tokenizer.tokenize(text.numpy()))
encoder = tfds.features.text.TokenTextEncoder(vocabulary)


def encode(text, label):
    return encoder.encode(text.numpy()), label


def encode_map(text, label):
    ids, label = tf.py_function(encode, inp=[text, label], Tout=(tf.int64, tf.int64))
    ids.set_shape([None])
    label.set_shape([])
    return ids, label


encoded = all_data.map(encode_map)
train_data = encoded.skip(TAKE_SIZE).shuffle(NUM_ELEMENTS)
train_data = train_data.padded_batch(BATCH_SIZE, padded_shapes=([None], []))
test_data = encoded.take(TAKE_SIZE).padded_batch(BATCH_SIZE, padded_shapes=([None], []))

model = tf.keras.Sequential([
    tf.keras.layers.Embedding(len(vocabulary) + 1, 64),
    tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(64)),
    tf.keras.layers.Dense(64, activation='relu'),
    tf.keras.layers.Dense(3, activation='softmax'),
])
model.compile(optimizer='adam', loss='sparse_categorical_crossentropy', metrics=['accuracy'])
model.fit(train_data, epochs=3, validation_data=test_data)
