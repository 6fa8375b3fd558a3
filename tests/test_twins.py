"""The stdlib-ast twins (the gate, the project tables) agree with the LibCST facts: the same
canonical name for every call, and the project tables' effects computed from the summaries' own
definitions (effect kinds, ``UNDONE_BY``, ``is_cache_decorator``). The full comparison on any
corpus is ``python scripts/twins.py PATH...``."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "twins.py"


def _twins():
    spec = importlib.util.spec_from_file_location("twins", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["twins"] = module
    spec.loader.exec_module(module)
    return module


def test_every_call_of_the_fixtures_has_one_name_in_both_trees():
    twins = _twins()
    compared, differ = 0, []
    for path in sorted((ROOT / "fixtures").rglob("*.py")):
        for line, mine, theirs in twins.call_names(path.read_bytes()) or ():
            compared += 1
            if mine != theirs:
                differ.append(f"{path.relative_to(ROOT)}:{line}: {mine} (LibCST) vs {theirs} (stdlib)")
    assert compared > 1000 and not differ, differ


HELPERS = '''
import functools
from functools import lru_cache

import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])


def builds():
    return tf.keras.models.load_model("model.keras")


@lru_cache(maxsize=None)
def cached_by_a_call():
    return tf.keras.Sequential([tf.keras.layers.Dense(1)])


@functools.lru_cache
def cached_by_an_attribute():
    return tf.keras.models.load_model("model.keras")


@functools.cache
def cached_through_a_helper():
    return builds()


def cleans_up_and_predicts(x):
    tf.keras.backend.clear_session()
    built = builds()
    return model.predict(x), built
'''

GRAPH = '''
import tensorflow.compat.v1 as tf

tf.disable_eager_execution()


def adds_ops(x):
    return tf.reduce_sum(x * 2.0)


def resets_then_adds_ops(x):
    tf.reset_default_graph()
    return tf.reduce_sum(x * 2.0)
'''


def test_project_tables_and_summaries_agree_on_cleanup_and_caches(tmp_path):
    """A cached function passes nothing on, whatever the decorator's spelling; clear_session()
    undoes a helper's models only (its predict stays); a graph reset undoes its ops. A factory
    tells its callers it returns a model; a function returning a tuple with one does not."""
    twins = _twins()
    expected = {
        "builds": {"model", "returns_model"}, "cached_by_a_call": set(), "cached_by_an_attribute": set(),
        "cached_through_a_helper": set(), "cleans_up_and_predicts": {"predict"},
        "adds_ops": {"ops"}, "resets_then_adds_ops": set(),
    }
    found = {}
    for name, text in (("helpers.py", HELPERS), ("graph.py", GRAPH)):
        path = tmp_path / name
        path.write_text(text)
        found.update(twins.effects(str(path), path.read_bytes()))
    assert {f: libcst for f, (libcst, _) in found.items()} == expected
    assert {f: project for f, (_, project) in found.items()} == expected


def test_of_two_imports_of_one_name_the_later_wins_in_both_trees():
    """``try: from keras.src.saving import f`` / ``except ImportError: from tensorflow.keras.saving
    import f``: both trees read the imports in source order."""
    twins = _twins()
    source = (b"import tensorflow as tf\n"
              b"try:\n    from keras.src.saving import register_keras_serializable\n"
              b"except ImportError:\n    from tensorflow.keras.saving import register_keras_serializable\n\n"
              b"@register_keras_serializable()\nclass Block(tf.keras.layers.Layer):\n    pass\n")
    names = twins.call_names(source)
    assert [(mine, theirs) for _, mine, theirs in names] == [("keras.saving.register_keras_serializable",) * 2]
