"""Adopting tf-memlint in an existing repository: per-file ignores, test code, a baseline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tf_memlint.cli import main
from tf_memlint.config import ConfigError, load_config
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


def test_unknown_adoption_value_types_are_refused(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.tf-memlint]\nbaseline = 1\n')
    with pytest.raises(ConfigError, match="baseline"):
        load_config(tmp_path / "pyproject.toml")


# -- the baseline, on a small realistic project -------------------------------------------------------

TRAIN = '''\
import numpy as np
import tensorflow as tf

from data import batches


@tf.function
def augment(images):
    for _ in range(500):
        images = tf.image.random_flip_left_right(images)
    return images


def train(epochs):
    model = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(1)])
    for epoch in range(epochs):
        model.compile(optimizer="adam", loss="mse")
        model.fit(np.zeros((32, 8)), np.zeros((32, 1)), epochs=1, verbose=0)
    return model
'''
DATA = '''\
import numpy as np


def batches():
    for _ in range(100):
        yield np.zeros((32, 8)), np.zeros((32, 1))
'''
SERVE = '''\
import tensorflow as tf

model = tf.keras.models.load_model("model.keras")


@tf.function
def score(x, threshold):
    return tf.reduce_sum(x) > threshold


def handle(requests):
    for i, request in enumerate(requests):
        yield score(tf.constant(request), i)
'''
PLANTED = '''\


@tf.function
def smooth(x):
    for _ in range(2000):
        x = x * 0.5
    return x
'''


@pytest.fixture
def repository(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "app").mkdir()
    for name, text in (("app/train.py", TRAIN), ("app/data.py", DATA), ("app/serve.py", SERVE)):
        (tmp_path / name).write_text(text)
    # Every graded finding shown: the serving loop's is not high (its repetition is unknown).
    (tmp_path / "pyproject.toml").write_text('[tool.tf-memlint]\nconfidence = "low"\n')
    return tmp_path


def _findings(capsys, *args: str) -> list[dict]:
    main([".", "--format", "json", *args])
    return json.loads(capsys.readouterr().out)["findings"]


def test_baseline_reports_only_new_findings(repository, capsys):
    before = _findings(capsys)
    assert len(before) >= 3, before  # the project has findings of several rules to record
    assert main([".", "--write-baseline", "tf-memlint-baseline.json"]) == 0
    assert "recorded %d findings" % len(before) in capsys.readouterr().err
    recorded = json.loads((repository / "tf-memlint-baseline.json").read_text())["findings"]
    assert len(recorded) == len(before) and {r["path"] for r in recorded} <= {"app/train.py", "app/serve.py"}

    assert main([".", "--baseline", "tf-memlint-baseline.json"]) == 0
    assert _findings(capsys, "--baseline", "tf-memlint-baseline.json") == []

    # Lines moved above every finding (an import block, a helper) bring nothing back.
    for name in ("app/train.py", "app/serve.py"):
        path = repository / name
        path.write_text('"""Module docs."""\nimport os\nimport sys\n\n\ndef helper():\n    return os.sep\n\n\n'
                        + path.read_text())
    assert _findings(capsys, "--baseline", "tf-memlint-baseline.json") == []

    # A new anti-pattern is reported, and only it.
    with open(repository / "app/train.py", "a") as handle:
        handle.write(PLANTED)
    new = _findings(capsys, "--baseline", "tf-memlint-baseline.json")
    assert [(f["path"], f["code"], f["line"]) for f in new] == [
        ("app/train.py", "TFM101", len((repository / "app/train.py").read_text().splitlines()) - 2)]


def test_baseline_from_the_configuration_and_a_subfolder(repository, monkeypatch, capsys):
    assert main([".", "--write-baseline", "baseline.json"]) == 0
    with open(repository / "pyproject.toml", "a") as handle:
        handle.write('baseline = "baseline.json"\n')
    monkeypatch.chdir(repository / "app")  # the config's baseline is relative to the config
    assert main(["."]) == 0
    assert main([".", "--baseline", "../baseline.json"]) == 0


def test_a_copied_flagged_line_is_one_new_finding(repository, capsys):
    assert main([".", "--write-baseline", "baseline.json"]) == 0
    serve = repository / "app/serve.py"
    serve.write_text(serve.read_text() + "\n\ndef handle_again(requests):\n    for i, request in "
                     "enumerate(requests):\n        yield score(tf.constant(request), i)\n")
    new = _findings(capsys, "--baseline", "baseline.json")
    assert len(new) == 1 and new[0]["line"] > 14, new  # the copy, not the recorded one


def test_baseline_errors_are_one_line(repository, capsys):
    assert main([".", "--baseline", "missing.json"]) == 2
    assert capsys.readouterr().err.strip().endswith("write one with --write-baseline missing.json")
    (repository / "bad.json").write_text('{"findings": 3}')
    assert main([".", "--baseline", "bad.json"]) == 2
    assert "not a tf-memlint baseline" in capsys.readouterr().err


def test_baseline_on_stdin_and_notebooks(repository, monkeypatch, capsys):
    import io
    import shutil
    import sys

    shutil.copy(Path(__file__).resolve().parent.parent / "fixtures/notebooks/bad_training.ipynb", "nb.ipynb")
    assert main(["nb.ipynb", "--write-baseline", "b.json"]) == 0
    recorded = json.loads(Path("b.json").read_text())["findings"]
    assert recorded and all(r["text"] for r in recorded)  # the cell's line, not the JSON's
    assert main(["nb.ipynb", "--baseline", "b.json"]) == 0

    class Stdin:
        buffer = io.BytesIO(TRAIN.encode())

    monkeypatch.setattr(sys, "stdin", Stdin)
    assert main(["-", "--stdin-filename", "app/train.py", "--write-baseline", "s.json"]) == 0
    Stdin.buffer = io.BytesIO(("import os\n" + TRAIN).encode())
    assert main(["-", "--stdin-filename", "app/train.py", "--baseline", "s.json"]) == 0


def test_baseline_through_pre_commit(repository):
    """The hook with `args: [--baseline, FILE]`: pre-commit appends the staged files to them."""
    import shutil
    import subprocess
    import sys

    pre_commit = shutil.which("pre-commit", path=str(Path(sys.executable).parent)) or shutil.which("pre-commit")
    if pre_commit is None or shutil.which("git") is None:
        pytest.skip("pre-commit or git is not installed")
    assert main([".", "--write-baseline", "tf-memlint-baseline.json"]) == 0
    (repository / ".pre-commit-config.yaml").write_text(
        "repos:\n  - repo: local\n    hooks:\n      - id: tf-memlint\n        name: tf-memlint\n"
        "        entry: tf-memlint --force-exclude\n        language: system\n"
        "        types_or: [python, pyi, jupyter]\n        args: [--baseline, tf-memlint-baseline.json]\n")
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(repository),
           "PRE_COMMIT_HOME": str(repository / ".cache"), "GIT_CONFIG_NOSYSTEM": "1",
           "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    for command in (["git", "init", "-q"], ["git", "add", "."]):
        subprocess.run(command, cwd=repository, env=env, check=True, timeout=60)
    run = [pre_commit, "run", "--files", "app/train.py", "app/serve.py"]
    completed = subprocess.run(run, cwd=repository, env=env, capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    with open(repository / "app/serve.py", "a") as handle:
        handle.write(PLANTED)
    completed = subprocess.run(run, cwd=repository, env=env, capture_output=True, text=True, timeout=300)
    assert completed.returncode == 1 and completed.stdout.count(": TFM") == 1, completed.stdout
    assert "app/serve.py:" in completed.stdout


def test_fixes_leave_per_file_ignored_code_alone(tmp_path, monkeypatch, capsys):
    """What per-file-ignores hide is not fixed either (ruff fixes only what it reports)."""
    compile_loop = (Path(__file__).resolve().parent.parent / "fixtures/TFM406/bad_compile_in_loop.py").read_text()
    monkeypatch.chdir(tmp_path)
    for name in ("src/train.py", "scripts/once.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(compile_loop)
    (tmp_path / "pyproject.toml").write_text('[tool.tf-memlint.per-file-ignores]\n"scripts/*" = ["TFM406"]\n')
    main([".", "--diff", "--unsafe-fixes"])
    diff = capsys.readouterr().out
    assert "src/train.py" in diff and "scripts/once.py" not in diff
