"""CI's slice of scripts/crash_sweep.py: a sample of the installed tensorflow, keras, numpy and
standard library through both front doors, with zero crashes and zero internal errors. The full
sweep (every file) is `python scripts/crash_sweep.py`."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "crash_sweep.py"


def _load():
    spec = importlib.util.spec_from_file_location("crash_sweep", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["crash_sweep"] = module
    spec.loader.exec_module(module)
    return module


def test_crash_sweep_sample(capsys):
    sweep = _load()
    files = []
    roots = sweep.default_roots()  # just the standard library in a venv without tensorflow/numpy
    per_root = max(25, 60 // len(roots))
    for root in roots:
        found = sweep.python_files(root)
        files.extend(found[:: max(1, len(found) // per_root)])
    summary = sweep.summarise(sweep.run(files, jobs=1))
    assert summary["files"] >= 50
    for door in ("flake8", "cli"):
        assert summary[door]["crashes"] == [], summary[door]["crashes"]
        assert summary[door]["internal_errors"] == [], summary[door]["internal_errors"]
