"""The benchmark script runs end to end on a tiny slice of its corpus and prints every row."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "bench.py"


def test_benchmark_runs_on_a_sample():
    pytest.importorskip("keras")
    completed = subprocess.run([sys.executable, str(BENCH), "--sample", "400", "--skip-flake8-parallel",
                                "--large-module", "0.3"],
                               capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr
    out = completed.stdout
    for row in ("libcst parse (1 process)", "flake8 -j1", "flake8+TFM -j1", "tf-memlint -j1"):
        assert f"\n{row} " in out, out
    assert "flake8+TFM / flake8 (-j1, cpu):" in out and "== summary" in out and "ms/file" in out
    assert "exit " not in out, out  # no tool failed
    assert "generated 0.3 MB module with one traced loop, flake8+TFM / flake8:" in out, out
    if "== cache:" in out:  # the cache case runs where the TF-heavy corpus is (its ratio needs the whole corpus)
        assert out.count("output identical: yes") == 3 and "linted 3" in out, out
