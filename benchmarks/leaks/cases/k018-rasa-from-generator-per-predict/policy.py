# Reproduction of https://github.com/RasaHQ/rasa/pull/5529
# Our minimal rewrite: the policy calls the model once per incoming message.
import numpy as np

from model_data import FeatureData
from models import DialogueModel


class DialoguePolicy:
    def __init__(self):
        self.model = DialogueModel(units=20)

    def predict_action_probabilities(self, message_features):
        data = FeatureData(message_features[np.newaxis, :].astype(np.float32))
        output = self.model.predict(data)
        return output['action_scores'].numpy()[0]


if __name__ == '__main__':
    policy = DialoguePolicy()
    for _ in range(10000):
        policy.predict_action_probabilities(np.random.rand(64))
