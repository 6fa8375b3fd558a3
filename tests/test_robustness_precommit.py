"""The pre-commit hook: lints exactly the files it is given (the staged ones), honours excludes
for them with --force-exclude, and is declared as the issue asks."""

from __future__ import annotations

from pathlib import Path

from tf_memlint.cli import main

BAD = "import tensorflow as tf\n\n@tf.function\ndef f(x):\n    for i in range(1000):\n        x += 1\n    return x\n"
HOOKS = Path(__file__).resolve().parent.parent / ".pre-commit-hooks.yaml"


def test_hook_declaration():
    text = HOOKS.read_text()
    for line in ("- id: tf-memlint", "entry: tf-memlint --force-exclude", "language: python",
                 "types_or: [python, pyi, jupyter]", "require_serial: false"):
        assert line in text


def test_only_the_given_files_are_linted(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for name in ("staged.py", "unstaged.py"):
        (tmp_path / name).write_text(BAD)
    (tmp_path / "generated").mkdir()
    (tmp_path / "generated" / "staged_too.py").write_text(BAD)
    (tmp_path / "pyproject.toml").write_text('[tool.tf-memlint]\nextend-exclude = ["generated"]\n')
    assert main(["--force-exclude", "staged.py", "generated/staged_too.py"]) == 1
    out = capsys.readouterr().out
    assert "staged.py:5:5" in out and "unstaged.py" not in out and "staged_too.py" not in out
    assert main(["--force-exclude", "generated/staged_too.py"]) == 0  # all excluded: clean


def test_readme_local_hook_runs_under_pre_commit(tmp_path):
    """The README's `repo: local` example, under real pre-commit, on staged files and a notebook."""
    import re
    import shutil
    import subprocess
    import sys

    import pytest

    pre_commit = shutil.which("pre-commit", path=str(Path(sys.executable).parent)) or shutil.which("pre-commit")
    if pre_commit is None or shutil.which("git") is None:
        pytest.skip("pre-commit or git is not installed")
    readme = (HOOKS.parent / "README.md").read_text(encoding="utf-8")
    config = re.search(r"```yaml\n(repos:\n  - repo: local\n.*?)```", readme, re.S).group(1)
    (tmp_path / ".pre-commit-config.yaml").write_text(config)
    (tmp_path / "bad.py").write_text(BAD)
    shutil.copy(HOOKS.parent / "fixtures" / "notebooks" / "bad_training.ipynb", tmp_path / "nb.ipynb")
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(tmp_path),
           "PRE_COMMIT_HOME": str(tmp_path / ".cache"), "GIT_CONFIG_NOSYSTEM": "1"}
    for command in (["git", "init", "-q"], ["git", "add", "."]):
        subprocess.run(command, cwd=tmp_path, env=env, check=True, timeout=60)
    completed = subprocess.run([pre_commit, "run", "--all-files"], cwd=tmp_path, env=env,
                               capture_output=True, text=True, timeout=300)
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert "bad.py:5:5: TFM101" in completed.stdout and "nb.ipynb:cell 3:3:5: TFM101" in completed.stdout
