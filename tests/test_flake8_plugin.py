"""The flake8 entry point: registered, 0-based columns, never raises into flake8."""

from __future__ import annotations

import ast
import subprocess
import sys

from tf_memlint import flake8_plugin
from tf_memlint.flake8_plugin import TFMemlintChecker

SOURCE = "import tensorflow as tf\n\n@tf.function\ndef f(x):\n    for i in range(1000):\n        x += 1\n    return x\n"


def _flake8(tmp_path, *args, source=SOURCE):
    path = tmp_path / "model.py"
    path.write_text(source)
    return subprocess.run([sys.executable, "-m", "flake8", "--isolated", *args, str(path)],
                          capture_output=True, text=True, timeout=120)


def test_entry_point_is_registered():
    out = subprocess.run([sys.executable, "-m", "flake8", "--version"], capture_output=True, text=True).stdout
    assert "tf-memlint" in out


def test_flake8_prints_the_column_of_the_for_keyword(tmp_path):
    completed = _flake8(tmp_path, "--select", "TFM")
    line, col = completed.stdout.split(":")[1:3]
    assert (int(line), int(col)) == (5, 5)  # 1-based: `for` starts at the 5th character
    assert SOURCE.splitlines()[4][4:7] == "for"


def test_flake8_noqa(tmp_path):
    source = SOURCE.replace("range(1000):", "range(1000):  # noqa: TFM101")
    assert _flake8(tmp_path, "--select", "TFM", source=source).stdout == ""


def test_plugin_option_from_flake8_config(tmp_path):
    (tmp_path / "setup.cfg").write_text("[flake8]\ntfm-min-unrolled-iterations = 5000\n")
    path = tmp_path / "model.py"
    path.write_text(SOURCE)
    completed = subprocess.run([sys.executable, "-m", "flake8", "--select", "TFM", "model.py"],
                               capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert completed.stdout == "" and completed.returncode == 0, completed.stderr


def test_syntax_error_gives_no_tfm_finding():
    source = "import tensorflow as tf\ndef f(:\n"
    checker = TFMemlintChecker(ast.Module(body=[], type_ignores=[]), source.splitlines(True), "x.py")
    assert list(checker.run()) == []


def test_internal_error_becomes_one_tfm000(monkeypatch):
    def broken(*args, **kwargs):
        raise KeyError("boom")

    monkeypatch.setattr(flake8_plugin, "lint_source", broken)
    checker = TFMemlintChecker(ast.parse(SOURCE), SOURCE.splitlines(True), "x.py")
    (finding,) = list(checker.run())
    assert finding[:2] == (1, 0) and finding[2].startswith("TFM000 tf-memlint internal error: KeyError")


import pytest  # noqa: E402


@pytest.mark.parametrize("value", ["-3", "0", "2.5", "x"])
def test_plugin_options_are_validated_as_the_command_validates_them(tmp_path, value):
    """The same rule as `tf-memlint --min-unrolled-iterations` and pyproject.toml (config.positive_int)."""
    on_command_line = _flake8(tmp_path, "--select", "TFM", f"--tfm-min-unrolled-iterations={value}")
    assert on_command_line.returncode != 0 and "must be a whole number of 1 or more" in on_command_line.stderr
    (tmp_path / "setup.cfg").write_text(f"[flake8]\ntfm-min-unrolled-iterations = {value}\n")
    in_config = subprocess.run([sys.executable, "-m", "flake8", "--select", "TFM", "model.py"],
                               capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert in_config.returncode != 0 and "must be a whole number of 1 or more" in in_config.stderr


def test_plugin_messages_are_one_line(monkeypatch):
    from tf_memlint.rule import Diagnostic, all_rules

    monkeypatch.setattr(flake8_plugin, "lint_source",
                        lambda *a, **k: [Diagnostic(5, 4, "TFM101", "loop over range(\n    1000\n) here")])
    TFMemlintChecker.codes = list(all_rules())
    ((_, _, message, _),) = list(TFMemlintChecker(ast.parse(SOURCE), SOURCE.splitlines(True), "x.py").run())
    assert message == "TFM101 loop over range( 1000 ) here"


def _codes_run(*argv):
    """The rule codes the plugin runs after flake8 parsed ``argv`` (flake8's own option handling)."""
    from flake8.main.application import Application

    Application().initialize(["--isolated", *argv, "model.py"])
    return TFMemlintChecker.codes


def test_the_plugin_runs_only_the_rules_flake8_can_report():
    """A rule flake8 would drop everywhere is not run (its triggers would make the gate parse
    files for nothing); the set is flake8's own decision, so it follows select/ignore exactly."""
    from tf_memlint.engine import enabled_codes
    from tf_memlint.rule import all_rules

    opt_in = [code for code, rule in all_rules().items() if not rule.default_enabled]
    assert opt_in, "the catalogue has opt-in rules"
    assert _codes_run() == enabled_codes()  # flake8's defaults: the default rules, no opt-in one
    assert set(_codes_run("--extend-select", opt_in[0])) == set(enabled_codes()) | {opt_in[0]}
    assert not any(code.startswith("TFM1") for code in _codes_run("--extend-ignore", "TFM1"))
    assert _codes_run("--select", "E,W") == []  # no TFM code selected: nothing runs
    assert set(_codes_run("--select", "TFM")) == set(all_rules())  # flake8: explicit select beats default ignore


def test_unreported_rules_do_not_change_what_flake8_prints(tmp_path):
    """Running fewer rules changes no output: the same findings with the defaults and with every
    rule selected then the opt-in ones ignored again."""
    from tf_memlint.rule import all_rules

    source = ("import tensorflow as tf\nfor i in range(100):\n    step = tf.function(lambda x: x + 1)\n"
              "    step(tf.ones((1, 2)))\n" + SOURCE.split("\n", 1)[1])
    opt_in = ",".join(code for code, rule in all_rules().items() if not rule.default_enabled)
    default = _flake8(tmp_path, "--select", "TFM", "--extend-ignore", opt_in, source=source).stdout
    assert "TFM101" in default and "TFM105" in default
    plain = _flake8(tmp_path, source=source).stdout  # flake8's defaults (pycodestyle too)
    assert [line for line in plain.splitlines() if " TFM" in line] == default.splitlines()
    assert "TFM105" in _flake8(tmp_path, "--extend-select", "TFM105", source=source).stdout
