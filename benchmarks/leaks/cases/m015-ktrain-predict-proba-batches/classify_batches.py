# Reproduction (our own minimal rewrite) of the situation in
# https://github.com/amaiya/ktrain/issues/521 (ktrain on TF 2.x): calling
# predictor.predict_proba on successive batches of lines keeps increasing memory, which the
# reporter only stops with K.clear_session() after each batch. The predictor path, input file
# and batch size are ours.
import ktrain

predictor = ktrain.load_predictor("models/text_predictor")


def read_batches(path, batch_size=1000):
    with open(path, encoding="utf-8") as handle:
        batch = []
        for line in handle:
            batch.append(line.strip())
            if len(batch) == batch_size:
                yield batch
                batch = []
        if batch:
            yield batch


probabilities = []
for lines in read_batches("data/lines.txt"):
    probabilities.extend(predictor.predict_proba(lines))
