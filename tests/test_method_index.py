"""The project's method index (project.py ``_method_callers``): a method that only one class of the
project defines, called from another module on a receiver whose class that module cannot see."""

from __future__ import annotations

from test_reach import _lint_package
from tf_memlint.facts.functions import METHOD_CALLERS
from tf_memlint.project import build

DATA = '''
import numpy as np
import tensorflow as tf


class FeatureData:
    def __init__(self, features):
        self.features = features

    def _rows(self, batch_size):
        for start in range(0, len(self.features), batch_size):
            yield self.features[start:start + batch_size]

    def as_tf_dataset(self, batch_size):
        return tf.data.Dataset.from_generator(  # expect: TFM304
            lambda: self._rows(batch_size), output_types=tf.float32)


class TrainingData:
    def __init__(self, features):
        self.features = features

    def as_training_dataset(self, batch_size):
        # one pipeline per training run: called once, from train()
        return tf.data.Dataset.from_generator(lambda: iter(self.features), output_types=tf.float32).batch(batch_size)


class Shards:
    def to_dataset(self):
        return tf.data.Dataset.from_generator(lambda: iter([]), output_types=tf.float32)


class Replay:
    def to_dataset(self):
        # a second def of the name in the project: a call of to_dataset() may run either
        return tf.data.Dataset.from_generator(lambda: iter([]), output_types=tf.float32)
'''
MODELS = '''
import tensorflow as tf


class DialogueModel(tf.keras.Model):
    def __init__(self, units):
        super().__init__()
        self.dense = tf.keras.layers.Dense(units)

    def predict(self, predict_data):
        batch = next(iter(predict_data.as_tf_dataset(batch_size=1)))
        return self.dense(batch)

    def encode(self, shards):
        return self.dense(next(iter(shards.to_dataset())))


def train(model, data, epochs):
    model.compile("adam", "mse")
    model.fit(data.as_training_dataset(32), epochs=epochs)
'''


def test_a_generator_pipeline_built_in_a_method_called_from_another_modules_predict(tmp_path, capsys, monkeypatch):
    """rasa#5529: ``predict`` turns its one-message input into a ``from_generator`` dataset through
    ``predict_data.as_tf_dataset()``, a method of a class of another module. Its receiver is a
    parameter; the name is defined once in the project, so the call runs that method. A training
    input built once from ``train()`` and a name defined by two classes stay silent."""
    out = _lint_package(tmp_path, capsys, monkeypatch, "bot", {"data": DATA, "models": MODELS})
    assert "from the entry point DialogueModel.predict() at models.py:11" in out, out


def test_the_index_holds_only_methods_defined_once(tmp_path):
    package = tmp_path / "bot"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "data.py").write_text(DATA)
    (package / "models.py").write_text(MODELS)
    tables = build([str(package / "data.py"), str(package / "models.py")])
    index = tables[str(package / "data.py")][METHOD_CALLERS]
    assert index == {"FeatureData.as_tf_dataset": [["DialogueModel.predict", "models.py", 11, 0]],
                     "TrainingData.as_training_dataset": [["train", "models.py", 20, 0]]}
