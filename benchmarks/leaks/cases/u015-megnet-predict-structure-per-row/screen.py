# Reproduction (our own minimal rewrite) of the code posted in
# https://github.com/materialyzeai/megnet/issues/161 (TF 2.3): a trained MEGNet model
# predicts one crystal structure at a time over a DataFrame column. Each structure becomes
# graph inputs of its own size. Model file and data loading are ours (not posted).
import functools

import pandas as pd
from megnet.models import MEGNetModel

model = MEGNetModel.from_file("formation_energy.hdf5")
candidates = pd.read_pickle("candidate_structures.pkl")


def predict_one(pred_model, structure):
    return pred_model.predict_structure(structure)


predict_with_model = functools.partial(predict_one, model)
results = candidates.join(candidates["structure"].apply(predict_with_model))
print(results.head())
