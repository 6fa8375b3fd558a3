#!/usr/bin/env python
"""Per-rule gate soundness: for every file and every rule, a finding of that rule (linted with
the gate off) must come with the gate letting the file through for that rule alone, and for the
default rules together. The findings snapshot runs every rule at once, so one rule's gate could
lose a finding that another rule's gate hides; this checks each rule's own. Also prints how much
of the corpus each rule's gate passes.

    python scripts/gate_soundness.py fixtures/ /work/corpus/dev      # "lost findings: 0" expected
    python scripts/gate_soundness.py --extend-select TFM201,TFM202,TFM403,TFM404 fixtures/

``--extend-select`` adds a selection (the default rules and these) checked and counted as a whole,
as the engine gates it.
"""

from __future__ import annotations

import argparse
import ast
import collections
import os
import sys
from concurrent.futures import ProcessPoolExecutor


def check(path: str, extend: tuple[str, ...] = ()) -> tuple[str, list, dict, int]:
    from tf_memlint.engine import enabled_codes, lint_source, may_have_trigger, may_import_tf
    from tf_memlint.files import read_source
    from tf_memlint.gate import ModuleFacts, could_fire
    from tf_memlint.rule import all_rules

    try:
        source = read_source(path)
        raw = source.encode("utf-8", "surrogatepass") if isinstance(source, str) else source
        tree = ast.parse(raw)
    except Exception:  # noqa: BLE001 - unreadable or not Python: nothing to check
        return path, [], {}, 0
    facts = ModuleFacts(tree)
    default = enabled_codes()

    def passes_for(codes: list[str]) -> bool:
        return bool(may_import_tf(raw) and may_have_trigger(raw, codes) and could_fire(facts, codes))

    passes = {code: passes_for([code]) for code in all_rules()}
    passes["default"] = passes_for(default)
    selected = enabled_codes(extend_select=extend) if extend else []
    if extend:
        passes["default+" + ",".join(extend)] = passes_for(selected)
    try:
        found = lint_source(source, list(all_rules()), {}, gate=False)
    except Exception:  # noqa: BLE001 - a file the linter refuses has no findings to lose
        return path, [], passes, raw.count(b"\n")
    lost = [(d.code, d.line, d.message) for d in found
            if not passes[d.code] or (d.code in default and not passes["default"])
            or (d.code in selected and not passes["default+" + ",".join(extend)])]
    return path, lost, passes, raw.count(b"\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("roots", nargs="+")
    parser.add_argument("--extend-select", default="", metavar="CODES")
    args = parser.parse_args()
    extend = tuple(code for code in args.extend_select.split(",") if code)
    files = []
    for root in args.roots:
        for folder, subfolders, names in os.walk(root):
            subfolders[:] = sorted(x for x in subfolders if not x.startswith(".") and x != "__pycache__")
            files += [os.path.join(folder, name) for name in sorted(names) if name.endswith(".py")]
    lost_total, total_lines = 0, 0
    passed, passed_lines = collections.Counter(), collections.Counter()
    with ProcessPoolExecutor(2) as pool:
        for path, lost, passes, lines in pool.map(check, files, [extend] * len(files), chunksize=8):
            total_lines += lines
            for code, ok in passes.items():
                if ok:
                    passed[code] += 1
                    passed_lines[code] += lines
            for finding in lost:
                lost_total += 1
                print("LOST", path, *finding)
    print(f"{len(files)} files, {total_lines} lines; lost findings: {lost_total}")
    for code in sorted(passed):
        print(f"  {code} passes {passed[code]} files, {passed_lines[code] / max(total_lines, 1):.0%} of lines")


if __name__ == "__main__":
    main()
