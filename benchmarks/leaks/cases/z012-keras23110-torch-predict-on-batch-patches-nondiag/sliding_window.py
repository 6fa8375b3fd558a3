# Reproduction (our own minimal rewrite) of the workflow in
# https://github.com/keras-team/keras/issues/23110 (Keras 3, torch backend, GPU):
# sliding-window inference over a 3D volume, each patch predicted independently with
# predict_on_batch. The volume, the patch size and the model are ours.
import os

os.environ["KERAS_BACKEND"] = "torch"

import keras
import numpy as np

patch = 32


def build_segmenter():
    inputs = keras.Input(shape=(patch, patch, patch, 1))
    x = keras.layers.Conv3D(16, 3, padding="same", activation="relu")(inputs)
    x = keras.layers.Conv3D(16, 3, padding="same", activation="relu")(x)
    outputs = keras.layers.Conv3D(1, 1, activation="sigmoid")(x)
    return keras.Model(inputs, outputs)


def extract_patches(volume):
    depth, height, width = volume.shape
    for z in range(0, depth - patch + 1, patch):
        for y in range(0, height - patch + 1, patch):
            for x in range(0, width - patch + 1, patch):
                yield (z, y, x), volume[z:z + patch, y:y + patch, x:x + patch]


def segment(model, volume):
    output_volume = np.zeros_like(volume)
    for (z, y, x), block in extract_patches(volume):
        pred = model.predict_on_batch(block[None, ..., None])
        output_volume[z:z + patch, y:y + patch, x:x + patch] = np.asarray(pred)[0, ..., 0]
    return output_volume


if __name__ == "__main__":
    segmenter = build_segmenter()
    scan = np.random.rand(256, 256, 256).astype("float32")
    segment(segmenter, scan)
