# Reproduction of https://github.com/tensorflow/hub/issues/40 (comment of 2020-08-30)
# (minimal rewrite of the snippet posted in the thread; names ours, matching logic elided).
# Reported: the loop crashes after 700-1000 records at 100% memory.
import pandas as pd
import tensorflow_hub as hub
from sklearn.metrics.pairwise import cosine_similarity


def load_encoder():
    return hub.load("pretrained/use/4")


def embed(texts):
    encoder = load_encoder()
    return encoder(texts)


def best_match(frame, corpus, text_column):
    corpus_vectors = embed(corpus).numpy()
    matches = []
    for _, row in frame.iterrows():
        text = row[text_column]
        vector = embed([text])
        scores = cosine_similarity(vector, corpus_vectors)
        matches.append(corpus[scores.argmax()])
    return matches


if __name__ == "__main__":
    frame = pd.read_csv("records.csv")
    corpus = list(pd.read_csv("corpus.csv")["text"])
    print(best_match(frame, corpus, "text"))
