# Reproduction (our own minimal rewrite) of the self-contained repro posted in
# https://github.com/tensorflow/tensorflow/issues/37515 (TF 2.1). A keras.utils.Sequence
# that draws images with PIL feeds model.fit, first with one worker, then with six;
# with several workers each epoch logs "Error occurred when finalizing
# GeneratorDataset iterator" and memory grows until the run dies.
import numpy as np
import tensorflow as tf
from PIL import Image, ImageDraw

WIDTH = 300
HEIGHT = 300
FILL = (255, 255, 255)


class DrawnShapes(tf.keras.utils.Sequence):
    def __init__(self, batches, width, height, fill):
        self.batches = batches
        self.width = width
        self.height = height
        self.fill = fill

    def __len__(self):
        return self.batches

    def __getitem__(self, index):
        images, labels = [], []
        for _ in range(32):
            canvas = Image.new("RGB", (self.width, self.height))
            label = np.random.randint(3)
            box = [20 * label, 20 * label, self.width // 2, self.height // 2]
            ImageDraw.Draw(canvas).rectangle(box, fill=self.fill)
            images.append(np.asarray(canvas, dtype=np.float32) / 255.0)
            labels.append(label)
        return np.stack(images), np.array(labels)


def main():
    model = tf.keras.Sequential()
    model.add(tf.keras.layers.Flatten(input_shape=(WIDTH, HEIGHT, 3)))
    model.add(tf.keras.layers.Dense(600, activation="relu"))
    model.add(tf.keras.layers.Dense(150, activation="relu"))
    model.add(tf.keras.layers.Dense(3, activation="softmax"))
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    shapes = DrawnShapes(100, WIDTH, HEIGHT, FILL)
    model.fit(x=shapes, workers=1, epochs=50, steps_per_epoch=len(shapes))
    model.fit(x=shapes, workers=6, epochs=50, steps_per_epoch=len(shapes))


if __name__ == "__main__":
    main()
