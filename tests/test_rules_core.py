"""TFM101-TFM103 beyond the fixtures: options, messages, the acceptance lines of the core issue."""

from __future__ import annotations

import pytest

from conftest import RANGE_1000_GRADE

LOOP = """\
import tensorflow as {alias}

{decorator}
def f(x, n):
    for i in {iterable}:
        x = x + 1.0
    return x
"""


@pytest.mark.parametrize("alias,decorator", [
    ("tf", "@tf.function"), ("T", "@T.function"), ("tf", "@tf.function(jit_compile=True)"),
])
def test_tfm101_fires_on_range_1000_under_any_alias(lint, alias, decorator):
    findings = lint(LOOP.format(alias=alias, decorator=decorator, iterable="range(1000)"))
    assert [(d.code, d.line, d.col) for d in findings] == [("TFM101", 5, 4)]
    assert findings[0].message == ("Python loop over range(1000) is unrolled into the traced graph "
                                   "(1000 copies of its body); use tf.range" + RANGE_1000_GRADE)


@pytest.mark.parametrize("iterable", ["range(tf.shape(x)[0])", "tf.range(1000)", "range(n)", "range(99)"])
def test_tfm101_silent_on_graph_loops_unknown_and_small_bounds(lint, iterable):
    assert lint(LOOP.format(alias="tf", decorator="@tf.function", iterable=iterable)) == []


def test_tfm101_silent_in_eager_code(lint):
    assert lint(LOOP.format(alias="tf", decorator="", iterable="range(1000)")) == []


def test_tfm101_threshold_is_an_option(lint):
    source = LOOP.format(alias="tf", decorator="@tf.function", iterable="range(50)")
    assert lint(source) == []
    assert [d.code for d in lint(source, min_unrolled_iterations=50)] == ["TFM101"]


def test_codes_restrict_the_rules_run(lint):
    source = LOOP.format(alias="tf", decorator="@tf.function", iterable="range(1000)")
    assert lint(source, codes=["TFM102"]) == []


def test_file_without_tensorflow_costs_no_parse(monkeypatch):
    import tf_memlint.engine as engine

    def no_parse(source, **how):
        raise AssertionError("parsed a file that names no TensorFlow module")

    monkeypatch.setattr(engine, "parse", no_parse)
    assert engine.lint_source("import numpy as np\nfor i in range(10): pass\n") == []


def test_keras_only_in_a_comment_is_not_tensorflow(lint):
    assert lint("# uses keras elsewhere\ndef call(self, x):\n    for i in range(1000):\n        pass\n") == []


def test_tfm103_ignores_globals_only_read(lint):
    source = "import tensorflow as tf\nTABLE = {}\n@tf.function\ndef f(x):\n    return TABLE.get(x)\n"
    assert lint(source) == []


def test_opt_in_rules_run_only_when_selected(monkeypatch):
    """An opt-in rule is off by default; a select or extend-select prefix over it turns it on,
    as flake8 decides for codes in its default ignore list (flake8-bugbear's B9xx)."""
    from tf_memlint import rule as rule_module
    from tf_memlint.engine import enabled_codes

    class OptIn(rule_module.Rule):
        code, name, summary, default_enabled = "TFM199", "opt-in-example", "example", False

    monkeypatch.setitem(rule_module._REGISTRY, "TFM199", OptIn)
    assert "TFM199" not in enabled_codes()
    assert "TFM199" not in enabled_codes(extend_select=["TFM2"])
    assert "TFM199" in enabled_codes(select=["TFM"])
    assert "TFM199" in enabled_codes(select=["TFM1"])
    assert "TFM199" in enabled_codes(extend_select=["TFM19"])
    assert "TFM199" not in enabled_codes(select=["TFM"], ignore=["TFM1"])
    assert "TFM199" in enabled_codes(extend_select=["TFM199"])
    assert enabled_codes(select=["TFM199"]) == ["TFM199"]
    assert "TFM199" not in enabled_codes(extend_select=["TFM199"], ignore=["TFM199"])


def test_code_that_never_runs_is_found_by_its_syntax_alone():
    """syntax.never_run: the tail of a block after raise/return/sys.exit(), the body of
    `if False:`, the else of `if True:`; a notebook's later cells run whatever an earlier raised."""
    import libcst as cst

    from tf_memlint.syntax import never_run

    source = ("import sys\n"
              "def f(x):\n    return x\n    g(x)\n"
              "if True:\n    a()\nelse:\n    b()\n"
              "if False:\n    c()\n"
              "while x:\n    if x:\n        break\n        d()\n"
              "sys.exit(0)\n"
              "e()\n")
    module = cst.parse_module(source)
    dead = [module.code_for_node(n).strip() for n in never_run(module)]
    assert dead == ["g(x)", "else:\n    b()", "c()", "d()", "e()"], dead
    cells = [module.code_for_node(n).strip() for n in never_run(module, cells=True)]
    assert cells == dead[:-1], cells


def test_a_scripts_functions_that_nothing_names_are_found():
    """syntax.uncalled_in_script: undecorated top-level defs of a module with a __main__ block
    whose name appears nowhere else; a route, `main` (tf.app.run()) and a module without a main
    block keep their functions."""
    import libcst as cst

    from tf_memlint.syntax import uncalled_in_script

    source = ("def used():\n    pass\n"
              "def leftover():\n    pass\n"
              "@app.route('/')\ndef home():\n    pass\n"
              "def main(argv):\n    pass\n"
              "if __name__ == '__main__':\n    used()\n")
    module = cst.parse_module(source)
    assert [f.name.value for f in uncalled_in_script(module, source)] == ["leftover"]
    library = source.rsplit("if __name__", 1)[0]
    assert uncalled_in_script(cst.parse_module(library), library) == []
