# Reproduction (our own minimal rewrite) of the situation in
# https://github.com/tensorflow/tensorflow/issues/55398 (TF 2.8.0, Ubuntu 20.04 and macOS 12.3;
# also filed as keras-team/keras#16320): calling model.compile() on the same model many times
# makes memory grow. The posted script is not in our copy: the model and the count are ours.
import psutil
import tensorflow as tf

model = tf.keras.Sequential([
    tf.keras.layers.Dense(256, activation="relu", input_shape=(64,)),
    tf.keras.layers.Dense(10, activation="softmax"),
])

process = psutil.Process()
for attempt in range(10_000):
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    if attempt % 500 == 0:
        print(attempt, process.memory_info().rss)
