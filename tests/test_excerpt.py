"""A large module is linted as an excerpt (excerpt.py): only the top-level definitions some rule
can need reach LibCST, and the findings are those of the whole module, at the module's lines."""

from __future__ import annotations

import ast

from conftest import FIXTURES, fixture_files
from tf_memlint.engine import EXCERPT_MIN_BYTES
from tf_memlint.excerpt import excerpt
from tf_memlint.files import lint_file
from tf_memlint.rule import all_rules

CODES = list(all_rules())
HELPER = "def helper_{i}(x, y=1):\n    total = x * {i} + y\n    return [total, x, y]\n\n"
TRACED = "@tf.function\ndef traced(x):\n    for i in range(1000):\n        x = x + 1\n    return x\n"


def _module(helpers: int, tail: str = TRACED) -> str:
    return "import tensorflow as tf\n\n" + "".join(HELPER.format(i=i) for i in range(helpers)) + tail


def test_only_what_a_rule_can_need_is_kept():
    source = _module(2000)
    cut = excerpt(source, ast.parse(source), CODES, min_bytes=0)
    assert cut is not None and "helper_" not in cut and "range(1000)" in cut
    # every line where it was: the cut definitions' lines are left empty
    assert len(cut.splitlines()) == len(source.splitlines())
    line = next(n for n, text in enumerate(cut.splitlines(), 1) if "range(1000)" in text)
    assert source.splitlines()[line - 1].strip() == "for i in range(1000):"


def test_a_definition_a_kept_statement_needs_is_kept():
    """A helper called from kept code, a helper that uses a kept module-level name (a model, a
    tf.function), and a helper writing a global stay; only the unrelated ones go."""
    tail = ("model = tf.keras.Sequential()\n\ndef serve(x):\n    return model.predict(x)\n\n"
            "def uses_model(x):\n    return model(x)\n\ndef writes():\n    global model\n    model = None\n\n"
            "def called(x):\n    return x\n\nfor k in range(10):\n    called(k)\n")
    source = _module(50, tail)
    cut = excerpt(source, ast.parse(source), CODES, min_bytes=0)
    for name in ("serve", "uses_model", "writes", "called"):
        assert f"def {name}(" in cut, name
    assert "def helper_3(" not in cut


def test_findings_are_those_of_the_whole_module(tmp_path):
    path = tmp_path / "big.py"
    path.write_text(_module(3000))
    whole = lint_file(str(path), CODES, {"confidence": "low", EXCERPT_MIN_BYTES: None})
    cut = lint_file(str(path), CODES, {"confidence": "low", EXCERPT_MIN_BYTES: 0})
    assert whole.findings and [(d.line, d.col, d.code, d.message) for d in cut.findings] == \
        [(d.line, d.col, d.code, d.message) for d in whole.findings]


def test_every_fixture_gives_the_same_findings_as_an_excerpt():
    for path in fixture_files():
        whole = lint_file(str(path), CODES, {"confidence": "low", EXCERPT_MIN_BYTES: None})
        cut = lint_file(str(path), CODES, {"confidence": "low", EXCERPT_MIN_BYTES: 0})
        assert [(d.line, d.col, d.code, d.message, d.confidence) for d in cut.findings] == \
            [(d.line, d.col, d.code, d.message, d.confidence) for d in whole.findings], path


def test_lines_named_in_messages_are_the_modules(tmp_path):
    """A message that names another line (the call that sets a traced loop's bound) names the
    module's line: cut definitions above and between leave their lines empty, not removed; CRLF
    line endings too."""
    helpers = "".join(HELPER.format(i=i) for i in range(40))
    fixture = (FIXTURES / "TFM101" / "bad_traced_training_loop.py").read_text()
    source = fixture.replace("@tf.function\ndef train(", helpers + "@tf.function\ndef train(") \
        .replace("def main(", helpers.replace("helper_", "other_") + "def main(")
    path = tmp_path / "named.py"
    path.write_bytes(source.replace("\n", "\r\n").encode())
    whole = lint_file(str(path), CODES, {"confidence": "low", EXCERPT_MIN_BYTES: None})
    cut = lint_file(str(path), CODES, {"confidence": "low", EXCERPT_MIN_BYTES: 0})
    call_line = 1 + source.splitlines().index("    train(model, dataset, EPOCHS)")
    assert any(f"line {call_line}" in d.message for d in whole.findings), whole.findings
    assert [(d.line, d.col, d.code, d.message) for d in cut.findings] == \
        [(d.line, d.col, d.code, d.message) for d in whole.findings]
