"""Property-based: the engine never raises on a valid module, and the gate never changes a finding.

Two generators: hypothesmith's grammar-based valid Python (with a TensorFlow import put in front
so the engine does not stop at its text test), and TensorFlow-flavoured modules assembled from
the constructs the rules match on, nested at random.
"""

from __future__ import annotations

import ast
import textwrap

import hypothesmith
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tf_memlint.engine import lint_source
from tf_memlint.flake8_plugin import TFMemlintChecker
from tf_memlint.rule import all_rules

PREFIX = "import tensorflow as tf\nimport numpy as np\nfrom tensorflow import keras\n"
SETTINGS = settings(max_examples=25, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                           HealthCheck.data_too_large])


def _valid(source: str) -> bool:
    try:
        ast.parse(source)
        compile(source, "<hypothesis>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _check(source: str) -> None:
    gated = lint_source(source)
    assert gated == lint_source(source, gate=False)
    TFMemlintChecker.codes = list(all_rules())
    through_flake8 = [(line, col, message.split()[0])
                      for line, col, message, _ in TFMemlintChecker(ast.parse(source), source.splitlines(True)).run()]
    assert through_flake8 == [(d.line, d.col, d.code) for d in gated]


@SETTINGS
@given(hypothesmith.from_grammar())
def test_engine_never_raises_on_grammar_generated_modules(source):
    # A __future__ import must stay first: then the TF import goes after the module.
    candidate = source + "\n" + PREFIX if "__future__" in source else PREFIX + source
    assume(_valid(candidate))
    _check(candidate)


@SETTINGS
@given(hypothesmith.from_node())
def test_engine_never_raises_on_libcst_generated_modules(source):
    candidate = PREFIX + source
    assume(_valid(candidate))
    _check(candidate)


# TensorFlow-flavoured modules -----------------------------------------------------------------

_STATEMENTS = [
    "x = tf.constant(1.0)",
    "out.append(x * 2)",
    "out.append(float(i))",
    "history.append(model(x))",
    "y = model.predict(x)",
    "counter['n'] += 1",
    "global state\nstate = x",
    "sess.run(y)",
    "y = tf.reduce_mean(x * 2.0)",
    "tape = tf.GradientTape(persistent=True)",
    "g = tape.gradient(y, x)",
    "del tape",
    "model = keras.Sequential([keras.layers.Dense(4)])",
    "keras.backend.clear_session()",
    "step = tf.function(lambda v: v + 1)",
    "r = tf.map_fn(lambda t: tf.tile(t, [10000]), x)",
    "ds = tf.data.Dataset.range(10).map(lambda t: t * 2)",
    "table = np.zeros((1000, 1000), dtype=np.float32)",
    "z = tf.constant(table)",
    "sess = tf.compat.v1.Session()",
    "f(x, i)",
    "pass",
    "return x",
    "yield x",
    "break",
]
_HEADERS = [
    "for i in range({n}):",
    "for v in [1, 2, 3]:",
    "for t in tf.range({n}):",
    "while i < {n}:",
    "with tf.GradientTape() as tape:",
    "with tf.compat.v1.Session() as sess:",
    "if x:",
    "@tf.function\ndef f(x, i=0):",
    "def g(x):",
    "class M(keras.Model):\n    def call(self, x):",
    "try:",
]


def _block(statements: list[str]) -> str:
    return "\n".join(statements) or "pass"


@st.composite
def tf_modules(draw) -> str:
    def body(depth: int) -> str:
        parts = []
        for _ in range(draw(st.integers(1, 4))):
            if depth < 4 and draw(st.booleans()):
                header = draw(st.sampled_from(_HEADERS)).format(n=draw(st.sampled_from([3, 100, 1000])))
                inner = body(depth + 1)
                indent = "        " if header.startswith("class") else "    "
                chunk = header + "\n" + textwrap.indent(inner, indent)
                if header == "try:":
                    chunk += "\nexcept Exception:\n    pass"
                parts.append(chunk)
            else:
                parts.append(draw(st.sampled_from(_STATEMENTS)))
        return _block(parts)

    prelude = "out = []\nhistory = []\ncounter = {'n': 0}\nstate = 0\nx = tf.ones((3,))\ni = 0\n"
    return PREFIX + prelude + body(0) + "\n"


@settings(max_examples=100, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(tf_modules())
def test_engine_never_raises_on_tensorflow_flavoured_modules(source):
    assume(_valid(source))
    _check(source)
