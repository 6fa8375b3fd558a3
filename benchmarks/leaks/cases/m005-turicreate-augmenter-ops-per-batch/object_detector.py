# Reproduction (our own minimal rewrite) of the caller in
# https://github.com/apple/turicreate/issues/2726: the object detector's training loop asks the
# augmenter for every batch. Batch contents and sizes are ours.
import numpy as np

from tf_image_augmenter import get_augmented_data

BATCH_SIZE = 32
MAX_ITERATIONS = 35000


def load_batch():
    images = [np.random.rand(416, 416, 3).astype(np.float32) for _ in range(BATCH_SIZE)]
    annotations = [np.zeros(6) for _ in range(BATCH_SIZE)]
    return images, annotations


def train_step(images, annotations):
    return float(np.mean(images))


for iteration in range(MAX_ITERATIONS):
    images, annotations = load_batch()
    images, annotations = get_augmented_data(images, annotations, 416, 416)
    loss = train_step(images, annotations)
