#!/usr/bin/env python
"""Where tf-memlint's time goes on a corpus: the cost of each phase of the plugin's path, in
this process, per file, summed: the profile behind the speed targets.

    python benchmarks/phases.py [DIR ...]       # default: /work/corpus/dev (the TF-heavy corpus)
    python benchmarks/phases.py --sample 5      # every 5th file
    python benchmarks/phases.py --extend-select TFM201,TFM202,TFM403,TFM404   # with the reach rules

Phases, in the order the engine runs them (engine.lint_source), each timed on its own:

  ast parse      the stdlib tree flake8 builds anyway and hands to the plugin (flake8 pays it;
                 listed to size the rest against it)
  gate           the text tests and the ast walk (gate.could_fire) that decide to build a tree,
                 and which rules run (those whose own gate passes)
  libcst parse   LibCST's parser, for the files the gate passes
  context        TFContext(module): the scope pre-pass (scopes.collect) and the fact modules
  walk + rules   one traversal dispatching to every enabled rule, positions of the findings

and, for comparison, `flake8 -j1` alone on the same files (subprocess CPU time, the TFM plugin
removed, as benchmarks/bench.py runs it). Findings are not compared here: bench.py and the
findings snapshot do that.
"""

from __future__ import annotations

import argparse
import ast
import gc
import sys
import time
from pathlib import Path

from tf_memlint import engine
from tf_memlint.context import TFContext
from tf_memlint.engine import (ModuleFacts, _BatchedWalk, all_rules, codes_that_can_fire, could_fire,
                               may_have_trigger, may_import_tf)
from tf_memlint.names import MENTIONS_TF

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench import FLAKE8_WITHOUT_TFM, Run  # noqa: E402  (the same flake8 run as the benchmark)

DEFAULT = "/work/corpus/dev"


def _files(roots: list[str], sample: int) -> list[Path]:
    found = sorted(p for root in roots for p in Path(root).rglob("*.py") if p.is_file())
    return found[::sample]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("roots", nargs="*", default=[DEFAULT])
    parser.add_argument("--sample", type=int, default=1)
    parser.add_argument("--all", action="store_true", help="every rule, the opt-in ones too")
    parser.add_argument("--extend-select", default="", metavar="CODES",
                        help="opt-in rules to add to the default ones, e.g. the rules that follow calls "
                             "(reach): TFM201,TFM202,TFM403,TFM404")
    parser.add_argument("--no-flake8", action="store_true", help="skip the flake8 comparison run")
    args = parser.parse_args()
    files = _files(args.roots, args.sample)
    registry = all_rules()
    # The default rules (what the plugin runs unconfigured); --all adds the opt-in ones.
    codes = list(registry) if args.all else engine.enabled_codes(
        extend_select=[code for code in args.extend_select.split(",") if code])
    seconds = dict.fromkeys(("ast parse", "gate", "libcst parse", "context", "walk + rules"), 0.0)
    counts = {"files": len(files), "lines": 0, "gated": 0, "gated lines": 0}
    clock = time.process_time
    gc.disable()  # as the engine does in the LibCST phase; collected between files below
    for path in files:
        raw = path.read_bytes()
        lines = raw.count(b"\n")
        counts["lines"] += lines
        t0 = clock()
        try:
            tree = ast.parse(raw)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        t1 = clock()
        facts = ModuleFacts(tree)
        passes = MENTIONS_TF(raw) and may_import_tf(raw) and may_have_trigger(raw, codes) \
            and could_fire(facts, codes)
        running = codes_that_can_fire(facts, codes) if passes else []  # as the engine
        t2 = clock()
        seconds["ast parse"] += t1 - t0
        seconds["gate"] += t2 - t1
        if not passes:
            continue
        counts["gated"] += 1
        counts["gated lines"] += lines
        try:
            module = engine.parse(raw, valid_python=True)  # as the engine: CPython parsed it above
            t3 = clock()
            context = TFContext(module)
            t4 = clock()
            rules = [registry[code](context, {}) for code in running]
            _BatchedWalk(context, rules, module).run(context.walked)
            t5 = clock()
        except Exception:  # noqa: BLE001  (a profile, not a linter: skip what the engine would report)
            continue
        seconds["libcst parse"] += t3 - t2
        seconds["context"] += t4 - t3
        seconds["walk + rules"] += t5 - t4
        del module, context, rules
        gc.collect()
    gc.enable()

    flake8 = None
    if not args.no_flake8:
        flake8 = Run([sys.executable, "-c", FLAKE8_WITHOUT_TFM, "--isolated", "--exit-zero", "-j1",
                      *map(str, files)]).cpu

    print(f"{counts['files']} files, {counts['lines']:,} lines; the gate passes {counts['gated']} files "
          f"({counts['gated lines']:,} lines, {counts['gated lines'] / max(counts['lines'], 1):.0%})")
    plugin = sum(s for name, s in seconds.items() if name != "ast parse")
    print(f"{'phase':<16}{'cpu s':>8}{'of plugin':>11}{'x flake8':>10}")
    for name, s in seconds.items():
        share = "" if name == "ast parse" else f"{s / max(plugin, 1e-9):.0%}"
        versus = f"{s / flake8:.2f}" if flake8 else ""
        print(f"{name:<16}{s:>8.1f}{share:>11}{versus:>10}")
    print(f"{'plugin total':<16}{plugin:>8.1f}{'100%':>11}{(f'{plugin / flake8:.2f}' if flake8 else ''):>10}")
    if flake8:
        print(f"{'flake8 -j1':<16}{flake8:>8.1f}{'':>11}{1:>10.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
