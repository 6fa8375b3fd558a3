#!/usr/bin/env python
"""Benchmark tf-memlint against flake8, on two corpora, in one run: the site-packages ``keras``
and ``tensorflow/python`` trees that any install has (mostly TensorFlow's own code, which the
text test skips), and a TensorFlow-heavy corpus of real user code (``--user-corpus``; default
``/work/corpus/dev``, the development half built by ``benchmarks/corpus/build.py``).

    python benchmarks/bench.py                # both corpora, whole (several minutes)
    python benchmarks/bench.py --sample 10    # every 10th file of each (a quick look)

Every tool runs as a subprocess on the same list of files, one after the other in one run, so
the numbers are ratios measured side by side on the same machine, not absolute times. Time is
the CPU time (user + system) of the child and its waited-for children (``os.wait4``), which
other load on a shared machine disturbs much less than wall time; memory is the child's peak
RSS (``ru_maxrss``). flake8 alone and flake8 with the plugin alternate (``--repeat`` rounds,
the order flipped every round) and the best of each is kept:

  libcst parse     every file parsed by LibCST's native parser, 1 process (keras corpus only)
  flake8 -j1       flake8 alone (the TFM plugin removed), pyflakes + pycodestyle + mccabe
  flake8+TFM -j1   the same with the tf-memlint plugin
  tf-memlint -j1   the command, one process; -jN: all N cores (CPU time summed over workers)
  flake8 -jN, flake8+TFM -jN   only with ``--flake8-parallel``

Targets: flake8+TFM <= 1.3x flake8 on both corpora; peak RSS of flake8+TFM <= 2x
flake8 alone; tf-memlint -j1 <= 0.5x flake8 -j1 on the TF-heavy corpus; a generated 10 MB data
module that imports TensorFlow (no rule trigger) linted in under 30 s wall.

It also counts the files for which the command builds a LibCST tree, and times in this process
what one file costs tf-memlint when no rule can fire in it (keras corpus), per kind of file.
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
DEFAULT_USER_CORPUS = "/work/corpus/dev"
TARGET_PLUGIN, TARGET_RSS, TARGET_COMMAND, TARGET_GENERATED_S = 1.3, 2.0, 0.5, 30.0


def python_files(root: Path) -> list[str]:
    files: list[str] = []
    for directory, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__" and not d.startswith("."))
        files.extend(os.path.join(directory, f) for f in sorted(filenames) if f.endswith(".py"))
    return files


def keras_corpus(sample: int) -> list[str]:
    keras = importlib.util.find_spec("keras")
    tensorflow = importlib.util.find_spec("tensorflow")
    roots = []
    if keras and keras.submodule_search_locations:
        roots.append(Path(list(keras.submodule_search_locations)[0]))
    if tensorflow and tensorflow.submodule_search_locations:
        roots.append(Path(list(tensorflow.submodule_search_locations)[0]) / "python")
    files = [f for root in roots for f in python_files(root)]
    return files[::sample] if sample > 1 else files


class Run:
    """One finished subprocess: CPU seconds, wall seconds, peak RSS (MiB), output."""

    def __init__(self, command: list[str]) -> None:
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            started = time.perf_counter()
            process = subprocess.Popen(command, stdout=out, stderr=err)
            _, status, usage = os.wait4(process.pid, 0)
            self.wall = time.perf_counter() - started
            process.returncode = os.waitstatus_to_exitcode(status)
            out.seek(0)
            err.seek(0)
            self.stdout = out.read().decode("utf-8", "replace")
            self.stderr = err.read().decode("utf-8", "replace")
        self.returncode = process.returncode
        self.cpu = usage.ru_utime + usage.ru_stime
        self.rss = usage.ru_maxrss / 1024  # KiB on Linux
        self.findings = sum(1 for line in self.stdout.splitlines() if " TFM" in line)


# How many files the command builds a LibCST tree for with its default rules (the gate lets them
# through). Counted in a child: a parent grown by LibCST trees would pass its peak RSS on to every
# later child (Linux records the pre-exec high-water mark in the child's ru_maxrss).
TREES_BUILT = """
import sys
from tf_memlint import engine
from tf_memlint.files import lint_file
count = 0
real = engine.parse
def counting(source, *args, **kwargs):
    global count
    count += 1
    return real(source, *args, **kwargs)
engine.parse = counting
for path in open(sys.argv[1]).read().splitlines():
    lint_file(path, engine.enabled_codes(), {})
print(count)
"""


def trees_built(files: list[str]) -> int:
    """How many of ``files`` the command builds a LibCST tree for, with its default rules."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as listing:
        listing.write("\n".join(files))
    try:
        out = subprocess.run([sys.executable, "-c", TREES_BUILT, listing.name], capture_output=True,
                             text=True, check=True).stdout
    finally:
        os.unlink(listing.name)
    return int(out.split()[-1])


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


def bench_corpus(title: str, files: list[str], args: argparse.Namespace, unit: bool) -> dict[str, Run]:
    lines = sum(Path(f).read_bytes().count(b"\n") for f in files)
    python = sys.executable
    extra = ["--extend-select", args.extend_select] if args.extend_select else []
    tf_memlint = [python, "-m", "tf_memlint", "--isolated", "--exit-zero", *extra]
    flake8 = ["--isolated", "--exit-zero"]
    flake8_tfm = [*flake8, *extra]  # flake8 alone gets no TFM selection: it has no TFM plugin
    print(f"== {title}: {len(files)} files, {lines:,} lines", flush=True)
    best: dict[str, Run] = {}

    def run(label: str, command: list[str]) -> None:
        result = Run(command)
        if result.returncode not in (0, 1):
            print(f"  {label}: exit {result.returncode}: {result.stderr.strip()[-500:]}")
        print(f"  ran {label}: cpu {result.cpu:.1f} s, wall {result.wall:.1f} s, "
              f"peak {result.rss:.0f} MiB", flush=True)
        if label not in best or result.cpu < best[label].cpu:
            best[label] = result

    with tempfile.TemporaryDirectory() as tmp:
        listing = Path(tmp) / "files.txt"
        listing.write_text("\n".join(files))
        if unit:
            run("libcst parse (1 process)", [python, "-c", LIBCST_PARSE, str(listing)])
        pair = [("flake8 -j1", [python, "-c", FLAKE8_WITHOUT_TFM, *flake8, "-j1", *files]),
                ("flake8+TFM -j1", [python, "-m", "flake8", *flake8_tfm, "-j1", *files])]
        for round_ in range(args.repeat):  # alternate: A B, B A, A B ...
            for label, command in (pair if round_ % 2 == 0 else pair[::-1]):
                run(label, command)
        if args.flake8_parallel:
            jobs = f"-j{args.jobs}"
            run(f"flake8 {jobs}", [python, "-c", FLAKE8_WITHOUT_TFM, *flake8, jobs, *files])
            run(f"flake8+TFM {jobs}", [python, "-m", "flake8", *flake8_tfm, jobs, *files])
        run("tf-memlint -j1", [*tf_memlint, "-j1", *files])
        if args.jobs > 1:
            run(f"tf-memlint -j{args.jobs}", [*tf_memlint, f"-j{args.jobs}", *files])

    base = best["flake8 -j1"]
    print()
    print(f"{'run':<26}{'cpu s':>8}{'wall s':>8}{'lines/cpu s':>13}{'x flake8 -j1':>14}"
          f"{'peak MiB':>10}{'TFM findings':>14}")
    for label, result in best.items():
        shown = "" if label.startswith(("libcst", "flake8 -")) else str(result.findings)
        print(f"{label:<26}{result.cpu:>8.1f}{result.wall:>8.1f}{lines / max(result.cpu, 1e-9):>13,.0f}"
              f"{result.cpu / base.cpu:>14.2f}{result.rss:>10.0f}{shown:>14}")
    print()
    plugin = best["flake8+TFM -j1"].cpu / base.cpu
    rss = best["flake8+TFM -j1"].rss / base.rss
    command = best["tf-memlint -j1"].cpu / base.cpu
    print(f"flake8+TFM / flake8 (-j1, cpu): {plugin:.2f}x  (target <= {TARGET_PLUGIN}x: "
          f"{'met' if plugin <= TARGET_PLUGIN else 'NOT met'})")
    print(f"peak RSS flake8+TFM / flake8: {best['flake8+TFM -j1'].rss:.0f} / {base.rss:.0f} MiB = {rss:.2f}x  "
          f"(target <= {TARGET_RSS}x: {'met' if rss <= TARGET_RSS else 'NOT met'})")
    print(f"tf-memlint -j1 / flake8 -j1 (cpu): {command:.2f}x  (target on the TF-heavy corpus <= "
          f"{TARGET_COMMAND}x: {'met' if command <= TARGET_COMMAND else 'NOT met'})")
    print(f"LibCST trees built by the command (default rules): {trees_built(files)} of {len(files)} files")
    print(flush=True)
    return best


def generated_file(tmp: str) -> float:
    """Wall seconds for the command on a generated 10 MB data module importing TensorFlow."""
    row = "W{0} = [{0}, {0}, 0.5, 'abc{0}']\n"
    path = Path(tmp) / "generated.py"
    path.write_text("import tensorflow as tf\n" + "".join(row.format(i) for i in range(260_000)))
    return Run([sys.executable, "-m", "tf_memlint", "--isolated", "-j1", str(path)]).wall


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sample", type=int, default=1, help="take every k-th file of each corpus (default: all)")
    parser.add_argument("--user-corpus", default=DEFAULT_USER_CORPUS if os.path.isdir(DEFAULT_USER_CORPUS) else None,
                        help="a TF-heavy corpus of user code, built by benchmarks/corpus/build.py "
                             f"(default {DEFAULT_USER_CORPUS} when present); 'none' to skip")
    parser.add_argument("--no-keras", action="store_true", help="leave out the installed keras corpus")
    parser.add_argument("--repeat", type=int, default=1, help="rounds of flake8 / flake8+TFM, alternating (best kept)")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, help="N for the -jN rows")
    parser.add_argument("--flake8-parallel", action="store_true", help="add the flake8 -jN rows")
    parser.add_argument("--skip-flake8-parallel", action="store_true", help=argparse.SUPPRESS)  # the default now
    parser.add_argument("--extend-select", default="", metavar="CODES",
                        help="opt-in rules to add to both the plugin and the command runs, e.g. the rules "
                             "that follow calls (reach): TFM201,TFM202,TFM403,TFM404")
    args = parser.parse_args(argv)
    print(f"{os.cpu_count()} cores; CPU time of each child process; best of {args.repeat} "
          f"alternating round(s) for flake8 and flake8+TFM"
          f"{f'; every {args.sample}th file' if args.sample > 1 else ''}", flush=True)
    summary: list[tuple[str, dict[str, Run]]] = []
    if not args.no_keras:
        files = keras_corpus(args.sample)
        if files:
            summary.append(("installed keras + tensorflow/python sources",
                            bench_corpus("installed keras + tensorflow/python sources", files, args, unit=True)))
        else:
            print("== installed keras sources: neither keras nor tensorflow is installed, skipped")
    if args.user_corpus and args.user_corpus != "none":
        files = python_files(Path(args.user_corpus))
        files = files[::args.sample] if args.sample > 1 else files
        title = f"TF-heavy user code ({args.user_corpus})"
        summary.append((title, bench_corpus(title, files, args, unit=False)))
    if not summary:
        sys.exit("benchmark: no corpus (install keras/tensorflow or pass --user-corpus)")
    print("== summary (ratios of CPU time, -j1)")
    print(f"{'corpus':<48}{'TFM plugin':>12}{'peak RSS':>10}{'tf-memlint':>12}")
    for title, best in summary:
        base = best["flake8 -j1"]
        print(f"{title[:47]:<48}{best['flake8+TFM -j1'].cpu / base.cpu:>11.2f}x"
              f"{best['flake8+TFM -j1'].rss / base.rss:>9.2f}x{best['tf-memlint -j1'].cpu / base.cpu:>11.2f}x")
    print(f"{'targets':<48}{'<= 1.3x':>12}{'<= 2x':>10}{'<= 0.5x':>12}  (tf-memlint: TF-heavy corpus)")
    with tempfile.TemporaryDirectory() as tmp:
        seconds = generated_file(tmp)
    print(f"generated 10 MB module importing TensorFlow, tf-memlint -j1: {seconds:.1f} s wall "
          f"(bound {TARGET_GENERATED_S:.0f} s: {'met' if seconds < TARGET_GENERATED_S else 'NOT met'})")
    if not args.no_keras and summary and summary[0][0].startswith("installed"):
        print()
        print("per-file cost of tf-memlint where no rule can fire (keras corpus, best of 3, in process;"
              " target < 0.2 ms for files that name no TF module):")
        for kind, count, ms in per_file_costs(keras_corpus(args.sample)):
            print(f"  {kind:<48}{count:>6} files {ms:>8.3f} ms/file")
    return 0


if __name__ == "__main__":
    sys.exit(main())
