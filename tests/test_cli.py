"""The `tf-memlint` command: exit codes, formats, selection, configuration, explain, rules."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tf_memlint.cli import main
from tf_memlint.rule import all_rules

BAD = "import tensorflow as tf\n\n@tf.function\ndef f(x):\n    for i in range(1000):\n        x += 1\n    return x\n"
CLEAN = "import tensorflow as tf\n\ndef f(x):\n    return x\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.py").write_text(BAD)
    (tmp_path / "clean.py").write_text(CLEAN)
    return tmp_path


def test_exit_codes(project, capsys):
    assert main(["clean.py"]) == 0
    assert main(["bad.py"]) == 1
    assert main(["bad.py", "--exit-zero"]) == 0
    assert main(["missing.py"]) == 2
    assert main(["--format", "yaml"]) == 2
    assert main(["--select", "XYZ1"]) == 2


def test_text_output_is_flake8_shaped(project, capsys):
    main(["bad.py"])
    assert capsys.readouterr().out == ("bad.py:5:5: TFM101 Python loop over range(1000) is unrolled into the "
                                       "traced graph (1000 copies of its body); use tf.range\n")


def test_json_shape(project, capsys):
    main([".", "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert data["tool"] == "tf-memlint" and data["errors"] == []
    assert data["findings"] == [{"path": "bad.py", "line": 5, "column": 5, "code": "TFM101",
                                 "name": "python-loop-in-tf-function",
                                 "message": data["findings"][0]["message"]}]


def test_select_and_ignore_by_prefix(project, capsys):
    assert main(["bad.py", "--ignore", "TFM1"]) == 0
    assert main(["bad.py", "--select", "TFM103"]) == 0
    assert main(["bad.py", "--select", "TFM1"]) == 1
    assert main(["bad.py", "--select", "TFM101", "--ignore", "TFM1"]) == 1  # more specific wins


def test_pyproject_configuration(project, capsys):
    (project / "pyproject.toml").write_text('[tool.tf-memlint]\nignore = ["TFM101"]\n')
    assert main(["bad.py"]) == 0
    (project / "pyproject.toml").write_text('[tool.tf-memlint]\nmin-unrolled-iterations = 2000\n')
    assert main(["bad.py"]) == 0
    (project / "pyproject.toml").write_text('[tool.tf-memlint]\nexclude = ["bad.py"]\n')
    assert main(["."]) == 0
    assert main(["bad.py"]) == 1  # named on the command line: linted anyway, as ruff does
    assert main(["bad.py", "--force-exclude"]) == 0


def test_setup_cfg_configuration(project, capsys):
    (project / "setup.cfg").write_text("[tf-memlint]\nselect = TFM103\n")
    assert main(["bad.py"]) == 0


@pytest.mark.parametrize("table", ['[tool.tf-memlint]\nselect = 3\n', '[tool.tf-memlint]\nbogus = 1\n',
                                   '[tool.tf-memlint\n', '[tool.tf-memlint]\nmin-unrolled-iterations = "x"\n'])
def test_broken_configuration_is_a_usage_error(project, capsys, table):
    (project / "pyproject.toml").write_text(table)
    assert main(["bad.py"]) == 2
    assert "pyproject.toml" in capsys.readouterr().err


def test_default_excludes(project, capsys):
    for folder in (".git", ".venv", "build"):
        (project / folder).mkdir()
        (project / folder / "bad.py").write_text(BAD)
    main([".", "--format", "json"])
    assert [f["path"] for f in json.loads(capsys.readouterr().out)["findings"]] == ["bad.py"]


def test_rules_lists_every_rule_and_its_default(capsys):
    assert main(["rules"]) == 0
    out = capsys.readouterr().out
    for code, rule in all_rules().items():
        line = next(line for line in out.splitlines() if line.startswith(code))
        assert rule.name in line and ("opt-in" in line) is (not rule.default_enabled)


def test_explain_prints_the_rule_page(capsys):
    assert main(["explain", "tfm101"]) == 0
    assert capsys.readouterr().out.startswith("# TFM101")
    assert main(["explain", "TFM999"]) == 2


def test_console_script_runs(project):
    completed = subprocess.run([sys.executable, "-m", "tf_memlint", "bad.py"], capture_output=True, text=True)
    assert completed.returncode == 1 and "TFM101" in completed.stdout


def test_every_rule_has_a_page():
    from tf_memlint.resources import rule_page

    for code in all_rules():
        assert rule_page(code).is_file(), code
