# Reproduction (our own minimal rewrite) of the Streamlit app posted in
# https://github.com/streamlit/streamlit/issues/2870 (TF 2.x, tf.keras DenseNet .h5).
# Streamlit re-runs this whole script on every upload; the reporter sees memory
# climb to 100% after a number of uploads and the app killed.
import numpy as np
import streamlit as st
import tensorflow as tf
from PIL import Image, ImageOps

LABELS = ["meal", "medicine", "document", "other"]


def classify(picture, classifier):
    picture = ImageOps.fit(picture, (224, 224), Image.LANCZOS).convert("RGB")
    pixels = np.asarray(picture).astype(np.float32) / 255.0
    batch = pixels[np.newaxis, ...]
    return classifier.predict(batch)


classifier = tf.keras.models.load_model("densenet_four_classes.h5")

st.write("# Four-class image recognition")
upload = st.file_uploader("Upload an image", type=["jpg", "png"])
if upload is None:
    st.text("No image uploaded yet")
else:
    picture = Image.open(upload)
    st.image(picture, use_column_width=True)
    scores = classify(picture, classifier)
    st.write("It is: " + LABELS[int(np.argmax(scores))])
