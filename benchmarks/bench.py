#!/usr/bin/env python
"""Benchmark tf-memlint against flake8 and a bare LibCST parse, on a corpus every install has:
the site-packages ``keras`` and ``tensorflow/python`` trees.

    python benchmarks/bench.py                # the whole corpus (several minutes)
    python benchmarks/bench.py --sample 10    # every 10th file (a quick look)

Every tool runs as a subprocess on the same list of files, one after the other in one run, so
the numbers are ratios measured side by side on the same machine, not absolute times:

  libcst parse     every file parsed by LibCST's native parser, 1 process: the unit
  flake8 -j1       flake8 alone (the TFM plugin removed), pyflakes + pycodestyle + mccabe
  flake8+TFM -j1   the same with the tf-memlint plugin
  flake8 -jN, flake8+TFM -jN   the same on all N cores (flake8's default)
  tf-memlint -j1 / -jN         the command, one process / all cores

It also times, in this process, what one file costs tf-memlint when no rule can fire in it
(the text test, and where needed ``ast.parse`` and the gate), per kind of file.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# flake8 without the TFM plugin: drop it from flake8's plugin list before flake8 runs.
FLAKE8_WITHOUT_TFM = """
import sys
from flake8.plugins import finder
_find = finder.find_plugins
finder.find_plugins = lambda *a, **k: [p for p in _find(*a, **k) if p.package != "tf-memlint"]
from flake8.main.cli import main
sys.argv[0] = "flake8"
sys.exit(main())
"""
LIBCST_PARSE = """
import sys
import libcst
for path in open(sys.argv[1]).read().splitlines():
    with open(path, "rb") as handle:
        source = handle.read()
    try:
        libcst.parse_module(source)
    except Exception:
        pass
"""


def corpus(sample: int) -> list[str]:
    files: list[str] = []
    keras = importlib.util.find_spec("keras")
    tensorflow = importlib.util.find_spec("tensorflow")
    roots = []
    if keras and keras.submodule_search_locations:
        roots.append(Path(list(keras.submodule_search_locations)[0]))
    if tensorflow and tensorflow.submodule_search_locations:
        roots.append(Path(list(tensorflow.submodule_search_locations)[0]) / "python")
    if not roots:
        sys.exit("benchmark: neither keras nor tensorflow is installed")
    for root in roots:
        for directory, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            files.extend(os.path.join(directory, f) for f in sorted(filenames) if f.endswith(".py"))
    return files[::sample] if sample > 1 else files


def timed(command: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    started = time.perf_counter()
    completed = subprocess.run(command, capture_output=True, text=True)
    return time.perf_counter() - started, completed


def per_file_costs(files: list[str]) -> list[tuple[str, int, float]]:
    """(kind, files, mean ms) for files where no rule can fire, through the command's path."""
    from tf_memlint.engine import MENTIONS_TF, could_fire, may_import_tf, parse_ast
    from tf_memlint.files import lint_file
    from tf_memlint.rule import all_rules

    codes = list(all_rules())
    kinds: dict[str, list[float]] = {"names no TF/Keras module (text test)": [],
                                     "imports only TF internals (text import test)": [],
                                     "imports TF, no rule trigger (ast gate)": []}
    for path in files:
        raw = Path(path).read_bytes()
        if not MENTIONS_TF(raw):
            kind = "names no TF/Keras module (text test)"
        elif not may_import_tf(raw):
            kind = "imports only TF internals (text import test)"
        else:
            tree = parse_ast(raw)
            if tree is None or could_fire(tree, codes):
                continue
            kind = "imports TF, no rule trigger (ast gate)"
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            lint_file(path, codes, {})
            best = min(best, time.perf_counter() - started)
        kinds[kind].append(best)
    return [(kind, len(times), 1000 * sum(times) / len(times) if times else 0.0)
            for kind, times in kinds.items()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sample", type=int, default=1, help="take every k-th file (default: all)")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, help="N for the -jN rows")
    parser.add_argument("--skip-flake8-parallel", action="store_true", help="leave out the flake8 -jN rows")
    args = parser.parse_args(argv)
    files = corpus(args.sample)
    lines = sum(Path(f).read_bytes().count(b"\n") for f in files)
    python = sys.executable
    tf_memlint = [python, "-m", "tf_memlint", "--isolated", "--exit-zero"]
    flake8 = ["--isolated", "--exit-zero"]
    with tempfile.TemporaryDirectory() as tmp:
        listing = Path(tmp) / "files.txt"
        listing.write_text("\n".join(files))
        runs = [("libcst parse (1 process)", [python, "-c", LIBCST_PARSE, str(listing)]),
                ("flake8 -j1", [python, "-c", FLAKE8_WITHOUT_TFM, *flake8, "-j1", *files]),
                ("flake8+TFM -j1", [python, "-m", "flake8", *flake8, "-j1", *files])]
        if not args.skip_flake8_parallel:
            jobs = f"-j{args.jobs}"
            runs += [(f"flake8 {jobs}", [python, "-c", FLAKE8_WITHOUT_TFM, *flake8, jobs, *files]),
                     (f"flake8+TFM {jobs}", [python, "-m", "flake8", *flake8, jobs, *files])]
        runs += [("tf-memlint -j1", [*tf_memlint, "-j1", *files]),
                 (f"tf-memlint -j{args.jobs}", [*tf_memlint, f"-j{args.jobs}", *files])]
        print(f"corpus: {len(files)} files, {lines} lines (site-packages keras + tensorflow/python"
              f"{f', every {args.sample}th file' if args.sample > 1 else ''}); {os.cpu_count()} cores")
        times: dict[str, float] = {}
        findings: dict[str, int] = {}
        for label, command in runs:
            seconds, completed = timed(command)
            times[label] = seconds
            if completed.returncode not in (0, 1):
                print(f"  {label}: exit {completed.returncode}: {completed.stderr.strip()[-500:]}")
            findings[label] = sum(1 for line in completed.stdout.splitlines() if " TFM" in line)
            print(f"  ran {label}: {seconds:.1f} s", flush=True)
    unit = times["libcst parse (1 process)"]
    print()
    print(f"{'run':<26}{'wall s':>9}{'lines/s':>11}{'x libcst parse':>16}{'TFM findings':>14}")
    for label, seconds in times.items():
        shown = "" if label.startswith(("libcst", "flake8 -")) else str(findings[label])
        print(f"{label:<26}{seconds:>9.1f}{lines / seconds:>11.0f}{seconds / unit:>16.2f}{shown:>14}")
    print()
    overhead = times["flake8+TFM -j1"] / times["flake8 -j1"] - 1
    print(f"plugin overhead on flake8 -j1: {100 * overhead:+.0f}% (target: at most +30%)")
    if not args.skip_flake8_parallel:
        par = times[f"flake8+TFM -j{args.jobs}"] / times[f"flake8 -j{args.jobs}"] - 1
        print(f"plugin overhead on flake8 -j{args.jobs}: {100 * par:+.0f}%")
        print(f"tf-memlint -j{args.jobs} / flake8 -j{args.jobs}: "
              f"{times[f'tf-memlint -j{args.jobs}'] / times[f'flake8 -j{args.jobs}']:.2f}")
    ratio = times[f"tf-memlint -j{args.jobs}"] / times["flake8 -j1"]
    print(f"tf-memlint -j{args.jobs} / flake8 -j1: {ratio:.2f} "
          f"(target: below 1)")
    print()
    print("per-file cost of tf-memlint where no rule can fire (best of 3, in process; target < 0.2 ms"
          " for files that name no TF module):")
    for kind, count, ms in per_file_costs(files):
        print(f"  {kind:<48}{count:>6} files {ms:>8.3f} ms/file")
    return 0


if __name__ == "__main__":
    sys.exit(main())
