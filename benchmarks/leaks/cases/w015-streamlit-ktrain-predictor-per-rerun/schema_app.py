# Reproduction (our own minimal rewrite) of the Streamlit app posted in
# https://github.com/streamlit/streamlit/issues/1685 (also posted as
# huggingface/transformers#5623): a ktrain DistilBERT text predictor (tf.keras) served
# from a Docker container. Each 'Predict' click takes memory that is never released;
# after several predictions the container is killed out of memory.
import ktrain
import streamlit as st

st.title("Schema predictor")

mode = st.selectbox("How would you like to predict?", ("Text", "Url"))

predictor = ktrain.load_predictor("./tmp/schema_mapping")


def top_probability(probabilities):
    best = 0
    for value in probabilities:
        if value > best:
            best = value
    return best


if mode == "Text":
    body = st.text_area("Insert your text here")
    if st.button("Predict"):
        st.success(predictor.predict(body))
        st.success("With a probability of {:.1%}".format(top_probability(predictor.predict_proba(body))))
