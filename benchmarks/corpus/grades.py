#!/usr/bin/env python3
"""Precision per confidence tier on judged held-out sets, and what the default keeps.

    python benchmarks/corpus/grades.py \\
        --run heldout12=/tmp/h12.json --run heldout13=/tmp/h13.json \\
        --judged benchmarks/corpus/judgments/heldout12.tsv ... \\
        --baseline benchmarks/corpus/judgments/heldout12.tsv benchmarks/corpus/judgments/heldout13.tsv

``--run SET=FILE``: a ``tf-memlint --format json --confidence low`` run on ``<out>/<SET>/`` at
the commit under test, every rule on. ``--judged``: judgment files (judgments/*.tsv: code,
path, line, verdict...); a finding takes the verdict of the row with its code, path and line.
``--baseline``: the judgments of every rule of the round's starting commit on the same sets
(a file's first block: the rows before the first comment line that follows a row);
their true findings are what the default must keep (a default finding within 2 lines, in the
same file, keeps one). ``--skeleton``: print the findings no row judges, to be judged.

Per tier (high = the default, medium and above, every grade): findings, judged, true / noise /
false, precision with noise counted as wrong.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from precision import _key, read_judgments  # noqa: E402

TIERS = {"high (default)": ("high",), "medium and above": ("high", "medium"), "every grade": ("high", "medium", "low")}
NEAR = 2


def _row_key(row: dict) -> tuple[str, str, int]:
    parts = Path(row["path"]).parts
    start = next((i for i, part in enumerate(parts) if "+" in part), 0)
    return row["code"], str(Path(*parts[start:])), int(row["line"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", action="append", default=[], metavar="SET=FILE", required=True)
    parser.add_argument("--judged", nargs="+", type=Path, default=[])
    parser.add_argument("--baseline", nargs="*", type=Path, default=[])
    parser.add_argument("--skeleton", action="store_true")
    args = parser.parse_args()
    verdicts = {}
    for path in args.judged:
        for row in read_judgments(path):
            verdicts[_row_key(row)] = row["verdict"]
    findings = []
    for item in args.run:
        name, _, file = item.partition("=")
        for finding in json.loads(Path(file).read_text())["findings"]:
            finding["set"] = name
            findings.append(finding)
    if args.skeleton:
        print("code\tpath\tline\tconfidence\tverdict\treach\treason\tmessage")
        for f in sorted(findings, key=lambda f: (f["path"], f["line"], f["code"])):
            if _key(f) not in verdicts:
                print(f"{f['code']}\t{f['path']}\t{f['line']}\t{f['confidence']}\t\t\t\t{f['message']}")
        return 0
    from tf_memlint.rule import all_rules

    default_codes = {code for code, rule in all_rules().items() if rule.default_enabled}
    print("| tier | findings | judged | true | noise | false | precision |\n|---|---|---|---|---|---|---|")
    for tier, levels in TIERS.items():
        # the default tier: what the default shows, its rules at its confidence
        shown = [f for f in findings if f["confidence"] in levels
                 and (tier != "high (default)" or f["code"] in default_codes)]
        counts = Counter(verdicts.get(_key(f), "unjudged") for f in shown)
        judged = counts["true"] + counts["noise"] + counts["false"]
        precision = f"{counts['true'] / judged:.2f}" if judged else "-"
        print(f"| {tier} | {len(shown)} | {judged} | {counts['true']} | {counts['noise']} | {counts['false']} | {precision} |"
              + (f" {counts['unjudged']} unjudged" if counts["unjudged"] else ""))
    print()
    by_code = defaultdict(Counter)
    for f in findings:
        by_code[(f["code"], f["confidence"])][verdicts.get(_key(f), "unjudged")] += 1
    print("| code | confidence | true | noise | false | unjudged |\n|---|---|---|---|---|---|")
    for (code, confidence), counts in sorted(by_code.items()):
        print(f"| {code} | {confidence} | {counts['true']} | {counts['noise']} | {counts['false']} | {counts['unjudged']} |")
    if args.baseline:
        shown = defaultdict(list)
        for f in findings:
            if f["confidence"] == "high" and f["code"] in default_codes:
                code, path, line = _key(f)
                shown[path].append(line)
        kept = total = 0
        lost = []
        for path in args.baseline:
            for row in read_judgments(path, first_block=True):
                if row["verdict"] != "true":
                    continue
                total += 1
                _, where, line = _row_key(row)
                if any(abs(line - other) <= NEAR for other in shown.get(where, [])):
                    kept += 1
                else:
                    lost.append(f"{row['code']} {where}:{line}")
        print(f"\nthe default keeps {kept} of the baseline's {total} true findings"
              f" ({kept / max(total, 1):.0%}); lost: " + ", ".join(lost))
    return 0


if __name__ == "__main__":
    sys.exit(main())
