"""The command's cache (cache.py): identical output with and without it, a file linted again only
when it or what it imports from the project changed, and a damaged cache rebuilt, never trusted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import FIXTURES, REPO, every_rule
from tf_memlint import cache
from tf_memlint.cli import main

MODELS = '''
from tensorflow import keras


def build():
    return keras.models.load_model("m.h5")


def helper(x):
    return x + 1
'''
TRAIN = '''
from pkg import models


def search():
    for i in range(1000):
        models.build()
'''
EVALUATE = '''
from pkg.models import helper


def run():
    for i in range(1000):
        helper(i)
'''
OTHER = '''
import tensorflow as tf


@tf.function
def f(x):
    for i in range(1000):
        x = x + i
    return x
'''


def _run(capsys, *args: str) -> tuple[int, str]:
    status = main(["--isolated", "-j1", *args])
    return status, capsys.readouterr().out


def _log(path: Path, names: bool = True) -> list[tuple[set[str], str]]:
    """Per run: the files linted (cache.py's TF_MEMLINT_CACHE_LOG; their names, else their
    paths), and the run's summary line."""
    runs, linted, summaries = [], set(), ""
    for line in path.read_text().splitlines():
        if line == "end":
            runs.append((linted, summaries))
            linted, summaries = set(), ""
        elif line.startswith("lint "):
            linted.add(Path(line[5:]).name if names else line[5:])
        elif line.startswith("summaries "):
            summaries = line
    return runs


@pytest.fixture
def package(tmp_path, monkeypatch):
    root = tmp_path / "project"
    (root / "pkg").mkdir(parents=True)
    for name, text in {"__init__.py": "", "models.py": MODELS, "train.py": TRAIN,
                       "evaluate.py": EVALUATE, "other.py": OTHER}.items():
        (root / "pkg" / name).write_text(textwrap.dedent(text))
    monkeypatch.chdir(root)
    monkeypatch.delenv(cache.DIRECTORY_ENV, raising=False)
    log = tmp_path / "cache.log"
    monkeypatch.setenv(cache.LOG_ENV, str(log))
    return root, log


def test_a_second_run_lints_nothing_and_the_cache_is_tagged(package, capsys):
    root, log = package
    first = _run(capsys, *every_rule(), "pkg")
    second = _run(capsys, *every_rule(), "pkg")
    uncached = _run(capsys, *every_rule(), "--no-cache", "pkg")
    assert first == second == uncached
    assert "TFM403" in first[1] and "TFM101" in first[1]
    (linted_first, _), (linted_second, summaries) = _log(log)
    assert linted_first == {"__init__.py", "models.py", "train.py", "evaluate.py", "other.py"}
    assert linted_second == set() and summaries.startswith("summaries computed 0 ")
    directory = root / ".tf-memlint-cache"  # beside the configuration, else here
    assert (directory / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert (directory / ".gitignore").read_text().splitlines()[-1] == "*"


def test_editing_a_module_lints_it_and_the_callers_whose_table_changed_only(package, capsys):
    root, log = package
    models = root / "pkg" / "models.py"

    def run() -> set[str]:
        cached = _run(capsys, *every_rule(), "pkg")
        assert cached == _run(capsys, *every_rule(), "--no-cache", "pkg")  # the uncached run writes no log
        return _log(log)[-1][0]

    assert len(run()) == 5
    # helper gains an effect: evaluate.py imports it, train.py imports the module (its functions
    # with effects): both tables change.
    models.write_text(models.read_text().replace("return x + 1", "return keras.models.load_model(x)"))
    assert run() == {"models.py", "evaluate.py", "train.py"}
    assert "evaluate.py:7:9: TFM403" in _run(capsys, *every_rule(), "pkg")[1]
    # a comment at the end: a new summary? No, the same one: only models.py is linted again.
    models.write_text(models.read_text() + "# trailing comment\n")
    assert run() == {"models.py"}
    # build() loses its effect: train.py's table changes, evaluate.py's (helper only) does not.
    models.write_text(models.read_text().replace('return keras.models.load_model("m.h5")', "return None"))
    assert run() == {"models.py", "train.py"}
    assert "train.py" not in _run(capsys, *every_rule(), "pkg")[1]
    # the caller itself: nothing else.
    train = root / "pkg" / "train.py"
    train.write_text(train.read_text() + "\n\nmodels.helper(1)\n")
    assert run() == {"train.py"}
    # a line added above the defs moves them: the callers' messages name the new lines.
    models.write_text("\n" + models.read_text())
    assert run() == {"models.py", "train.py", "evaluate.py"}


def test_other_options_and_rules_are_other_entries(package, capsys):
    _, log = package
    _run(capsys, "pkg")
    _run(capsys, "--select", "TFM101", "pkg")
    _run(capsys, "--select", "TFM101", "--min-unrolled-iterations", "5000", "pkg")
    _run(capsys, "--select", "TFM101", "--min-unrolled-iterations", "5000", "pkg")
    assert [len(linted) for linted, _ in _log(log)] == [5, 5, 5, 0]


def _packs(directory: Path) -> list[Path]:
    return sorted(directory.glob("*/*.json"))


def _damage(entry: Path, how: str) -> None:
    data = entry.read_bytes()
    if how == "garbage":
        entry.write_bytes(os.urandom(64))
    elif how == "truncated":
        entry.write_bytes(data[:len(data) // 2])
    elif how == "empty":
        entry.write_bytes(b"")
    elif how == "wrong version":
        document = json.loads(data)
        document["fingerprint"] = "0" * 32
        entry.write_text(json.dumps(document))
    elif how == "wrong shape":  # every entry of the pack
        document = json.loads(data)
        document["entries"] = {key: {"findings": [[1, "x"]], "functions": [1], "tf": 1} for key in document["entries"]}
        entry.write_text(json.dumps(document))
    elif how == "a directory":
        entry.unlink()
        entry.mkdir()


@pytest.mark.parametrize("how", ["garbage", "truncated", "empty", "wrong version", "wrong shape", "a directory"])
def test_a_damaged_cache_is_ignored_and_rebuilt(package, capsys, how):
    root, log = package
    expected = _run(capsys, *every_rule(), "--no-cache", "pkg")
    assert _run(capsys, *every_rule(), "pkg") == expected
    packs = _packs(root / ".tf-memlint-cache")
    assert sorted(p.name.partition("-")[0] for p in packs) == ["result", "summary.json", "text.json"]
    for pack in packs:
        _damage(pack, how)
    assert _run(capsys, *every_rule(), "pkg") == expected  # every entry missed: all linted again
    linted, summaries = _log(log)[-1]
    assert len(linted) == 5 and " reused 0" in summaries
    if how != "a directory":  # rewritten in place (a directory in the way stays a miss)
        assert _run(capsys, *every_rule(), "pkg") == expected
        linted, summaries = _log(log)[-1]
        assert linted == set() and summaries.startswith("summaries computed 0 ")


def test_a_cache_that_cannot_be_written_is_only_slower(package, capsys):
    root, _ = package
    (root / "blocked").write_text("a file where the cache directory would be")
    expected = _run(capsys, *every_rule(), "--no-cache", "pkg")
    assert _run(capsys, *every_rule(), "--cache-dir", "blocked", "pkg") == expected
    assert _run(capsys, *every_rule(), "--cache-dir", "blocked/sub", "pkg") == expected


def test_no_cache_and_stdin_write_nothing(package, capsys, monkeypatch):
    root, _ = package
    _run(capsys, "--no-cache", "pkg")
    assert not (root / ".tf-memlint-cache").exists()
    import io
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(textwrap.dedent(OTHER).encode())))
    status, out = _run(capsys, "-", "--stdin-filename", "pkg/other.py")
    assert status == 1 and "TFM101" in out
    assert not (root / ".tf-memlint-cache").exists()


def test_clean_deletes_the_cache_and_nothing_else(package, capsys):
    root, _ = package
    _run(capsys, "pkg")
    assert (root / ".tf-memlint-cache").is_dir()
    assert main(["clean"]) == 0
    assert not (root / ".tf-memlint-cache").exists() and (root / "pkg" / "models.py").is_file()
    assert main(["clean"]) == 0  # nothing to delete
    assert main(["clean", "--cache-dir", "pkg"]) == 2  # not a cache: kept
    assert (root / "pkg" / "models.py").is_file()


def test_the_cache_beside_the_configuration(package, capsys, monkeypatch):
    root, _ = package
    (root / "pyproject.toml").write_text("[tool.tf-memlint]\nextend-select = ['TFM403']\n")
    monkeypatch.chdir(root / "pkg")
    assert main(["-j1", "."]) == 1
    assert (root / ".tf-memlint-cache" / "CACHEDIR.TAG").is_file()
    assert not (root / "pkg" / ".tf-memlint-cache").exists()
    assert main(["clean"]) == 0 and not (root / ".tf-memlint-cache").exists()


def test_fixtures_with_every_rule_notebooks_included_identical_with_and_without_cache(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    monkeypatch.setenv(cache.LOG_ENV, str(tmp_path / "log"))
    arguments = [*every_rule(), "--cache-dir", str(tmp_path / "cache"), "fixtures"]
    uncached = _run(capsys, *every_rule(), "--no-cache", "fixtures")
    assert _run(capsys, *arguments) == uncached
    assert _run(capsys, *arguments) == uncached
    (first, _), (second, _) = _log(tmp_path / "log", names=False)
    assert "fixtures/notebooks/bad_training.ipynb" in first
    assert len(first) == len(list(FIXTURES.rglob("*.py"))) + 1 and second == set()
    json_uncached = _run(capsys, *every_rule(), "--no-cache", "--format", "json", "fixtures/notebooks")
    assert _run(capsys, *arguments[:-1], "--format", "json", "fixtures/notebooks") == json_uncached
    assert '"cell"' in json_uncached[1]


def test_concurrent_runs_with_workers_share_one_cache(tmp_path):
    """Two runs at once, each with two worker processes, then a third: same output every time."""
    command = [sys.executable, "-m", "tf_memlint", "--isolated", "-j2", *every_rule(),
               "--cache-dir", str(tmp_path / "cache"), "fixtures"]
    environment = {**os.environ, "PYTHONPATH": str(REPO)}
    expected = subprocess.run([*command[:-3], "--no-cache", "fixtures"], cwd=REPO, env=environment,
                              capture_output=True, text=True).stdout
    runs = [subprocess.Popen(command, cwd=REPO, env=environment, stdout=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [run.communicate()[0] for run in runs]
    third = subprocess.run(command, cwd=REPO, env={**environment, cache.LOG_ENV: str(tmp_path / "log")},
                           capture_output=True, text=True).stdout
    assert expected and outputs == [expected, expected] and third == expected
    assert _log(tmp_path / "log")[0][0] == set()
    assert not list((tmp_path / "cache").rglob(".tmp-*"))  # no temporary file left behind


def test_a_result_belongs_to_a_path_not_only_to_bytes(package, capsys):
    """The engine may judge a file by where it is (test code): the same bytes at another path
    are linted there, not served the other's result."""
    root, log = package
    (root / "tests").mkdir()
    (root / "tests" / "test_other.py").write_text((root / "pkg" / "other.py").read_text())
    _run(capsys, "pkg/other.py", "tests/test_other.py")
    assert _log(log, names=False)[-1][0] == {"pkg/other.py", "tests/test_other.py"}
    _run(capsys, "pkg/other.py", "tests/test_other.py")
    assert _log(log)[-1][0] == set()


def test_a_result_comes_back_whole(tmp_path):
    """Every field of a result and of its findings (their grade too) survives the cache; a field
    added to FileResult must be added to the cache (this fails until it is)."""
    import dataclasses

    from tf_memlint.files import FileResult
    from tf_memlint.notebook import CellLocation
    from tf_memlint.rule import Diagnostic

    assert [f.name for f in dataclasses.fields(FileResult)] == ["path", "findings", "error", "cells"]
    samples = {int: 7, str: "a value"}
    values = [samples.get(next(t for t in types if t is not type(None)), "x") for types in cache._field_types(Diagnostic)]
    finding, other = Diagnostic(*values), Diagnostic(*[3 if v == 7 else v for v in values])
    result = FileResult("nb.ipynb", [finding, other], error="cell 2 skipped",
                        cells={finding: CellLocation(2, 3, 4, 50, 6)})
    store = cache.Cache(tmp_path)
    key = store.result_key("nb.ipynb", b"source", None)
    store.store_result("settings", key, result)
    store.save()
    back = cache.Cache(tmp_path).load_result("settings", key, "nb.ipynb")
    assert [cache._values(f) for f in back.findings] == [cache._values(f) for f in result.findings]
    assert back.error == result.error and back.path == "nb.ipynb"
    assert {cache._values(f)[0]: cache._values(c) for f, c in back.cells.items()} == {7: [2, 3, 4, 50, 6]}
