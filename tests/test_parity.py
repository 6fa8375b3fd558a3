"""The two front doors agree: the same selection gives the same findings through flake8 and the
command, on the fixtures (every rule's bad and good files, the myths, the cross-file ones)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import REPO

pytest.importorskip("flake8")

# (the command's selection, flake8's spelling of the same). flake8's --ignore replaces its default
# ignore list, where the opt-in rules are (so `flake8 --ignore X` turns every opt-in rule on):
# flake8's own advice is --extend-ignore, the command's --ignore.
SELECTIONS = [
    ([], []),
    (["--select", "TFM"], ["--select", "TFM"]),
    (["--select", "TFM4"], ["--select", "TFM4"]),
    (["--extend-select", "TFM4"], ["--extend-select", "TFM4"]),
    (["--extend-select", "TFM201,TFM404"], ["--extend-select", "TFM201,TFM404"]),
    (["--select", "TFM1", "--ignore", "TFM101"], ["--select", "TFM1", "--extend-ignore", "TFM101"]),
    (["--select", "TFM", "--ignore", "TFM2,TFM404"], ["--select", "TFM", "--extend-ignore", "TFM2,TFM404"]),
]


def _flake8(selection: list[str]) -> set[tuple]:
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    completed = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", *selection,
         "--format", "%(path)s\t%(row)d\t%(col)d\t%(code)s\t%(text)s", "fixtures"],
        capture_output=True, text=True, cwd=REPO, env=env, timeout=600)
    assert completed.returncode in (0, 1), completed.stderr
    found = set()
    for line in completed.stdout.splitlines():
        path, row, col, code, text = line.split("\t")
        if code.startswith("TFM"):  # flake8's own checks (pycodestyle, pyflakes) are not ours
            found.add((os.path.normpath(path), int(row), int(col), code, text))
    return found


def _command(selection: list[str]) -> set[tuple]:
    completed = subprocess.run(
        [sys.executable, "-m", "tf_memlint", "--isolated", "--exit-zero", "--format", "json",
         "--include", "*.py", "--jobs", "1", *selection, "fixtures"],
        capture_output=True, text=True, cwd=REPO, timeout=600, env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert completed.returncode == 0, completed.stderr
    return {(os.path.normpath(f["path"]), f["line"], f["column"], f["code"], f["message"])
            for f in json.loads(completed.stdout)["findings"]}


@pytest.mark.parametrize("command, flake8", SELECTIONS, ids=[" ".join(c) or "default" for c, _ in SELECTIONS])
def test_both_doors_report_the_same(command, flake8):
    by_command = _command(command)
    by_flake8 = _flake8(flake8)
    # The command follows imports between the files it is given; flake8 sees one file at a time.
    # No fixture depends on another module for a finding, so the sets are equal.
    assert by_command == by_flake8, (sorted(by_command - by_flake8)[:5], sorted(by_flake8 - by_command)[:5])
    assert by_command or command == ["--select", "TFM1", "--ignore", "TFM101"]


@pytest.mark.parametrize("argv, message", [
    (["--select", "TFM1", "--ignore", "TFM1"], "select TFM1 enables no rule: ignore TFM1"),
    (["--extend-select", "TFM4", "--ignore", "TFM4"], "extend-select TFM4 enables no rule: ignore TFM4"),
    (["--ignore", "TFM"], "the selection enables no rule"),
    (["--extend-select", "TFM9"], "unknown rule code or prefix: TFM9"),
])
def test_a_selection_that_enables_nothing_is_an_error(tmp_path, monkeypatch, capsys, argv, message):
    from tf_memlint.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text("import tensorflow as tf\n")
    assert main(["a.py", "--isolated", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err


def test_a_prefix_selects_the_opt_in_rules_under_it(tmp_path, monkeypatch, capsys):
    from tf_memlint.cli import main

    monkeypatch.chdir(tmp_path)
    assert main([str(REPO / "fixtures" / "TFM404"), "--isolated", "--extend-select", "TFM4"]) == 1
    assert " TFM404 " in capsys.readouterr().out


def _single_module_cases() -> list[str]:
    """The leak benchmark's reproductions (code of real reports, written here) that are one module:
    the command follows imports between the files it is given, flake8 sees one file at a time."""
    cases = REPO / "benchmarks" / "leaks" / "cases"
    files = []
    for case in sorted(cases.iterdir()):
        modules = sorted(case.glob("*.py"))
        if len(modules) == 1:
            files.append(str(modules[0].relative_to(REPO)))
    return files


@pytest.mark.parametrize("confidence", ["high", "medium", "low"])
def test_both_doors_agree_on_real_reports_code_at_every_confidence(confidence):
    """Parity beyond the fixtures: the code of real leak reports, every rule, each confidence."""
    files = _single_module_cases()
    assert len(files) > 30
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    flake8 = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--select", "TFM", f"--tfm-confidence={confidence}",
         "--format", "%(path)s\t%(row)d\t%(col)d\t%(code)s\t%(text)s", *files],
        capture_output=True, text=True, cwd=REPO, env=env, timeout=600)
    assert flake8.returncode in (0, 1), flake8.stderr
    by_flake8 = set()
    for line in flake8.stdout.splitlines():
        path, row, col, code, text = line.split("\t")
        if code.startswith("TFM"):
            by_flake8.add((os.path.normpath(path), int(row), int(col), code, text))
    command = subprocess.run(
        [sys.executable, "-m", "tf_memlint", "--isolated", "--exit-zero", "--format", "json", "--no-cache",
         "--jobs", "1", "--select", "TFM", "--confidence", confidence, *files],
        capture_output=True, text=True, cwd=REPO, timeout=600, env=env)
    by_command = {(os.path.normpath(f["path"]), f["line"], f["column"], f["code"], f["message"])
                  for f in json.loads(command.stdout)["findings"]}
    assert by_command == by_flake8, (sorted(by_command - by_flake8)[:5], sorted(by_flake8 - by_command)[:5])
    assert by_command
