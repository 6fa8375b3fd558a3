# Reproduction (our own minimal rewrite) of the Streamlit app posted in
# https://github.com/streamlit/streamlit/issues/12045 (Keras 3, TF or torch backend).
# Streamlit executes this whole script again on every interaction.
import os

import keras
import numpy as np
import psutil
import streamlit as st
from keras import Model, layers


def log_rss():
    rss_mb = psutil.Process(os.getpid()).memory_info().rss / 1024 / 1024
    print(f"RSS: {rss_mb:.2f} MB")


st.title("Scoring 1024-dim vectors")


@keras.saving.register_keras_serializable()
class VectorScorer(Model):
    """Small feed-forward scorer for 1024-dim vectors."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.wide = layers.Dense(256, activation="relu")
        self.narrow = layers.Dense(64, activation="relu")
        self.head = layers.Dense(1, activation="sigmoid")

    def call(self, inputs, *args, **kwargs):
        return self.head(self.narrow(self.wide(inputs)))


def random_vectors(count):
    return np.random.rand(count, 1024).astype("float32")


scorer = VectorScorer()
vectors = random_vectors(1000)

position = st.session_state.get("position", 0)
sample = vectors[position:position + 1]
st.write("score:", float(scorer(sample)[0, 0]))

if st.button("Next vector"):
    st.session_state["position"] = (position + 1) % len(vectors)
    st.rerun()

log_rss()
