#!/usr/bin/env python3
"""Precision per rule from judgment files (judgments/heldoutN.tsv), counting noise as wrong.

    python benchmarks/corpus/precision.py judgments/heldout7.tsv judgments/heldout8.tsv
    python benchmarks/corpus/precision.py judgments/heldout*.tsv --current heldout5=h5.json ... \\
        --spent heldout3:TFM104 --spent heldout6:TFM402

A judgment row is ``code, path, line, verdict, reach, reason`` (see judgments/README in
``../README.md``). ``--current SET=FILE`` (a ``tf-memlint --format json`` run on that set at the
commit under test) keeps only the judged findings the rules still produce, so a set judged at an
older commit counts for the rules as they are now; a finding produced now but never judged is
counted as ``unjudged`` (it must be judged before the figure is quoted). ``--spent SET:CODE``
leaves out a set for a rule that was changed after, and because of, that set's judgments: its
verdicts no longer measure the rule on unseen code. The default-rule total is the figure the
precision target is about; the registry says which rules are on by default.
"""
from __future__ import annotations

import argparse
import csv
import json
import sys
from collections import Counter
from pathlib import Path

VERDICTS = ("true", "noise", "false")


def read_judgments(path: Path, first_block: bool = False) -> list[dict[str, str]]:
    """The judged rows of ``path``; ``first_block``: only those before the first comment line
    that follows a row (a second block holds findings only later rules make)."""
    lines: list[str] = []
    with open(path, newline="") as handle:
        for line in handle:
            if line.startswith("#"):
                if first_block and len(lines) > 1:
                    break
                continue
            lines.append(line)
    rows = list(csv.DictReader(lines, delimiter="\t"))
    for row in rows:
        if row["verdict"] not in VERDICTS:
            raise SystemExit(f"{path}: {row['code']} {row['path']}:{row['line']}: verdict {row['verdict']!r}")
    return rows


def current_findings(path: Path) -> set[tuple[str, str, int]]:
    """(code, path relative to the set's root, line) of a JSON run on ``<out>/<set>/``."""
    return {_key(finding) for finding in json.loads(Path(path).read_text())["findings"]}


def _key(finding: dict) -> tuple[str, str, int]:
    """(code, path, line) of a JSON finding, the path from its repository's directory
    (``<owner>+<name>``, where judgment paths start) when it has one."""
    parts = Path(finding["path"]).parts
    start = next((i for i, part in enumerate(parts) if "+" in part), 0)
    return finding["code"], str(Path(*parts[start:])), finding["line"]


# The message names a call chain, a request or another object (the wording of the rules' reach paths).
_REACH_WORDS = (" via ", "per request", "per batch", "held by another object")


def print_skeleton(run: Path, judged: set[tuple[str, str, int]]) -> int:
    """One row per finding of ``run`` not already in ``judged``: what a reviewer fills in."""
    print("code\tpath\tline\tverdict\treach\treason\tmessage")
    document = json.loads(run.read_text())
    for finding in sorted(document["findings"], key=lambda f: (f["path"], f["line"], f["code"])):
        key = _key(finding)
        if key in judged:
            continue
        reach = "yes" if any(word in finding["message"] for word in _REACH_WORDS) else "no"
        print("\t".join([*map(str, key), "", reach, "", finding["message"]]))
    return 0


def _keys(path: Path):
    for row in read_judgments(path):
        yield row["code"], row["path"], int(row["line"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("judgments", nargs="*", type=Path)
    parser.add_argument("--current", action="append", default=[], metavar="SET=FILE")
    parser.add_argument("--spent", action="append", default=[], metavar="SET:CODE")
    parser.add_argument("--reach", action="store_true", help="also a table of the findings that came through reach")
    parser.add_argument("--adjudication", action="append", default=[], type=Path, metavar="FILE",
                        help="rows (set, code, path, line, verdict) that settle a disagreement: their verdict counts")
    parser.add_argument("--skeleton", metavar="FILE", type=Path,
                        help="print the rows to judge for a JSON run (verdict and reason left for the reviewer)")
    args = parser.parse_args(argv)
    if args.skeleton:
        return print_skeleton(args.skeleton, {row[:3] for path in args.judgments for row in _keys(path)})
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tf_memlint.rule import all_rules

    default = {code for code, rule in all_rules().items() if rule.default_enabled}
    current = {}
    for item in args.current:
        name, _, file = item.partition("=")
        current[name] = current_findings(Path(file))
    spent = {tuple(item.split(":", 1)) for item in args.spent}
    settled = {(row["set"], row["code"], row["path"], int(row["line"])): row["verdict"]
               for path in args.adjudication for row in read_judgments(path)}
    counts: dict[str, Counter] = {}
    reach: dict[str, Counter] = {}
    for path in args.judgments:
        name = path.stem
        judged = set()
        for row in read_judgments(path):
            key = (row["code"], row["path"], int(row["line"]))
            judged.add(key)
            if (name, row["code"]) in spent or (name in current and key not in current[name]):
                continue
            verdict = settled.get((name, *key), row["verdict"])
            counts.setdefault(row["code"], Counter())[verdict] += 1
            if row.get("reach") == "yes":
                reach.setdefault(row["code"], Counter())[verdict] += 1
        for code, *_ in current.get(name, set()) - judged:
            if (name, code) not in spent:
                counts.setdefault(code, Counter())["unjudged"] += 1
    print(_table(counts, default, "rule"))
    if args.reach:
        print()
        print(_table(reach, default, "reach findings, by rule"))
    return 0


def _table(counts: dict[str, Counter], default: set[str], title: str) -> str:
    lines = [f"| {title} | default | findings | true | noise | false | unjudged | precision |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]

    def row(label: str, on: str, c: Counter) -> str:
        judged = sum(c[v] for v in VERDICTS)
        precision = f"{c['true'] / judged:.2f}" if judged else "-"
        return (f"| {label} | {on} | {judged + c['unjudged']} | {c['true']} | {c['noise']} | {c['false']} "
                f"| {c['unjudged']} | {precision} |")

    for code in sorted(counts):
        lines.append(row(code, "on" if code in default else "opt-in", counts[code]))
    for label, codes in (("default rules", default), ("all rules", set(counts))):
        total = sum((counts[c] for c in codes if c in counts), Counter())
        lines.append(row(f"**{label}**", "", total))
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
