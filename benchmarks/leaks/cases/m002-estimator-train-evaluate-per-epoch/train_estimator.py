# Reproduction (our own minimal rewrite) of the situation in
# https://github.com/tensorflow/tensorflow/issues/32052 (TF 2.0): an Estimator fed by a
# tf.data TFRecord pipeline, trained and evaluated from a Python loop over epochs; RAM grows
# linearly with every pass of the loop. The feature spec, model function and sizes are ours.
import tensorflow as tf

TRAIN_FILES = ["data/train-00000.tfrecord", "data/train-00001.tfrecord"]
EVAL_FILES = ["data/eval-00000.tfrecord"]
NUM_FEATURES = 250
BATCH_SIZE = 64
NUM_EPOCHS = 100
STEPS_PER_EPOCH = 500
EVAL_STEPS = 50


def decode(serialized_example):
    features = tf.io.parse_single_example(
        serialized_example,
        features={
            "data": tf.io.FixedLenFeature([NUM_FEATURES], tf.float32),
            "label": tf.io.FixedLenFeature([1], tf.float32),
        })
    return {"data": features["data"]}, features["label"]


def train_input_fn():
    dataset = tf.data.TFRecordDataset(TRAIN_FILES)
    dataset = dataset.map(decode, num_parallel_calls=tf.data.experimental.AUTOTUNE)
    dataset = dataset.shuffle(10000).batch(BATCH_SIZE)
    return dataset.prefetch(tf.data.experimental.AUTOTUNE)


def eval_input_fn():
    dataset = tf.data.TFRecordDataset(EVAL_FILES).map(decode).batch(BATCH_SIZE)
    return dataset


def model_fn(features, labels, mode):
    hidden = tf.compat.v1.layers.dense(features["data"], 128, activation=tf.nn.relu)
    logits = tf.compat.v1.layers.dense(hidden, 1)
    loss = tf.compat.v1.losses.sigmoid_cross_entropy(labels, logits)
    optimizer = tf.compat.v1.train.AdamOptimizer(1e-3)
    train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


estimator = tf.estimator.Estimator(model_fn=model_fn, model_dir="model_dir")

for epoch in range(NUM_EPOCHS):
    estimator.train(input_fn=train_input_fn, max_steps=(epoch + 1) * STEPS_PER_EPOCH)
    estimator.evaluate(input_fn=eval_input_fn, steps=EVAL_STEPS)
