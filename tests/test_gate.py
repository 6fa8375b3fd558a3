"""The gate is a sound over-approximation of the rules, and the read-only walk visits
exactly what LibCST's own ``visit`` visits."""

from __future__ import annotations

import ast
import importlib.util
import os
from pathlib import Path

import libcst as cst
import pytest

from conftest import expectations, fixture_files
from tf_memlint import gate
from tf_memlint.engine import lint_source
from tf_memlint.gate import ALWAYS, could_fire, gate_reason, may_have_trigger, may_import_tf, rule_triggers
from tf_memlint.files import read_source
from tf_memlint.rule import Rule, all_rules
from tf_memlint.walk import walk

BAD_FIXTURES = [p for p in fixture_files() if p.name.startswith("bad") and expectations(p)]


def _corpus_sample(count: int) -> list[Path]:
    """Every k-th file of the installed keras and tensorflow/python trees that names TF."""
    files: list[Path] = []
    for name, sub in (("keras", ""), ("tensorflow", "python")):
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            continue
        root = Path(list(spec.submodule_search_locations)[0]) / sub
        for directory, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            files.extend(Path(directory) / f for f in sorted(filenames) if f.endswith(".py"))
    step = max(1, len(files) // count)
    return files[::step][:count]


@pytest.mark.parametrize("path", BAD_FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_gate_lets_every_bad_fixture_through(path):
    """For each code a bad fixture expects, the gate (text tests and ast gate) says it could fire."""
    raw = path.read_bytes()
    tree = ast.parse(raw)
    assert may_import_tf(raw)
    for code in {code for _, code, _ in expectations(path)}:
        assert may_have_trigger(raw, [code]), code
        assert could_fire(tree, [code]), (code, gate_reason(tree, [code]))


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_gated_and_ungated_engine_agree_on_fixtures(path):
    source = read_source(str(path))
    assert lint_source(source) == lint_source(source, gate=False)


def test_gated_and_ungated_engine_agree_on_real_code():
    """A sample of TensorFlow's and Keras's own files (public-API users among them)."""
    sample = _corpus_sample(40)
    if not sample:
        pytest.skip("neither keras nor tensorflow installed")
    for path in sample:
        source = read_source(str(path))
        assert lint_source(source) == lint_source(source, gate=False), path


@pytest.mark.parametrize("source", [
    "import tensorflow as tf\n",
    "import os, tensorflow as tf\n",
    "import tensorflow.python.ops\n",  # binds `tensorflow` itself
    "from tensorflow import keras\n",
    "from tensorflow.compat import v1\n",
    "import tf_keras\n",
    "from keras import layers\n",
    "def f():\n    import keras\n",
    "from tensorflow.python import keras\nfrom tensorflow import function\n",
    "from \\\n  tensorflow.python.ops import x\nimport keras\n",
    "import tensorflow_datasets as tfds\n",
    "import os,\\\n    tensorflow\n",
    "try: import keras\nexcept ImportError: pass\n",
    "x = 1; import tensorflow as tf\n",
    "from tensorflow import (\n    keras,  # comment\n    function)\n",
])
def test_import_text_test_keeps_public_imports(source):
    raw = source.encode()
    assert may_import_tf(raw)
    assert gate.ModuleFacts(ast.parse(raw)).imports_tf() or "python.ops" in source


@pytest.mark.parametrize("source", [
    "from tensorflow.python.framework import ops\n",
    "from tensorflow . python . ops import array_ops\n",
    "from keras.src import backend\nfrom keras.src.layers import Dense\n",
    "from tensorflow.core.protobuf import config_pb2\nfrom tensorflow.lite.python import lite\n",
    "import os\n",
    '@keras_export("keras.layers.Dense")\nclass Dense: pass\n',
    'URL = "https://storage.googleapis.com/tensorflow/keras-applications/"\n',
    "# This module needs tensorflow and keras.\nimport numpy\n",
    "from keras.src import tree as tensorflow\n",
])
def test_import_text_test_skips_internals(source):
    raw = source.encode()
    assert not may_import_tf(raw)
    assert not gate.ModuleFacts(ast.parse(raw)).imports_tf()


def test_gate_resolves_every_import_spelling():
    assert could_fire(ast.parse("import tensorflow as tf\n@tf.function\ndef f(): pass\n"))
    assert could_fire(ast.parse("from tensorflow import function\n@function\ndef f(): pass\n"))
    assert could_fire(ast.parse("import tensorflow.compat.v1 as tf\ns = tf.Session()\n"), ["TFM201"])
    assert could_fire(ast.parse("from tensorflow.keras import Model\nclass M(Model): pass\n"), ["TFM101"])
    assert not could_fire(ast.parse("import tensorflow as tf\nx = tf.constant(1)\n"), ["TFM101"])
    assert not could_fire(ast.parse("import numpy as np\n@np.function\ndef f(): pass\n"))
    # a name that only looks like a trigger: `function` attribute of something else
    assert not could_fire(ast.parse("import tensorflow as tf\nimport x\n@x.function\ndef f(): pass\n"),
                          ["TFM101"])


def test_a_lone_substring_trigger_is_tested():
    """"~text" on its own (not only inside a conjunction): TFM407's read_data_sets."""
    tf1 = "import tensorflow as tf\nimport input_data\nmnist = input_data.read_data_sets('MNIST_data')\n"
    assert could_fire(ast.parse(tf1), ["TFM407"])
    assert could_fire(ast.parse("import tensorflow as tf\nfrom tensorflow.keras.datasets import mnist\n"),
                      ["TFM407"])
    assert could_fire(ast.parse("import tensorflow as tf\nmnist = tf.keras.datasets.mnist\n"), ["TFM407"])
    assert not could_fire(ast.parse("import tensorflow as tf\nx = load()\nmodel(x)\n"), ["TFM407"])


def test_a_rule_without_triggers_always_runs():
    class Undeclared(Rule):
        code = "TFM999"

    assert rule_triggers(Undeclared) == {ALWAYS}
    declared = type("Declared", (Rule,), {"code": "TFM101", "triggers": frozenset({".foo"})})
    assert rule_triggers(declared) == {".foo"}


def test_every_registered_rule_declares_triggers():
    """Else the gate cannot skip files for it. (A rule without triggers is still correct, it only
    makes every TF file pay a LibCST parse.)"""
    missing = [code for code, rule in all_rules().items() if rule.triggers is None]
    assert not missing, f"add `triggers` to {missing} (see tf_memlint/gate.py)"


def test_triggers_come_from_the_facts_constants():
    """The gate follows when a fact module learns a spelling: the triggers are its constants."""
    from tf_memlint.context import TRACED_SCOPE
    from tf_memlint.facts import keras, sessions, splits, tracing

    registry = all_rules()
    assert tracing.TRACING_CALLS <= rule_triggers(registry["TFM101"]) == TRACED_SCOPE
    assert sessions.TF1_GRAPH_CALLS <= rule_triggers(registry["TFM106"])
    assert rule_triggers(registry["TFM201"]) == sessions.SESSION_CLASSES
    assert keras.KERAS_MODEL_BUILDERS <= rule_triggers(registry["TFM403"])
    assert all(t.startswith(".predict&") for t in rule_triggers(registry["TFM404"]))
    assert rule_triggers(registry["TFM407"]) == splits.SPLIT_TRIGGERS


def test_process_triggers_keep_every_spelling_and_skip_cnn_pooling(monkeypatch):
    """TFM501's triggers ("~Pool&~multiprocessing"...): a name imported under another name counts
    (``from multiprocessing import Pool as P``), a ``MaxPool2D`` layer alone does not."""
    from tf_memlint.facts.processes import PROCESS_TRIGGERS

    assert rule_triggers(all_rules()["TFM501"]) == PROCESS_TRIGGERS
    for source in ("import tensorflow as tf\nimport multiprocessing as mp\nmp.Pool(4).map(f, xs)\n",
                   "import tensorflow as tf\nfrom multiprocessing import Pool as P\nP(4).map(f, xs)\n",
                   "import tensorflow as tf\nfrom concurrent.futures import ProcessPoolExecutor as Ex\n",
                   "import tensorflow as tf\nimport concurrent.futures\n"
                   "concurrent.futures.ProcessPoolExecutor().map(f, xs)\n"):
        assert could_fire(ast.parse(source), ["TFM501"]), source
        assert may_have_trigger(source.encode(), ["TFM501"])
    for source in ("import tensorflow as tf\nfrom threading import Thread\n",
                   "import tensorflow as tf\nx = tf.keras.layers.MaxPool2D()\n"):
        assert not could_fire(ast.parse(source), ["TFM501"]), source
    # A lone "~substring" trigger works too, not only inside a conjunction.
    monkeypatch.setattr(all_rules()["TFM501"], "triggers", frozenset({"~Pool"}))
    monkeypatch.setattr(gate, "_TRIGGER_CACHE", {})
    assert could_fire(ast.parse("import tensorflow as tf\nx = tf.keras.layers.MaxPool2D()\n"), ["TFM501"])


class _Recorder(cst.CSTVisitor):
    def __init__(self) -> None:
        self.events: list[tuple[str, int]] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.events.append(("visit", id(node)))
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.events.append(("leave", id(original_node)))


def test_walk_visits_like_libcst():
    paths = fixture_files() + _corpus_sample(8)
    extra = ("class C(B, metaclass=M):\n  @d\n  async def f(self, /, a: int = 1, *b, c, **d) -> int:\n"
             "    try:\n      pass\n    except* E as e:\n      pass\n    match x:\n      case [1, *r] | {'k': v}:"
             " pass\n      case P(a=1) if g: pass\n    with (a as b, c):\n      yield from f'{x!r:>{w}}'\n")
    for source in [read_source(str(p)) for p in paths] + [extra]:
        module = cst.parse_module(source)
        expected, got = _Recorder(), _Recorder()
        module.visit(expected)
        walk(module, got)
        assert got.events == expected.events


def test_walk_does_not_recurse():
    source = "x = " + " + ".join(["a"] * 3000) + "\n"
    module = cst.parse_module(source)
    recorder = _Recorder()
    walk(module, recorder)  # a recursive walk would exhaust the default recursion limit
    assert len(recorder.events) > 6000
