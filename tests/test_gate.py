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
from tf_memlint.context import TFContext
from tf_memlint.scopes import collect
from tf_memlint.walk import LAYOUT, Walked, children, walk

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
    # a tf.function declared to take a Python float (TFM110), under either spelling
    assert could_fire(ast.parse("import tensorflow as tf\n@tf.function\ndef f(rate: float): pass\n"))
    assert could_fire(ast.parse("from tensorflow import function\n@function\ndef f(rate: float): pass\n"))
    assert could_fire(ast.parse("import tensorflow.compat.v1 as tf\nfor i in x:\n    s.append(tf.Session())\n"),
                      ["TFM201"])
    assert could_fire(ast.parse("from tensorflow.keras import Model\nclass M(Model):\n"
                                "    def call(self, x):\n        for i in range(500): pass\n"), ["TFM101"])
    assert not could_fire(ast.parse("import tensorflow as tf\nx = tf.constant(1)\n"), ["TFM101"])
    assert not could_fire(ast.parse("import numpy as np\n@np.function\ndef f(rate: float): pass\n"))
    # a name that only looks like a trigger: `function` attribute of something else
    assert not could_fire(ast.parse("import tensorflow as tf\nimport x\n@x.function\ndef f(): pass\n"),
                          ["TFM101"])


def test_substring_triggers_in_a_conjunction():
    """TFM407: a split loader ("~read_data_sets", keras.datasets) and a convolution ("~Conv",
    "~conv", keras.applications) in the same module; either alone is not enough."""
    conv = "y = tf.layers.conv2d(x, 32, 5)\n"
    tf1 = "import tensorflow as tf\nimport input_data\nmnist = input_data.read_data_sets('MNIST_data')\n"
    assert could_fire(ast.parse(tf1 + conv), ["TFM407"])
    assert not could_fire(ast.parse(tf1), ["TFM407"])
    keras = "import tensorflow as tf\nfrom tensorflow.keras.datasets import mnist\n"
    assert could_fire(ast.parse(keras + "layer = tf.keras.layers.Conv2D(8, 3)\n"), ["TFM407"])
    assert could_fire(ast.parse(keras + "net = tf.keras.applications.ResNet50()\n"), ["TFM407"])
    assert not could_fire(ast.parse(keras + "layer = tf.keras.layers.Dense(8)\n"), ["TFM407"])
    assert could_fire(ast.parse("import tensorflow as tf\nmnist = tf.keras.datasets.mnist\n" + conv), ["TFM407"])
    assert not could_fire(ast.parse("import tensorflow as tf\nx = load()\nmodel(x)\n" + conv), ["TFM407"])


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
    from tf_memlint.facts.tracing import TRACED_SCOPE
    from tf_memlint.facts import keras, sessions, splits, tracing

    registry = all_rules()
    assert tracing.TRACING_CALLS <= rule_triggers(registry["TFM101"]) == TRACED_SCOPE
    assert sessions.TF1_GRAPH_CALLS <= rule_triggers(registry["TFM106"])
    assert rule_triggers(registry["TFM201"]) == sessions.SESSION_CLASSES
    assert keras.KERAS_MODEL_BUILDERS <= rule_triggers(registry["TFM403"])
    assert all(t.startswith(".predict&") for t in rule_triggers(registry["TFM404"]))
    assert rule_triggers(registry["TFM407"]) == {
        f"{split}&{conv}" for split in splits.SPLIT_TRIGGERS for conv in splits.CONVOLUTION_TRIGGERS}


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


def _below(node: cst.CSTNode, skip: tuple[type, ...]) -> list[cst.CSTNode]:
    """The nodes under ``node`` found by walking it (what TFContext.nodes_in did before Walked)."""
    found, stack = [], list(reversed(children(node)))
    while stack:
        child = stack.pop()
        if not isinstance(child, skip):
            found.append(child)
            stack.extend(reversed(children(child)))
    return found


def test_recorded_walk_replays_and_lists_subtrees_like_a_walk():
    """Walked: the scope pre-pass's walk, recorded; the rules' walk replays it and nodes_in reads
    subtrees off it. Both must be exactly what walking again gives, on real code."""
    own_scopes = (cst.FunctionDef, cst.Lambda, cst.ClassDef)
    for path in fixture_files() + _corpus_sample(16):
        module = cst.parse_module(read_source(str(path)))
        first, walked_again, replayed = _Recorder(), _Recorder(), _Recorder()
        recorded = Walked(module, first)
        walk(module, walked_again)
        recorded.replay(replayed)
        assert first.events == walked_again.events == replayed.events, path
        nodes = [n for n in recorded.events if n is not None]
        for node in nodes[:: max(1, len(nodes) // 200)] + [n for n in nodes if isinstance(n, own_scopes)]:
            if not children(node):
                assert recorded.below(node) is None  # not indexed: nothing under it
                continue
            assert recorded.below(node) == _below(node, ()), path
            assert recorded.below(node, own_scopes) == _below(node, own_scopes), path
        # holders: which top-level statement is or holds each node, as walking each one says
        expected = {id(n): i for i, top in enumerate(module.body) for n in [top, *_below(top, ())]}
        assert recorded.holders({id(n) for n in nodes}, list(module.body)) == expected, path
    assert Walked(cst.parse_module("x = 1\n"), _Recorder()).below(cst.Name("x")) is None  # not in the tree


_NESTED_LAYOUTS = (
    "import tensorflow as tf\n\n\nclass A:\n    @staticmethod\n    def f(x):\n        if x:\n"
    "            # a comment\n            y = tf.add(\n                x,\n    1)\n        else:\n"
    "            y = 2; z = tf.constant(3)\n        for i in range(3):\n            try:\n"
    "                g(i)\n            except E:\n                pass\n        return y\n",
    "import tensorflow as tf\r\ndef f():\r\n\twith tf.Session() as s:\r\n\t\ts.run(\\\r\n"
    "\t\t\tx)\r\n\twhile 1:\r\n\t  async_ = [tf.add(1, 2)\r\n for _ in \"\"\"a\r\nb\"\"\"]\r\n",
)


def test_positions_placed_per_statement_are_the_whole_module_positions():
    """positions_of generates code only for the innermost statements that hold the nodes asked,
    placed by the stdlib tree: each node's position must be the one the whole module gives."""
    from libcst.metadata import MetadataWrapper, PositionProvider

    from tf_memlint.walk import positions_of

    sources = [read_source(str(path)) for path in fixture_files()[::3] + _corpus_sample(8)] + list(_NESTED_LAYOUTS)
    for source in sources:
        module = cst.parse_module(source)
        tree = ast.parse(source)
        whole = {id(node): (position.start.line, position.start.column) for node, position
                 in MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider).items()}
        walked = collect(module).walked
        nodes = [n for n in walked.events if n is not None]
        for node in nodes[:: max(1, len(nodes) // 60)]:
            walked.placed.clear()  # one node at a time, as FunctionFacts.line_of asks
            assert positions_of(module, source, [node], tree, walked) == {id(node): whole[id(node)]}, source[:80]
        walked.placed.clear()
        assert positions_of(module, source, nodes, tree, walked) == {id(n): whole[id(n)] for n in nodes}


def test_containment_read_off_the_recording_is_a_walk_s():
    """syntax.contains reads the recording in use (walk.in_use) instead of walking the subtree:
    the same answer for nodes of the recording, and a walk for what it does not hold (layout,
    another tree)."""
    from tf_memlint.syntax import contains
    from tf_memlint.walk import in_use, preorder

    for path in fixture_files()[::6] + _corpus_sample(4):
        module = cst.parse_module(read_source(str(path)))
        walked = collect(module).walked
        recorded = [n for n in walked.events if n is not None]
        assert len({id(n) for n in recorded}) == len(recorded)  # each node once: an id names one event
        every = preorder(module)
        roots = [n for n in recorded if children(n)][:: max(1, len(recorded) // 150)]
        targets = every[:: max(1, len(every) // 150)]
        expected = {(id(r), id(t)): contains(r, t) for r in roots for t in targets}  # walked: no recording in use
        with in_use(walked):
            assert {(id(r), id(t)): contains(r, t) for r in roots for t in targets} == expected, path
            assert contains(module.body[0], cst.Name("x")) is False  # another tree's node: walked


def test_the_pre_pass_records_the_walk_without_layout():
    """The scope pre-pass leaves layout (whitespace, comments, brackets, separators) out of its
    recorded walk: it is that walk with every layout subtree cut, and below() lists the same
    subtrees without layout. Nothing that visits the recorded walk may need a layout node."""
    own_scopes = (cst.FunctionDef, cst.Lambda, cst.ClassDef)
    for path in fixture_files()[::4] + _corpus_sample(8):
        module = cst.parse_module(read_source(str(path)))
        walked = collect(module).walked
        full = _NodeRecorder()
        walk(module, full)
        kept, cut = [], 0
        for node, entering in full.events:
            if cut:
                cut += 1 if entering else -1
            elif entering and type(node) in LAYOUT:
                cut = 1
            else:
                kept.append(node if entering else None)
        assert walked.events == kept, path
        nodes = [n for n in walked.events if n is not None]
        for node in nodes[:: max(1, len(nodes) // 100)] + [n for n in nodes if isinstance(n, own_scopes)]:
            below = walked.below(node, own_scopes)
            expected = [n for n in _below(node, own_scopes) if not _in_layout(n, node)]
            assert (below or []) == expected, path
    visited = {name for rule in all_rules().values() for name in dir(rule) if name.startswith(("visit_", "leave_"))}
    layout_names = {kind.__name__ for kind in LAYOUT}
    assert not {name.split("_", 1)[1] for name in visited} & layout_names
    assert not (TFContext.ENTERED | TFContext.LEFT) & LAYOUT
    assert all(not kind.__subclasses__() for kind in LAYOUT)  # below() tests types by identity


class _NodeRecorder(cst.CSTVisitor):
    def __init__(self) -> None:
        self.events: list[tuple[cst.CSTNode, bool]] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.events.append((node, True))
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.events.append((original_node, False))


def _in_layout(node: cst.CSTNode, root: cst.CSTNode) -> bool:
    """``node`` is layout or under a layout node of ``root``'s subtree."""
    stack = [(root, False)]
    while stack:
        current, inside = stack.pop()
        inside = inside or type(current) in LAYOUT
        if current is node:
            return inside
        stack.extend((child, inside) for child in children(current))
    return False


def test_a_recorded_walk_refuses_a_pruning_visitor():
    class Pruning(_Recorder):
        def on_visit(self, node: cst.CSTNode) -> bool:
            return not isinstance(node, cst.FunctionDef)

    with pytest.raises(ValueError):
        Walked(cst.parse_module("def f():\n    pass\n"), Pruning())


def test_walk_does_not_recurse():
    source = "x = " + " + ".join(["a"] * 3000) + "\n"
    module = cst.parse_module(source)
    recorder = _Recorder()
    walk(module, recorder)  # a recursive walk would exhaust the default recursion limit
    assert len(recorder.events) > 6000


# Structure (gate.Inside): a rule's trigger is not enough, the code must have the shape the rule
# needs. Each case: (code, source after `import tensorflow as tf`, could the rule fire there).
_TF_LOOP = "    for i in range(500):\n        x = x * 2\n    return x\n"
STRUCTURE_CASES = [
    # TFM101/102: a loop in a function TensorFlow may trace.
    ("TFM101", "@tf.function\ndef f(x):\n    return x * 2\nfor i in range(500):\n    f(i)\n", False),
    ("TFM101", "class M(tf.keras.Model):\n    def fit_all(self, x):\n" + _TF_LOOP.replace("    ", "        "),
     False),
    ("TFM101", "m = tf.keras.Model(i, o)\ndef f(x):\n" + _TF_LOOP + "y = f(1)\n", False),
    ("TFM101", "@tf.function\ndef f(x):\n" + _TF_LOOP, True),
    ("TFM101", "from tensorflow import function as tff\n@tff(jit_compile=True)\ndef f(x):\n"
               "    while x < 500:\n        x += 1\n    return x\n", True),
    ("TFM101", "def f(x):\n" + _TF_LOOP + "g = tf.function(f)\n", True),
    ("TFM101", "def f(x):\n" + _TF_LOOP + "y = tf.switch_case(i, [g, f])\n", True),
    ("TFM101", "def f(x):\n" + _TF_LOOP + "y = tf.switch_case(i, {0: f})\n", True),
    ("TFM101", "def parse(x):\n" + _TF_LOOP + "ds = tf.data.Dataset.range(9).map(parse)\n", True),
    ("TFM101", "@tf.function\ndef outer(x):\n    def inner(x):\n" + _TF_LOOP.replace("    ", "        ")
               + "    return inner(x)\n", True),
    ("TFM101", "class Block(tf.keras.layers.Layer):\n    pass\nclass Net(Block):\n    def call(self, x):\n"
               + _TF_LOOP.replace("    ", "        "), True),
    ("TFM101", "from tensorflow.keras import Model as M\nclass Net(M):\n    def train_step(self, x):\n"
               + _TF_LOOP.replace("    ", "        "), True),
    ("TFM101", "class T:\n    def __init__(self):\n        self.step = tf.function(self._step)\n"
               "    def _step(self, x):\n" + _TF_LOOP.replace("    ", "        "), True),
    # ... whose count may be read off the code (COUNTED_LOOP): not over a tensor, a dataset, an
    # attribute, or a name in a module that makes no NumPy array; not a while on another test
    ("TFM101", "@tf.function\ndef f(self, x):\n    for layer in self.layers:\n        x = layer(x)\n    return x\n",
     False),
    ("TFM101", "@tf.function\ndef f(xs):\n    for x in xs:\n        y = x * 2\n    return y\n", False),
    ("TFM101", "@tf.function\ndef f(x, n):\n    for i in tf.range(n):\n        x = x * 2\n    return x\n", False),
    ("TFM101", "@tf.function\ndef f(x, n):\n    while tf.less(x, n):\n        x += 1\n    return x\n", False),
    ("TFM101", "@tf.function\ndef f(x):\n    while x > 0:\n        x -= 1\n    return x\n", False),
    # ... and every iterable trip_count counts, the range of a caller's bound, a counter's while
    ("TFM101", "@tf.function\ndef f(x):\n    for k in [1, 2, 3]:\n        x = x * k\n    return x\n", True),
    ("TFM101", "@tf.function\ndef f(x):\n    for k in (1, 2):\n        x = x * k\n    return x\n", True),
    ("TFM101", "@tf.function\ndef f(x, n):\n    for i in range(n):\n        x = x * 2\n    return x\n", True),
    ("TFM101", "@tf.function\ndef f(x):\n    for i, k in enumerate(reversed(list(range(500)))):\n"
               "        x = x * k\n    return x\n", True),
    ("TFM101", "from tqdm.auto import trange\n@tf.function\ndef f(x):\n    for i in trange(500):\n"
               "        x = x * 2\n    return x\n", True),
    ("TFM101", "import numpy as np\n@tf.function\ndef f(x):\n    for k in np.arange(500):\n"
               "        x = x * k\n    return x\n", True),
    ("TFM101", "from numpy import zeros\nks = zeros(500)\n@tf.function\ndef f(x):\n    for k in ks:\n"
               "        x = x * k\n    return x\n", True),
    ("TFM101", "@tf.function\ndef f(x, n):\n    i = 0\n    while i <= n:\n        i += 1\n    return x\n", True),
    # TFM102: an `.append` in a loop of a traced function's own frame (not in a lambda or def
    # nested in the loop, not after the loop)
    ("TFM102", "@tf.function\ndef f(x, n):\n    for i in tf.range(n):\n        x += 1\n    out = []\n"
               "    out.append(x)\n    return out\n", False),
    ("TFM102", "@tf.function\ndef f(xs, out):\n    for x in xs:\n        g = lambda: out.append(x)\n    return g\n",
     False),
    ("TFM102", "@tf.function\ndef g(x):\n    return x\ndef f(x, n):\n    out = []\n    for i in range(n):\n"
               "        out.append(x * i)\n    return out\n", False),
    ("TFM102", "@tf.function\ndef f(x, n):\n    out = []\n    for i in tf.range(n):\n        out.append(x * i)\n"
               "    return tf.stack(out)\n", True),
    ("TFM102", "@tf.function\ndef f(x, n):\n    out = []\n    while n > 0:\n        out.append(x)\n"
               "        n -= 1\n    return out\n", True),
    ("TFM102", "@tf.function\ndef f(x):\n    def g(y):\n        out = []\n        for i in range(500):\n"
               "            out.append(y * i)\n        return out\n    return g(x)\n", True),
    ("TFM102", "@tf.function\ndef f(xs):\n    out = []\n    for x in xs:\n        [out.append(v) for v in x]\n"
               "    return out\n", True),
    # TFM103: global/nonlocal, a mutating method, an item write, in a traced function.
    ("TFM103", "cache = {}\ncache['a'] = 1\ncache.update(b=2)\n@tf.function\ndef f(x):\n    return x + 1\n",
     False),
    ("TFM103", "n = 0\n@tf.function\ndef f(x):\n    global n\n    n = n + 1\n    return x\n", True),
    ("TFM103", "seen = []\n@tf.function\ndef f(x):\n    seen.append(x)\n    return x\n", True),
    ("TFM103", "state = {}\n@tf.function\ndef f(x):\n    state['k'] = x\n    return x\n", True),
    ("TFM103", "state = {}\n@tf.function\ndef f(x):\n    state['k'] += x\n    return x\n", True),
    # ... of a name the function does not bind (OUTER_MUTATION): not its own list or dict, a
    # parameter, a loop target, an attribute
    ("TFM103", "@tf.function\ndef f(x):\n    out = []\n    out.append(x)\n    d = {}\n    d['k'] = x\n"
               "    return out, d\n", False),
    ("TFM103", "@tf.function\ndef f(x, acc):\n    acc.append(x)\n    acc[0] += x\n    return x\n", False),
    ("TFM103", "@tf.function\ndef f(x, bufs):\n    for buf in bufs:\n        buf.append(x)\n    return x\n", False),
    ("TFM103", "class L(tf.keras.layers.Layer):\n    def call(self, x):\n        self.seen.append(x)\n"
               "        return x\n", False),
    ("TFM103", "seen = []\nseen.append(1)\n@tf.function\ndef f(x, seen):\n    seen.append(x)\n    return x\n", False),
    # ... and a closure's container, one of a traced def written in a lambda nested in it
    ("TFM103", "def make():\n    seen = []\n    @tf.function\n    def f(x):\n        seen.append(x)\n"
               "        return x\n    return f\n", True),
    ("TFM103", "@tf.function\ndef f(x):\n    out = []\n    g = lambda v: out.append(v)\n    g(x)\n    return out\n",
     True),
    ("TFM103", "state = {}\n@tf.function\ndef f(x):\n    class C:\n        state['k'] = x\n    return x\n", True),
    # TFM303: a cache where the module names something that reads or decodes files (READS_FILES)
    ("TFM303", "ds = tf.data.Dataset.from_tensor_slices((x, y)).map(lambda a, b: (a / 255, b)).cache()\n", False),
    ("TFM303", "ds = tf.data.Dataset.list_files(p).map(lambda f: tf.io.decode_jpeg(tf.io.read_file(f))).cache()\n",
     True),
    ("TFM303", "from tensorflow.io import decode_png\ndef load(f):\n    return decode_png(f)\n"
               "ds = tf.data.Dataset.list_files(p).map(load).cache()\n", True),
    ("TFM303", "ds = tf.keras.utils.image_dataset_from_directory('d').cache()\n", True),
    # TFM104: a call of a name bound to a tf.function, in a loop (hand-written literal calls: silent).
    ("TFM104", "@tf.function\ndef f(x, k):\n    return x * k\ny = g(1, 2)\n", False),
    ("TFM104", "@tf.function\ndef f(x, k):\n    return x * k\ny = f(x, k)\n", False),
    ("TFM104", "@tf.function\ndef f(x, k):\n    return x * k\nfor k in range(9):\n    def g():\n"
               "        f(x, k)\n", False),
    ("TFM104", "@tf.function\ndef f(x, k):\n    return x * k\nfor k in range(9):\n    y = f(x, k)\n", True),
    ("TFM104", "@tf.function\ndef f():\n    return 1\nfor k in range(9):\n    y = f()\n", False),  # nothing passed
    ("TFM104", "@tf.function\ndef f(x, k):\n    return x * k\ny = f(x, k=-0.5)\n", False),
    ("TFM104", "@tf.function\ndef f(x, k):\n    return x * k\ny = f(1, 2)\nz = f(1, 3)\n", False),
    ("TFM104", "def h(x, k):\n    return x * k\ng = tf.function(h)\nfor i in range(9):\n    y = g(1, i)\n", True),
    ("TFM104", "def h(x, k):\n    return x * k\ng = tf.function(jit_compile=True)(h)\nwhile True:\n    y = g(1, 2)\n",
     True),
    ("TFM104", "class T:\n    @tf.function\n    def step(self, k):\n        return k\n"
               "    def run(self):\n        for i in range(9):\n            self.step(i)\n", True),
    # TFM106: traced code or an embedding call, and an array built by NumPy.
    ("TFM106", "import numpy as np\nm = tf.keras.Model(i, o)\ny = m(np.zeros(10 ** 7))\n", False),
    ("TFM106", "import numpy as np\n@tf.function\ndef f(x):\n    return tf.constant(x)\ny = f(np.sum(z))\n", False),
    ("TFM106", "from numpy import zeros\ns = tf.compat.v1.Session()\nc = tf.constant(zeros(10 ** 7))\n", True),
    ("TFM106", "import numpy as np\nx = tf.compat.v1.placeholder(tf.float32)\nc = tf.constant(np.zeros(10 ** 7))\n",
     True),
    ("TFM106", "import numpy as np\nt = np.zeros(10 ** 7)\n@tf.function\ndef f(i):\n    return tf.gather(t, i)\n",
     True),
    ("TFM106", "import numpy as np\nt = np.load('t.npy').astype('float32')\nu = t * 2\n"
               "@tf.function\ndef f(i):\n    return tf.gather(u, i)\n", True),
    ("TFM106", "import numpy as np\nt = np.zeros(10 ** 7)\n@tf.function\ndef f(i):\n    global t\n"
               "    t = i\n    return t\n", True),
    # the traced function binds x itself (a parameter, a loop target): not the module's array
    ("TFM106", "import numpy as np\nx = np.zeros(10 ** 7)\n@tf.function\ndef f(x):\n    return x * 2\n"
               "@tf.function\ndef g(y):\n    for x in y:\n        y += x\n    return y\n", False),
    # TFM301: a large-tensor builder in a function run once per element.
    ("TFM301", "def f(row):\n    return row\nz = tf.repeat(x, 16384)\ny = tf.map_fn(f, rows)\n", False),
    ("TFM301", "def f(row):\n    return tf.repeat(row, 16384)\ny = tf.map_fn(f, rows)\n", True),
    ("TFM301", "ds = tf.data.Dataset.range(9).map(lambda x: tf.tile(x, [4096]))\n", True),
    ("TFM301", "def aug(x):\n    return tf.zeros([2048, 2048])\n"
               "ds = tf.data.Dataset.range(9).map(lambda x, y: (aug(x), y))\n", True),
    # TFM402: an append in a loop of the same function.
    ("TFM402", "losses = []\nloss = train_step(x)\nlosses.append(loss)\n", False),
    ("TFM402", "for x in xs:\n    loss = train_step(x)\n    def keep():\n        losses.append(loss)\n", False),
    ("TFM402", "for x in xs:\n    losses.append(model(x))\nopt.apply_gradients(g)\n", False),
    ("TFM402", "for x in xs:\n    loss = train_step(x)\n    losses.append(loss)\n", True),
    ("TFM402", "def step(x):\n    return opt.apply_gradients(g)\nfor x in xs:\n    losses.append(step(x))\n", True),
    ("TFM402", "def step(x):\n    return opt.minimize(f)\nfor x in xs:\n"
               "    losses.append(strategy.run(step, args=(x,)))\n", True),
    ("TFM402", "for e in range(9):\n    for x in xs:\n        losses.append(model(x))\n"
               "    w.assign_sub(g)\n", True),
    ("TFM402", "while True:\n    losses.append(opt.minimize(f))\n", True),
    ("TFM402", "def inner(g):\n    opt.apply_gradients(g)\ndef outer(x):\n    inner(x)\nfor x in xs:\n    outer(x)\n"
               "    losses.append(model(x))\n", True),
    ("TFM402", "def step(x):\n    return opt.minimize(f)\nfor x in xs:\n    losses.append(strategy.run(fn=step))\n", True),
    # a loop that calls only defs that take no step, or runs a session, does not train
    ("TFM402", "def evaluate(x):\n    return model(x)\nfor x in xs:\n    losses.append(evaluate(x))\n"
               "    losses.append(strategy.run(evaluate, args=(x,)))\n    losses.append(sess.run(loss))\n"
               "opt.apply_gradients(g)\n", False),
    # TFM404: a predict in a loop, a request/batch handler, or a function called from one.
    ("TFM404", "m = tf.keras.models.load_model('m')\ny = m.predict(x)\n"
               "def score(x):\n    return m.predict(x)\n", False),
    ("TFM404", "m = tf.keras.models.load_model('m')\nfor x in xs:\n    y = m.predict(x)\n", True),
    ("TFM404", "m = tf.keras.models.load_model('m')\ndef score(x):\n    return m.predict(x)\n"
               "def run(xs):\n    return score(xs)\nfor x in xs:\n    run(x)\n", True),
    ("TFM404", "class Agent:\n    def __init__(self):\n        self.m = tf.keras.models.load_model('m')\n"
               "    def act(self, s):\n        return self.m.predict(s)\nfor s in states:\n    agent.act(s)\n", True),
    ("TFM404", "class Agent:\n    def __init__(self, s):\n        self.q = M.predict(s)\n"
               "m = tf.keras.Sequential()\nwhile True:\n    Agent(s)\n", True),
    ("TFM404", "m = tf.keras.models.load_model('m')\n@app.route('/predict')\ndef serve():\n"
               "    return m.predict(x)\n", True),
    ("TFM404", "m = tf.keras.models.load_model('m')\n@app.post('/predict')\ndef serve():\n"
               "    return helper()\ndef helper():\n    return m.predict(x)\n", True),
    ("TFM404", "class Cb(tf.keras.callbacks.Callback):\n    def on_train_batch_end(self, batch, logs=None):\n"
               "        self.model.predict(x)\nm = tf.keras.Sequential()\n", True),
    ("TFM404", "m = tf.keras.models.load_model('m')\ndef view(request):\n    return m.predict(x)\n", True),
    ("TFM404", "m = tf.keras.models.load_model('m')\nclass S(pb2_grpc.ModelServicer):\n"
               "    def Predict(self, req, ctx):\n        return m.predict(x)\n", True),
    # TFM201: a session made once at script level lives as long as the program: only a loop or a
    # comprehension, or a def or class (the owner) called from a def or a loop, can make one again
    # and again (an InteractiveSession is judged anywhere).
    ("TFM201", "sess = tf.compat.v1.Session()\nsess.run(y)\nclass A:\n    s = tf.compat.v1.Session()\n", False),
    ("TFM201", "sess = tf.compat.v1.InteractiveSession()\n", True),
    ("TFM201", "def make():\n    return tf.compat.v1.Session()\nclass Agent:\n    def __init__(self):\n"
               "        self.sess = tf.compat.v1.Session()\nagent = Agent()\nsess = make()\nlambda: make()\n", False),
    ("TFM201", "def make():\n    return tf.compat.v1.Session()\nfor i in range(3):\n    make()\n", True),
    ("TFM201", "class Agent:\n    def __init__(self):\n        self.sess = tf.compat.v1.Session()\n"
               "def main():\n    agent = Agent()\n", True),
    ("TFM201", "class Agent:\n    def build(self):\n        self.sess = tf.compat.v1.Session()\n"
               "def main(a):\n    a.build()\n", True),
    ("TFM201", "for g in graphs:\n    pool.append(tf.compat.v1.Session(graph=g))\n", True),
    ("TFM201", "pool = [tf.compat.v1.Session(graph=g) for g in graphs]\n", True),
    # a session opened as a with item is closed with its block: only one made otherwise can stay open
    ("TFM201", "def main():\n    with tf.compat.v1.Session() as sess:\n        sess.run(y)\n"
               "    for g in graphs:\n        with tf.compat.v1.Session(graph=g) as s, open(f) as h:\n            pass\n",
     False),
    ("TFM201", "def main():\n    with tf.compat.v1.Session().as_default() as sess:\n        sess.run(y)\n"
               "for r in runs:\n    main()\n", True),
    ("TFM201", "def main():\n    with closing(tf.compat.v1.Session()) as sess:\n        sess.run(y)\n"
               "for r in runs:\n    main()\n", True),
    # TFM202: one loop or handler that both runs a session and adds ops (Together), calls followed.
    ("TFM202", "sess = tf.compat.v1.Session()\nsess.run(y, {p: x})\n"
               "for k in range(9):\n    layers.append(tf.compat.v1.layers.dense(h, 8))\n", False),
    # ... or a fetch run in a loop or def of a TF1 module, which may build ops from tensors made
    # anywhere (sess.run(-y)).
    ("TFM202", "sess = tf.compat.v1.Session()\nfor x in xs:\n    sess.run(-y, {p: x})\n"
               "for k in range(9):\n    layers.append(tf.compat.v1.layers.dense(h, 8))\n", True),
    ("TFM202", "sess = tf.compat.v1.Session()\ndef step(x):\n    return sess.run(tf.argmax(y, 1))\n", True),
    ("TFM202", "sess = tf.compat.v1.Session()\ndef step(x):\n    return sess.run(fetches=[loss, t[0]])\n", True),
    ("TFM202", "sess = tf.compat.v1.Session()\ndef step(h):\n    return sess.partial_run(h, model.cost())\n", True),
    ("TFM202", "x = tf.compat.v1.placeholder(tf.float32)\ndef acc():\n    return tf.argmax(y, 1).eval()\n", True),
    # a fetch of names, an initializer, what is fed (feed_dict, a second positional): nothing built
    ("TFM202", "sess = tf.compat.v1.Session()\ndef main():\n"
               "    sess.run([tf.compat.v1.global_variables_initializer(), tf.compat.v1.tables_initializer()])\n"
               "    for b in batches:\n        sess.run([loss, train_op], feed_dict={x: b[0], k: -1})\n"
               "    train_op.run(feed_dict={x: b[1]})\n    sess.run(loss, {x: b[0]})\n"
               "    sess.partial_run(h, [loss], feed_dict={x: f(b)})\n", False),
    ("TFM202", "def fit(strategy):\n    strategy.run(step)\nfor k in range(9):\n    layers.append(tf.keras.layers.Dense(8))\n",
     False),
    # a `.run()` in the loop that adds ops, where nothing in the module is a session (MAY_RUN_SESSION):
    # a tf.distribute strategy, a TF-Agents driver
    ("TFM202", "for k in range(9):\n    strategy.run(step, args=(x,))\n    y = tf.reduce_mean(x)\n", False),
    ("TFM202", "for k in range(9):\n    t, s = driver.run(t, s)\n    loss = tf.reduce_mean(x)\n", False),
    # ... and every spelling a session has: a name, an accessor, a factory, a feed, an evaluator
    ("TFM202", "for k in range(9):\n    self.sess.run(y)\n    y = tf.reduce_mean(x)\n", True),
    ("TFM202", "for k in range(9):\n    get_session().run(y)\n    y = tf.reduce_mean(x)\n", True),
    ("TFM202", "s = tf.compat.v1.train.MonitoredTrainingSession()\nfor k in range(9):\n    s.run(y)\n"
               "    y = tf.reduce_mean(x)\n", True),
    ("TFM202", "for k in range(9):\n    op.run(feed_dict={p: k})\n    y = tf.reduce_mean(x)\n", True),
    ("TFM202", "with sv.managed_session() as s:\n    for k in range(9):\n        s.run(y)\n"
               "        y = tf.reduce_mean(x)\n", True),
    ("TFM202", "tf.compat.v1.disable_eager_execution()\nfor k in range(9):\n    v = tf.reduce_mean(x).eval()\n", True),
    # a fetch that builds ops in a module that only names its session (a parameter), or a list of ops
    # a function fills and then fetches; not a list of existing tensors or of ops made elsewhere
    ("TFM202", "def restore(sess, values):\n    sess.run([v.assign(values[v.name]) for v in VARS])\n", True),
    ("TFM202", "def load(sess, values):\n    ops = []\n    for v, x in zip(VARS, values):\n"
               "        ops.append(v.assign(x))\n    sess.run(ops)\n", True),
    ("TFM202", "def restore(runner, values):\n    runner.run([v.assign(values[v.name]) for v in VARS])\n", False),
    ("TFM202", "sess = tf.compat.v1.Session()\ndef load(values):\n    ops = []\n    for v in VARS:\n"
               "        ops.append(v.initializer)\n    sess.run(ops)\n", False),
    ("TFM202", "sess = tf.compat.v1.Session()\nfor x in xs:\n    y = tf.reduce_mean(x)\n    sess.run(y)\n", True),
    ("TFM202", "sess = tf.compat.v1.Session()\nfor e in range(9):\n    for x in xs:\n"
               "        y = tf.reduce_mean(x)\n    sess.run(y)\n", True),
    ("TFM202", "sess = tf.compat.v1.Session()\ndef build(x):\n    return tf.reduce_mean(x)\n"
               "for x in xs:\n    sess.run(build(x))\n", True),
    ("TFM202", "sess = tf.compat.v1.Session()\n@app.route('/p')\ndef serve():\n"
               "    return sess.run(tf.reduce_mean(x))\n", True),
    # the loop's TF calls must add ops (sessions.op_creating_name): logging, a writer, a checkpoint
    # lookup do not; a class of the module whose __init__ makes a variable does (calls followed)
    ("TFM202", "sess = tf.compat.v1.Session()\nfor x in xs:\n    sess.run(y, {p: x})\n"
               "    tf.compat.v1.logging.info('step')\n    w = tf.compat.v1.summary.FileWriter('logs')\n"
               "    c = tf.train.latest_checkpoint('ckpt')\n    k = tf.keras.layers.Dense(8)\n", False),
    ("TFM202", "sess = tf.compat.v1.Session()\nfor x in xs:\n    sess.run(y, {p: x})\n"
               "    saver = tf.compat.v1.train.Saver()\n", True),
    ("TFM202", "class Cell(tf.keras.layers.Layer):\n    def __init__(self):\n        self.w = tf.Variable(1.0)\n"
               "sess = tf.compat.v1.Session()\nfor x in xs:\n    sess.run(y, {p: x})\n    c = Cell()\n", True),
    # TFM302: a shuffle buffer that may be the whole dataset: not an integer literal below 10,000.
    ("TFM302", "ds = tf.data.Dataset.list_files('*.jpg').map(lambda f: tf.io.read_file(f))\n"
               "ds = ds.shuffle(1000).shuffle(buffer_size=9_999, seed=7).shuffle(-1).shuffle(*a).shuffle()\n", False),
    ("TFM302", "ds = tf.data.Dataset.list_files(files).map(lambda f: tf.io.read_file(f)).shuffle(len(files))\n", True),
    ("TFM302", "ds = tf.data.Dataset.list_files(files).map(lambda f: tf.io.read_file(f)).shuffle(10_000)\n", True),
    ("TFM302", "ds = tf.data.Dataset.list_files(files).map(lambda f: tf.io.read_file(f))\n"
               "n = len(files)\nds = ds.shuffle(1000, buffer_size=n)\n", True),
    # ... nor a name bound only to such a literal, an attribute, an item (whole_dataset_size reads none)
    ("TFM302", "BUFFER = 1000\nds = tf.data.Dataset.list_files(files).map(lambda f: tf.io.read_file(f))\n"
               "ds = ds.shuffle(BUFFER).shuffle(self.buffer_size).shuffle(FLAGS.buffer).shuffle(cfg['buffer'])\n"
               "ds = ds.shuffle(unknown)\n", False),
    # ... and every size it reads: a cardinality, num_examples, int(), .numpy(), arithmetic, a name's
    # value, a parameter's default
    ("TFM302", "ds = tf.data.Dataset.list_files(files).map(lambda f: tf.io.read_file(f))\n"
               "ds = ds.shuffle(ds.cardinality().numpy())\n", True),
    ("TFM302", "ds = tf.data.Dataset.list_files(files).map(lambda f: tf.io.read_file(f))\n"
               "ds = ds.shuffle(tf.data.experimental.cardinality(ds))\n", True),
    ("TFM302", "ds = tf.data.Dataset.list_files(files).map(lambda f: tf.io.read_file(f))\n"
               "ds = ds.shuffle(int(info.splits['train'].num_examples))\n", True),
    ("TFM302", "ds = tf.data.Dataset.list_files(files).map(lambda f: tf.io.read_file(f))\n"
               "ds = ds.shuffle(batch * 100)\n", True),
    ("TFM302", "def make(files, n=20_000):\n    ds = tf.data.Dataset.list_files(files).map(lambda f: tf.io.read_file(f))\n"
               "    return ds.shuffle(n)\n", True),
    # Below a million elements, the elements must be file content: a name that reads or decodes
    # files, or a dataset of decoded images or of file records, somewhere in the module.
    ("TFM302", "ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(50_000)\n"
               "ds = ds.shuffle(60000).map(lambda a, b: (a / 255, b))\n", False),
    ("TFM302", "ds = tf.data.Dataset.from_tensor_slices(x).shuffle(1_000_000)\n", True),
    ("TFM302", "n, m = 2_000_000, 8\nds = tf.data.Dataset.from_tensor_slices(x).shuffle(n)\n", True),
    ("TFM302", "from tensorflow.image import decode_png as dec\n"
               "ds = tf.data.Dataset.list_files(f).map(lambda f: dec(load(f))).shuffle(60000)\n", True),
    ("TFM302", "ds = tf.data.TFRecordDataset(files).shuffle(60000)\n", True),
    ("TFM302", "ds = tf.keras.utils.image_dataset_from_directory('d').unbatch().shuffle(60000)\n", True),
    ("TFM302", "import random\nimport numpy as np\n"
               "ds = tf.data.Dataset.list_files(files).map(lambda f: tf.io.read_file(f))\n"
               "random.shuffle(files)\nnp.random.shuffle(files)\n", False),
    # TFM304: a pipeline built in a def that may run per input (a method, an entry point, a def a
    # loop or a handler calls), outside the def's loops; a run's input builder only with a generator.
    ("TFM304", "def main(x):\n    ds = tf.data.Dataset.from_tensor_slices(x)\nmain(x)\n", False),
    ("TFM304", "def score(x):\n    return tf.data.Dataset.from_tensors(x)\nfor x in xs:\n    score(x)\n", True),
    ("TFM304", "def load_dataset(x):\n    return tf.data.Dataset.from_tensor_slices(x)\n"
               "for x in xs:\n    load_dataset(x)\n", False),
    ("TFM304", "class S:\n    def __init__(self, x):\n        self.ds = tf.data.Dataset.from_tensor_slices(x)\n"
               "    def score(self, xs):\n        for x in xs:\n            ds = tf.data.Dataset.from_tensors(x)\n"
               "        ds = lambda: tf.data.Dataset.from_tensors(xs)\n", False),
    ("TFM304", "class S:\n    def score(self, x):\n        return tf.data.Dataset.from_tensors(x).batch(1)\n", True),
    ("TFM304", "class S:\n    def make_dataset(self, x):\n        return tf.data.Dataset.from_tensors(x)\n", False),
    ("TFM304", "class S:\n    def make_dataset(self, g):\n        return tf.data.Dataset.from_generator(g, tf.int32)\n",
     True),
    ("TFM304", "def predict(items):\n    return tf.data.Dataset.from_generator(lambda: items, tf.string)\n", True),
    ("TFM304", "def f(x):\n    for y in tf.data.Dataset.from_tensors(x):\n        pass\n"
               "@app.route('/f')\ndef serve():\n    return f(x)\n", True),
    # TFM105: a tf.function created in a def or a loop: tf.function(f) there, or a @tf.function
    # def nested in a def or in a loop; not a module-level or method def, nor a decorator's call.
    ("TFM105", "@tf.function(jit_compile=True)\ndef h(x):\n    return x\ng = tf.function(h)\n"
               "class M(tf.keras.Model):\n    @tf.function(input_signature=[])\n    def call(self, x):\n"
               "        return [tf.function(jit_compile=True) for _ in x]\n", False),
    ("TFM105", "def f(g):\n    h = tf.function(g)\n", True),
    ("TFM105", "for g in gs:\n    h = tf.function(jit_compile=True)(g)\n", True),
    ("TFM105", "[tf.function(func=g) for g in gs]\n", True),
    ("TFM105", "for i in range(3):\n    @tf.function\n    def h(x):\n        return x * i\n", True),
    ("TFM105", "def f():\n    @tf.function(jit_compile=True)\n    def h(x):\n        return x\n", True),
    # TFM110: a @tf.function def with a parameter declared a Python str or float.
    ("TFM110", "@tf.function\ndef h(x, n=3, flag: bool = True, *a, k: int = 1, **kw):\n    return x\n"
               "def g(x, rate: float = 0.5, mode='train'):\n    return x\n", False),
    ("TFM110", "@tf.function\ndef h(x, mode='train'):\n    return x\n", True),
    ("TFM110", "class M:\n    @tf.function(jit_compile=True)\n    def h(self, x, *, rate=-0.5):\n        return x\n", True),
    ("TFM110", "@tf.function\ndef h(x, name: str):\n    return x\n", True),
    # TFM409: a writer in a loop or in a def a loop or a handler runs, or a TF1 writer kept on self.
    ("TFM409", "def main():\n    w = tf.summary.create_file_writer('logs')\n    train(w)\n"
               "class T:\n    def __init__(self):\n        self.w = tf.compat.v1.summary.FileWriter('l')\n"
               "    def fit(self):\n        w = tf.compat.v1.summary.FileWriter('l')\nmain()\n", False),
    ("TFM409", "def log(d):\n    return tf.summary.create_file_writer(d)\nfor d in runs:\n    log(d)\n", True),
    ("TFM409", "@app.route('/t')\ndef t():\n    w = tf.summary.create_file_writer('l')\n", True),
    ("TFM409", "class T:\n    def fit(self):\n        self.w = tf.compat.v1.summary.FileWriter('l')\n", True),
    # TFM408: a load in a loop, a handler or a def they run; in an entry point or a def it runs;
    # or in a def that loads its own model and predicts with it on what it is given.
    ("TFM408", "def main(path):\n    model = tf.keras.models.load_model(path)\n    model.summary()\n"
               "def fetch(p):\n    return tf.saved_model.load(p)\nclass C:\n    def __init__(self):\n"
               "        self.m = tf.keras.models.load_model('m')\nmain('m')\nm = fetch('m')\n", False),
    ("TFM408", "def fetch(p):\n    return tf.saved_model.load(p)\nfor p in paths:\n    fetch(p)\n", True),
    ("TFM408", "def fetch(p):\n    return tf.saved_model.load(p)\nclass C:\n    def predict(self, x):\n"
               "        return fetch('m')(x)\n", True),
    ("TFM408", "def vectors(texts):\n    enc = tf.saved_model.load('u')\n    return enc(texts)\n", True),
    ("TFM408", "def score(x):\n    m = tf.keras.models.load_model('m')\n    return m.predict_proba(x)\n", True),
    # TFM405/406: fit/evaluate/compile in a loop.
    ("TFM405", "m = tf.keras.Sequential()\nm.fit(x, y, epochs=1)\n", False),
    ("TFM405", "m = tf.keras.Sequential()\nfor s in batches:\n    m.fit(s, y, epochs=1)\n", True),
    ("TFM406", "m = tf.keras.Sequential()\nm.compile('adam', 'mse')\nfor e in range(9):\n    m.fit(x, y)\n", False),
    ("TFM406", "m = tf.keras.Sequential()\nfor e in range(99):\n    m.compile('adam', 'mse')\n", True),
    # TFM107: a tf.function or a restored SavedModel/hub object called with arguments, in a loop or
    # in a def (a per-request entry point); at module level outside a loop, or a signature: skipped.
    ("TFM107", "@tf.function\ndef f(x):\n    return x\ny = f(x[:3])\n", False),
    ("TFM107", "@tf.function\ndef f(x):\n    return x\nclass C:\n    def predict(self, x):\n"
               "        return f(x)\n", True),
    ("TFM107", "import tensorflow_hub as hub\nm = hub.load('u')\ny = m(x)\n", False),
    ("TFM107", "import tensorflow_hub as hub\nm = hub.load('u')\nfor t in texts:\n    y = m(enc(t))\n", True),
    ("TFM107", "m = tf.saved_model.load('p')\nfor i in range(9):\n    y = m(x[:, :i])\n", True),
    ("TFM107", "class C:\n    def __init__(self):\n        self.m = tf.saved_model.load('p')\n"
               "    def encode(self, x):\n        return self.m(x)\n", True),
    ("TFM107", "f = tf.saved_model.load('p').signatures['serving_default']\nfor i in range(9):\n"
               "    y = g(x[:, :i])\n", False),
]


@pytest.mark.parametrize("code, body, fires", STRUCTURE_CASES,
                         ids=[f"{c[0]}-{i}-{'passes' if c[2] else 'skipped'}" for i, c in enumerate(STRUCTURE_CASES)])
def test_structure_decides_beside_the_triggers(code, body, fires):
    """A file with the rule's trigger but not its structure is skipped; each kind of place
    where the rule can fire passes."""
    source = "import tensorflow as tf\n" + body
    tree = ast.parse(source)
    assert could_fire(tree, [code]) is fires, gate_reason(tree, [code])
    if fires:
        assert may_have_trigger(source.encode(), [code])
        assert lint_source(source, [code]) == lint_source(source, [code], gate=False)


def test_a_notebook_session_is_gated_anywhere():
    """In a notebook a script-level session superseded by another stays referenced (TFM201): the
    gate passes it there only."""
    source = ("import tensorflow.compat.v1 as tf\nsess = tf.Session()\nsess.run(x)\n"
              "other = tf.Session()\n")
    tree = ast.parse(source)
    assert not could_fire(gate.ModuleFacts(tree), ["TFM201"])
    assert could_fire(gate.ModuleFacts(tree, notebook=True), ["TFM201"])
    assert [f.code for f in lint_source(source, ["TFM201"], {"notebook": True})] == ["TFM201"]


def test_skipped_structure_cases_have_the_trigger():
    """The "skipped" cases above are skipped for their structure, not for a missing trigger."""
    for code, body, fires in STRUCTURE_CASES:
        if fires:
            continue
        rule = all_rules()[code]
        unstructured = type("Unstructured", (rule,), {"structure": None})
        assert gate.rule_structure(unstructured) is None
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(rule, "structure", None)
            patch.setattr(gate, "_TRIGGER_CACHE", {})
            assert could_fire(ast.parse("import tensorflow as tf\n" + body), [code]), (code, body)


def test_the_gate_reads_the_fetches_of_a_session_run_as_the_facts_do():
    """TFM202's gate reads a session run's fetches (gate._fetches) on the stdlib tree as
    sessions.fetches_of reads them on the LibCST tree, for every run, eval and partial_run of the
    fixtures and of the forms the rule's docs name (fetches_of is asked of those calls only)."""
    from tf_memlint.facts.sessions import FEED_RUN_METHODS, SESSION_RUN_METHODS, fetches_of
    def text(node: cst.CSTNode) -> str:
        return ast.unparse(ast.parse(f"(\n{cst.Module([]).code_for_node(node)}\n)", mode="eval"))

    forms = ("sess.run(y)\nsess.run(fetches=y, feed_dict=f)\nsess.run(feed_dict=f, fetches=[a, b])\n"
             "op.run()\nop.run(feed_dict=f)\nop.run(session=s, feed_dict=f)\nop.run(f, session=s)\n"
             "t.eval()\nt.eval(session=s)\nsess.partial_run(h, y)\nsess.partial_run(h)\n"
             "sess.run(*args)\nsess.run(**kw)\nsess.run(y, **kw)\nsess.other(y)\nrun(y)\n")
    sources = [forms] + [p.read_text(encoding="utf-8") for p in fixture_files()]
    compared = 0
    for source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        found = sorted((ast.unparse(call), [ast.unparse(f) for f in gate._fetches(call)])
                       for call in ast.walk(tree) if type(call) is ast.Call)
        expected = []
        for call in _nodes(cst.parse_module(source), cst.Call):
            runs = isinstance(call.func, cst.Attribute) and call.func.attr.value in SESSION_RUN_METHODS | FEED_RUN_METHODS
            expected.append((text(call), [text(f) for f in fetches_of(call)] if runs else []))
        assert found == sorted(expected)
        compared += sum(1 for _, fetches in found if fetches)
    assert compared > 40


def _nodes(root: cst.CSTNode, kind: type) -> list[cst.CSTNode]:
    found, stack = [], [root]
    while stack:
        node = stack.pop()
        if isinstance(node, kind):
            found.append(node)
        stack.extend(node.children)
    return found


def test_every_tracing_call_makes_a_traced_place():
    """The traced place is built from facts.tracing's constants: each tracing call, each Dataset
    method that traces, each Keras-traced method name."""
    from tf_memlint.facts.tracing import DATASET_TRACING_METHODS, KERAS_TRACED_METHODS, TRACING_CALLS

    for name in TRACING_CALLS:
        call = "tf." + name[len("tensorflow."):]
        source = f"import tensorflow as tf\ndef f(x):\n{_TF_LOOP}y = {call}(f, x)\n"
        assert could_fire(ast.parse(source), ["TFM101"]), name
    for method in DATASET_TRACING_METHODS:
        source = f"import tensorflow as tf\ndef f(x):\n{_TF_LOOP}y = tf.data.Dataset.range(9).{method}(f)\n"
        assert could_fire(ast.parse(source), ["TFM101"]), method
    for method in KERAS_TRACED_METHODS:
        source = f"import tensorflow as tf\nclass L(tf.keras.layers.Layer):\n    def {method}(self, x):\n" \
                 + _TF_LOOP.replace("    ", "        ")
        assert could_fire(ast.parse(source), ["TFM101"]), method


def test_gate_decides_per_rule():
    """One rule's trigger and another rule's structure do not add up to a pass."""
    source = ("import tensorflow as tf\n@tf.function\ndef f(x):\n    return x\n"  # TFM101's trigger
              "m = tf.keras.Sequential()\nfor e in range(99):\n    m.compile('adam', 'mse')\n")
    tree = ast.parse(source)
    assert not could_fire(tree, ["TFM101"])
    assert could_fire(tree, ["TFM406"])
    assert could_fire(tree, ["TFM101", "TFM406"])


def test_only_the_rules_whose_own_gate_passes_run():
    """The engine runs, in a module the gate lets through, only the rules that can fire there."""
    from tf_memlint.gate import codes_that_can_fire

    source = "import tensorflow as tf\n@tf.function\ndef f(x):\n    for i in range(9):\n        x += 1\n    return x\n"
    facts = gate.ModuleFacts(ast.parse(source))
    assert codes_that_can_fire(facts, ["TFM101", "TFM405", "TFM407"]) == ["TFM101"]
    assert codes_that_can_fire(facts, ["TFM405"]) == ["TFM405"]  # one rule: the caller's gate decided


def test_places_held_at_once_need_call_nodes():
    """Inside((place, place), nodes) asks one call to be in every place; a statement node cannot."""
    with pytest.raises(ValueError):
        gate.Inside((gate.IN_DEF_OR_LOOP, gate.OUTSIDE_WITH), {"For"})
    assert str(gate.Inside((gate.IN_DEF_OR_LOOP, gate.OUTSIDE_WITH), {"tensorflow.Session"})) \
        == f"tensorflow.Session {gate.IN_DEF_OR_LOOP} and {gate.OUTSIDE_WITH}"


def test_a_keyword_node_needs_that_keyword_given_true():
    """TFM401 reads only ``GradientTape(persistent=True)``: a plain tape, or one whose persistence
    is a variable, is no reason to build a tree for it; any spelling of the tape class is."""
    def passes(line: str) -> bool:
        return could_fire(ast.parse(f"import tensorflow as tf\nfrom tensorflow import GradientTape as GT\n{line}\n"),
                          ["TFM401"])

    assert passes("with tf.GradientTape(persistent=True) as tape:\n    pass")
    assert passes("tape = GT(watch_accessed_variables=False, persistent=True)")
    assert not passes("with tf.GradientTape() as tape:\n    pass")
    assert not passes("with tf.GradientTape(persistent=flag) as tape:\n    pass")
    assert not passes("with tf.GradientTape(persistent=False) as tape:\n    pass")
