"""The stdlib-ast twins (the gate, the project tables) agree with the LibCST facts: the same
canonical name for every call, and the project tables' effects computed from the summaries' own
definitions (effect kinds, ``UNDONE_BY``, ``is_cache_decorator``); and the gate's may-predicates
over-approximate the facts they stand for (a loop of known count, a buffer sized like the whole
dataset). The full comparison on any corpus is ``python scripts/twins.py PATH...``."""

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


loaded = None


def returns_early_once_loaded():
    global loaded
    if loaded is not None:
        return loaded
    loaded = tf.keras.models.load_model("model.keras")
    return loaded


def loads_only_in_a_nested_def():
    def reload():
        return tf.keras.models.load_model("model.keras")
    return 1


class Encoder:
    def __init__(self):
        self.dim = None
        self.done = 0
        self.wait = 0

    def rebuilds_when_the_size_changes(self, x):
        if self.dim != x.shape[1]:
            self.dim = x.shape[1]
            self.net = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        return self.net(x)

    def loads_once_by_a_flag(self):
        if self.done == 0:
            self.net = tf.keras.models.load_model("model.keras")
            self.done = self.done + 1

    def loads_when_a_countdown_ends(self):
        if self.wait == 0:
            self.net = tf.keras.models.load_model("model.keras")
            self.wait = 10
        self.wait -= 1
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
    tells its callers it returns a model; a function returning a tuple with one does not. A
    loader that returns early once its global is set loads once; a def nested in a function runs
    when it is called, not with the function; a branch that sets the attribute it tests (a flag,
    the size it was built for) runs once per value, a countdown's on every call."""
    twins = _twins()
    expected = {
        "builds": {"model", "returns_model"}, "cached_by_a_call": set(), "cached_by_an_attribute": set(),
        "cached_through_a_helper": set(), "cleans_up_and_predicts": {"predict"},
        "returns_early_once_loaded": {"returns_model"}, "loads_only_in_a_nested_def": set(),
        "Encoder": set(), "Encoder.__init__": set(), "Encoder.rebuilds_when_the_size_changes": set(),
        "Encoder.loads_once_by_a_flag": set(),
        "Encoder.loads_when_a_countdown_ends": {"model"},
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


def test_every_loop_the_tracing_facts_count_the_gate_may_count():
    twins = _twins()
    counted, missed, passed_uncounted = 0, [], 0
    for path in sorted((ROOT / "fixtures").rglob("*.py")):
        for line, kind, may in twins.counted_loops(path.read_bytes()) or ():
            if kind == "python":
                counted += 1
                if not may:
                    missed.append(f"{path.relative_to(ROOT)}:{line}")
            passed_uncounted += kind != "python" and not may
    # The gate's answer varies (it is not True everywhere), and every counted loop passes it.
    assert counted > 100 and passed_uncounted > 100 and not missed, missed


def test_every_buffer_tfm302_sizes_the_gate_may_size():
    twins = _twins()
    sized, missed, unsized_skipped = 0, [], 0
    for path in sorted((ROOT / "fixtures").rglob("*.py")):
        for line, whole, may in twins.shuffle_buffers(path.read_bytes()) or ():
            if whole:
                sized += 1
                if not may:
                    missed.append(f"{path.relative_to(ROOT)}:{line}")
            unsized_skipped += not whole and not may
    assert sized >= 15 and unsized_skipped >= 5 and not missed, missed


def test_the_twin_comparison_reports_a_gate_that_misses(monkeypatch):
    """The comparison can fail: with the gate's loop predicate narrowed to ``range`` only, a
    counted loop over a literal list is reported missed."""
    twins = _twins()
    from tf_memlint import gate

    source = b"import tensorflow as tf\n\n@tf.function\ndef f(x):\n    for k in [1, 2, 3]:\n        x = x + k\n    return x\n"
    assert [(kind, may) for _, kind, may in twins.counted_loops(source)] == [("python", True)]
    monkeypatch.setattr(gate._Index, "_countable", lambda self, iterable: False)
    assert [(kind, may) for _, kind, may in twins.counted_loops(source)] == [("python", False)]
