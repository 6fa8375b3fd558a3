"""The `tf-memlint` command: exit codes, formats, selection, configuration, explain, rules."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import RANGE_1000_GRADE, REPO
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
                                       "traced graph (1000 copies of its body); use tf.range" + RANGE_1000_GRADE + "\n")


def test_json_shape(project, capsys):
    main([".", "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert data["tool"] == "tf-memlint" and data["errors"] == []
    assert data["findings"] == [{"path": "bad.py", "cell": None, "line": 5, "column": 5, "code": "TFM101",
                                 "name": "python-loop-in-tf-function",
                                 "message": data["findings"][0]["message"], "confidence": "high",
                                 "evidence": "1,000 iterations (range(1000))", "cost": data["findings"][0]["cost"],
                                 "url": (REPO / "rules" / "TFM101.md").as_uri()}]


def test_rule_links_follow_rule_url_base(project, capsys):
    """No public address is invented: the default link is the page this installation ships."""
    main([".", "--format", "json", "--rule-url-base", "https://git.example.com/ml/tf-memlint/blob/main/rules/"])
    assert json.loads(capsys.readouterr().out)["findings"][0]["url"] == \
        "https://git.example.com/ml/tf-memlint/blob/main/rules/TFM101.md"
    (project / "pyproject.toml").write_text('[tool.tf-memlint]\nrule-url-base = "https://wiki.example.com/{name}"\n')
    main([".", "--format", "sarif"])
    sarif = json.loads(capsys.readouterr().out)
    rules = {rule["id"]: rule for rule in sarif["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["TFM404"]["helpUri"] == "https://wiki.example.com/predict-in-loop"
    assert "informationUri" not in sarif["runs"][0]["tool"]["driver"]
    assert "github.com" not in json.dumps(sarif)


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
    assert main(["explain"]) == 2
    assert main(["explain", "TFM101", "TFM102"]) == 2


@pytest.mark.parametrize("subcommand", [[], ["check"], ["explain"], ["rules"], ["verify"]])
def test_every_subcommand_has_help(capsys, subcommand):
    assert main([*subcommand, "--help"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("usage: tf-memlint") and "unknown rule" not in captured.out + captured.err
    if subcommand in ([], ["check"]):  # the main usage line names every subcommand
        usage = captured.out.split("\n\n")[0]
        for name in ("check", "explain CODE", "rules", "verify", "--stdin-filename"):
            assert name in usage


def test_rules_takes_no_arguments(capsys):
    assert main(["rules", "extra"]) == 2


@pytest.mark.parametrize("value", ["-3", "0", "2.5", "x", "-0"])
@pytest.mark.parametrize("flag", ["-j", "--jobs", "--min-unrolled-iterations"])
def test_counts_are_validated_on_the_command_line(project, capsys, flag, value):
    assert main(["bad.py", flag, value]) == 2
    assert "must be a whole number of 1 or more" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["-3", "0", "2.5", '"2.5"', "true", '"x"'])
@pytest.mark.parametrize("key", ["jobs", "min-unrolled-iterations"])
def test_counts_are_validated_the_same_way_in_the_config(project, capsys, key, value):
    (project / "pyproject.toml").write_text(f"[tool.tf-memlint]\n{key} = {value}\n")
    assert main(["bad.py"]) == 2
    assert "must be a whole number of 1 or more" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["3", '"3"'])
def test_valid_counts_are_accepted_in_both(project, capsys, value):
    (project / "pyproject.toml").write_text(f"[tool.tf-memlint]\njobs = {value}\n")
    assert main(["bad.py", "-j", "2"]) == 1


def test_exclude_replaces_and_extend_exclude_adds(project, capsys):
    (project / ".venv").mkdir()
    (project / ".venv" / "bad.py").write_text(BAD)
    (project / "gen").mkdir()
    (project / "gen" / "bad.py").write_text(BAD)
    (project / "pyproject.toml").write_text('[tool.tf-memlint]\nextend-exclude = ["gen"]\n')
    main([".", "--format", "json"])
    assert [f["path"] for f in json.loads(capsys.readouterr().out)["findings"]] == ["bad.py"]
    (project / "pyproject.toml").write_text('[tool.tf-memlint]\nexclude = ["gen"]\n')
    main([".", "--format", "json"])
    assert sorted(f["path"] for f in json.loads(capsys.readouterr().out)["findings"]) == [".venv/bad.py", "bad.py"]


def test_the_projects_own_config_keeps_the_default_excludes():
    from conftest import REPO
    from tf_memlint.config import DEFAULT_EXCLUDE, load_config

    config = load_config(REPO / "pyproject.toml")
    assert set(DEFAULT_EXCLUDE) <= set(config.exclude) and "fixtures" in config.exclude


def test_include_and_extend_include(project, capsys):
    (project / "script.pyw").write_text(BAD)
    main([".", "--format", "json"])
    assert [f["path"] for f in json.loads(capsys.readouterr().out)["findings"]] == ["bad.py"]
    main([".", "--format", "json", "--extend-include", "*.pyw"])
    assert [f["path"] for f in json.loads(capsys.readouterr().out)["findings"]] == ["bad.py", "script.pyw"]
    (project / "pyproject.toml").write_text('[tool.tf-memlint]\ninclude = ["*.pyw"]\n')
    main([".", "--format", "json"])
    assert [f["path"] for f in json.loads(capsys.readouterr().out)["findings"]] == ["script.pyw"]


def test_output_into_a_closed_pipe_is_quiet():
    """`tf-memlint rules | head -1`: the reader is gone before the command writes; no traceback."""
    process = subprocess.Popen([sys.executable, "-m", "tf_memlint", "rules"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    process.stdout.close()  # closed long before the interpreter has started and written
    stderr = process.stderr.read().decode()
    process.wait(timeout=120)
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr


MULTILINE_QUOTE = '''\
import tensorflow as tf

@tf.function
def f(x):
    for i in [  # the list is long
        1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
        21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40,
        41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60,
        61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80,
        81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100,
        101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120,
    ]:
        x += 1
    return x
'''


def test_a_quoted_multiline_expression_is_one_short_line(project, capsys):
    (project / "multi.py").write_text(MULTILINE_QUOTE)
    assert main(["multi.py", "--isolated"]) == 1
    (line,) = capsys.readouterr().out.splitlines()
    assert line.startswith("multi.py:5:5: TFM101 Python loop over [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16... is "
                           "unrolled into the traced graph (120 copies of its body)")
    assert "#" not in line and "  " not in line


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_every_finding_is_one_line_in_every_format(project, capsys, fmt):
    """Every fixture (and the notebook) through each format: one line per finding."""
    from conftest import FIXTURES, every_rule

    (project / "multi.py").write_text(MULTILINE_QUOTE)
    main([str(FIXTURES), "multi.py", "--isolated", "--format", "json", *every_rule()])
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert len(findings) > 50 and any(f["cell"] for f in findings)
    main([str(FIXTURES), "multi.py", "--isolated", "--format", fmt, *every_rule()])
    out = capsys.readouterr().out
    if fmt == "text":
        assert len(out.splitlines()) == len(findings)
    elif fmt == "github":
        assert len([line for line in out.splitlines() if line.startswith("::warning")]) == len(findings)
        assert "%0A" not in out and "%0D" not in out
    else:
        document = json.loads(out)
        messages = ([f["message"] for f in document["findings"]] if fmt == "json"
                    else [r["message"]["text"] for r in document["runs"][0]["results"]])
        assert len(messages) == len(findings) and not any("\n" in m or "\r" in m for m in messages)
