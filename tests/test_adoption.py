"""Adopting tf-memlint in an existing repository: per-file ignores, test code."""

from __future__ import annotations

from pathlib import Path

import pytest

from tf_memlint.cli import main
from tf_memlint.config import load_config
from tf_memlint.ignores import glob_matches, ignored_codes, is_test_path, parse_per_file_ignores

TRACED_LOOP = "import tensorflow as tf\n\n@tf.function\ndef f(x):\n    for i in range(1000):\n        x += 1\n    return x\n"


# -- per-file-ignores and test-paths ----------------------------------------------------------------

@pytest.mark.parametrize("pattern, path, expected", [
    ("tests/*", "tests/a/b.py", True),          # ruff's globset: * crosses /
    ("tests", "tests/a/b.py", True),            # a folder covers what is below it (flake8)
    ("tests/", "tests/b.py", True),
    ("**/test_*.py", "test_x.py", True),        # **/ may match nothing
    ("**/test_*.py", "pkg/sub/test_x.py", True),
    ("__init__.py", "pkg/__init__.py", True),   # no / : the file name
    ("scripts/*.py", "src/scripts_x.py", False),
    ("src/{cli,serve}.py", "src/serve.py", True),
    ("src/{cli,serve}.py", "src/train.py", False),
    ("./scripts/run.py", "scripts/run.py", True),
])
def test_glob_matches_like_ruff(tmp_path, pattern, path, expected):
    assert glob_matches(pattern, str(tmp_path / path), tmp_path) is expected


def test_per_file_ignores_in_both_syntaxes():
    assert parse_per_file_ignores({"tests/*": ["TFM404", "tfm1"]}) == [("tests/*", ["TFM404", "TFM1"])]
    flake8 = "tests/*: TFM404,TFM1\n    scripts/run.py:TFM405  notebooks/*.ipynb: TFM2"
    assert parse_per_file_ignores(flake8) == [("tests/*", ["TFM404", "TFM1"]), ("scripts/run.py", ["TFM405"]),
                                              ("notebooks/*.ipynb", ["TFM2"])]
    with pytest.raises(ValueError, match="TFM999"):
        parse_per_file_ignores({"x.py": ["TFM999"]})
    with pytest.raises(ValueError, match="before any"):
        parse_per_file_ignores("TFM101 x.py: TFM1")


def test_negated_glob_ignores_everywhere_else(tmp_path):
    rules = [("!src/**", ["TFM4"])]
    assert ignored_codes(str(tmp_path / "scripts/a.py"), rules, tmp_path) == ["TFM4"]
    assert ignored_codes(str(tmp_path / "src/a.py"), rules, tmp_path) == []


def _project(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in ("src/model.py", "tests/test_model.py", "scripts/once.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(TRACED_LOOP)
    return tmp_path


def _paths(capsys) -> set[str]:
    return {line.split(":")[0] for line in capsys.readouterr().out.splitlines()}


def test_per_file_ignores_from_pyproject(tmp_path, monkeypatch, capsys):
    project = _project(tmp_path, monkeypatch)
    (project / "pyproject.toml").write_text(
        '[tool.tf-memlint.per-file-ignores]\n"tests/*" = ["TFM1"]\n"scripts/once.py" = ["TFM101"]\n')
    assert main(["."]) == 1
    assert _paths(capsys) == {"src/model.py"}
    # The patterns are relative to the configuration's folder, wherever the command runs from.
    monkeypatch.chdir(project / "src")
    assert main([".."]) == 1
    assert _paths(capsys) == {"../src/model.py"}


def test_per_file_ignores_from_setup_cfg_uses_flake8_syntax(tmp_path, monkeypatch, capsys):
    project = _project(tmp_path, monkeypatch)
    (project / "setup.cfg").write_text("[tf-memlint]\nper-file-ignores =\n    tests/*: TFM1\n    scripts/*.py: TFM101\n")
    assert main(["."]) == 1
    assert _paths(capsys) == {"src/model.py"}


@pytest.mark.parametrize("table", ['[tool.tf-memlint]\nper-file-ignores = ["x"]\n',
                                   '[tool.tf-memlint.per-file-ignores]\n"x.py" = ["TFM9"]\n',
                                   '[tool.tf-memlint]\ntest-paths = 3\n'])
def test_bad_per_file_ignores_is_a_configuration_error(tmp_path, monkeypatch, capsys, table):
    project = _project(tmp_path, monkeypatch)
    (project / "pyproject.toml").write_text(table)
    assert main(["."]) == 2
    assert "pyproject.toml" in capsys.readouterr().err


def test_flake8_per_file_ignores_cover_tfm_codes(tmp_path, monkeypatch):
    """flake8 owns --per-file-ignores (a plugin option of the same name makes flake8 refuse to
    start), and it already applies to the plugin's codes: the same globs, the same result."""
    import subprocess
    import sys

    pytest.importorskip("flake8")
    project = _project(tmp_path, monkeypatch)
    (project / "setup.cfg").write_text("[flake8]\nper-file-ignores =\n    tests/*: TFM1\n    scripts/*.py: TFM101\n")
    completed = subprocess.run([sys.executable, "-m", "flake8", "--select", "TFM", "."], capture_output=True,
                               text=True, cwd=project, timeout=120)
    assert {line.split(":")[0] for line in completed.stdout.splitlines()} == {"./src/model.py"}


def test_test_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for path in ("test_a.py", "pkg/a_test.py", "conftest.py", "tests/helpers.py", "pkg/test/data.py"):
        assert is_test_path(path), path
    for path in ("src/a.py", "contest.py", "testing.py", "pkg/tests.py"):
        assert not is_test_path(path), path
    (tmp_path / "pyproject.toml").write_text('[tool.tf-memlint]\ntest-paths = ["qa/**", "*_spec.py"]\n')
    config = load_config(tmp_path / "pyproject.toml")
    assert config.test_paths == ["qa/**", "*_spec.py"]
    assert is_test_path("qa/smoke/run.py", config) and is_test_path("src/model_spec.py", config)
    assert not is_test_path("src/model.py", config)
    (tmp_path / "setup.cfg").write_text("[tf-memlint]\ntest-paths = qa/**, *_spec.py\n")
    assert load_config(tmp_path / "setup.cfg").test_paths == ["qa/**", "*_spec.py"]


def test_flake8_test_paths_option(tmp_path, monkeypatch):
    pytest.importorskip("flake8")
    from flake8.main.application import Application

    from tf_memlint.flake8_plugin import TFMemlintChecker

    monkeypatch.chdir(tmp_path)
    (tmp_path / "setup.cfg").write_text("[flake8]\ntfm-test-paths = qa/**, *_spec.py\n")
    (tmp_path / "a.py").write_text("x = 1\n")
    Application().initialize(["a.py"])
    assert TFMemlintChecker.test_paths == ["qa/**", "*_spec.py"]
    assert is_test_path("qa/run.py", TFMemlintChecker.test_paths)
