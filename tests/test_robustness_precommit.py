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
                 "types_or: [python, pyi]", "require_serial: false"):
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
