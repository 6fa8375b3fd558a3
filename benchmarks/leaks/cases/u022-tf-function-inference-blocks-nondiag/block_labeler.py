# Reproduction (our own minimal rewrite) of the code posted in
# https://discuss.ai.google.dev/t/memory-leak-in-prediction-tensorflow/82886 (CPU only):
# an MLP rebuilt from saved weights, and a tf.function that labels a frame of blocks.
# The module-level model, the frame columns and the labelling entry point are ours.
import gc
import logging

import pandas as pd
import tensorflow as tf
from tensorflow.keras import Input, Sequential
from tensorflow.keras.layers import Dense, Dropout, LayerNormalization

logger = logging.getLogger(__name__)


def build_block_model(weights_path, feature_count):
    try:
        tf.keras.backend.clear_session()
        widths = [1024, 512, 256, 128, 64, 32]
        net = Sequential()
        net.add(Input(shape=(feature_count,)))
        for width in widths:
            net.add(Dense(width, activation="relu"))
            net.add(Dropout(0.2))
            net.add(LayerNormalization())
        net.add(Dense(16, activation="relu"))
        net.add(LayerNormalization())
        net.add(Dense(1, activation="sigmoid"))
        net.load_weights(weights_path)
        net.trainable = False
        for layer in net.layers:
            layer.trainable = False
    except Exception as error:
        logger.warning(error, exc_info=True)
        return None
    return net


SMALL_BLOCK_MODEL = build_block_model("small_blocks.weights.h5", 48)


@tf.function
def infer(net, inputs):
    return tf.stop_gradient(net(inputs, training=False))


def label_blocks(blocks: pd.DataFrame, normalized: pd.DataFrame) -> pd.DataFrame:
    predictions = infer(SMALL_BLOCK_MODEL, normalized)
    blocks["label"] = (predictions > 0.5).numpy().astype(int)
    tf.keras.backend.clear_session()
    del predictions
    gc.collect()
    return blocks
