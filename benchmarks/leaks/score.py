#!/usr/bin/env python3
"""Score tf-memlint on the real-leak benchmark: recall and noise by tier, category, era and kind.

    python benchmarks/leaks/score.py /work/leaks --half dev         # tune on this half only
    python benchmarks/leaks/score.py /work/leaks --half heldout     # judged at the end of a round

/work/leaks is what build.py wrote. The linter is the checkout's own (`python -m tf_memlint`,
configuration files ignored), run once per tier over the built cases:

- default: no selection option, what a new user gets;
- medium:  every rule, `--confidence medium` (when the command has the option);
- all:     every rule (each code named), at the lowest confidence when the command grades.

A diagnosable report is **caught** in a tier when a finding of that tier lies within 2 lines of
one of its cause lines, in the same file. **Noise**: a finding near no cause line (on a case
that is not diagnosable, every finding). Rates are over the cases that were built.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tomllib
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from split import half_of  # noqa: E402

NEAR = 2


def every_code() -> list[str]:
    from tf_memlint.rule import all_rules

    return sorted(all_rules())


def tier_arguments() -> dict[str, list[str]]:
    grades = "--confidence" in subprocess.run([sys.executable, "-m", "tf_memlint", "--help"],
                                              capture_output=True, text=True).stdout
    codes = ",".join(every_code())
    tiers = {"default": []}
    if grades:
        tiers["medium"] = ["--select", codes, "--confidence", "medium"]
    tiers["all"] = ["--select", codes] + (["--confidence", "low"] if grades else [])
    return tiers


def lint(paths: list[Path], extra: list[str]) -> list[dict]:
    done = subprocess.run([sys.executable, "-m", "tf_memlint", *map(str, paths), "--isolated", "--exit-zero",
                           "--format", "json", "-j2", *extra], capture_output=True, text=True)
    if done.returncode not in (0, 1):
        print(done.stderr, file=sys.stderr)
    return json.loads(done.stdout)["findings"]


def load_built(root: Path, half: str, prefixes: str | None = None) -> list[dict]:
    cases = []
    for toml in sorted(root.glob("*/case.toml")):
        with open(toml, "rb") as f:
            case = tomllib.load(f)
        if half != "both" and half_of(case["id"]) != half:
            continue
        if prefixes and not case["id"].startswith(tuple(prefixes)):
            continue
        if (toml.parent / ".missing").exists():
            continue
        case["dir"] = toml.parent.resolve()
        cases.append(case)
    return cases


def judge(cases: list[dict], findings: list[dict]) -> tuple[dict[str, bool], int, int, dict[str, int]]:
    """Which diagnosable cases are caught, how many findings are noise, of how many, and the
    noise findings of each case."""
    by_case: dict[str, list[dict]] = defaultdict(list)
    dirs = {str(c["dir"]): c for c in cases}
    for finding in findings:
        path = Path(finding["path"]).resolve()
        for parent in path.parents:
            if str(parent) in dirs:
                finding["relative"] = str(path.relative_to(parent))
                by_case[dirs[str(parent)]["id"]].append(finding)
                break
    caught, noise, total, noise_of = {}, 0, 0, {}
    for case in cases:
        before = noise
        causes = [(file, line) for file, line in case.get("causes", [])]
        hits = set()
        for finding in by_case[case["id"]]:
            total += 1
            near = [c for c in causes if c[0] == finding["relative"] and abs(c[1] - finding["line"]) <= NEAR]
            if near:
                hits.update(near)
            else:
                noise += 1
        noise_of[case["id"]] = noise - before
        if case.get("diagnosable", True):
            caught[case["id"]] = bool(hits)
    return caught, noise, total, noise_of


def table(cases: list[dict], results: dict[str, tuple], key: str) -> str:
    """Per value of ``key``: diagnosable reports, caught per tier, and noise per tier (findings
    near no cause line, on every case of the group, undiagnosable ones too)."""
    tiers = list(results)
    groups: dict[str, list[dict]] = defaultdict(list)
    for case in cases:
        groups[str(case.get(key, "?"))].append(case)
    head = (f"| {key} | reports | " + " | ".join(f"caught: {t}" for t in tiers) + " | "
            + " | ".join(f"noise: {t}" for t in tiers) + " |")
    rows = [head, "|" + "---|" * (2 + 2 * len(tiers))]
    for group in sorted(groups):
        members = groups[group]
        reports = [c for c in members if c.get("diagnosable", True)]
        caught = [f"{sum(results[t][0][c['id']] for c in reports)}" for t in tiers]
        noise = [f"{sum(results[t][3][c['id']] for c in members)}" for t in tiers]
        rows.append(f"| {group} | {len(reports)} | " + " | ".join(caught + noise) + " |")
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", type=Path)
    parser.add_argument("--half", choices=("dev", "heldout", "both"), required=True)
    parser.add_argument("--misses", action="store_true", help="list the diagnosable cases each tier misses")
    parser.add_argument("--collectors", metavar="LETTERS",
                        help="only the cases whose id starts with one of these letters (who collected them, "
                             "so a batch collected later is scored apart: --collectors uv)")
    args = parser.parse_args()
    cases = load_built(args.root, args.half, args.collectors)
    diagnosable = [c for c in cases if c.get("diagnosable", True)]
    results = {}
    for tier, extra in tier_arguments().items():
        results[tier] = judge(cases, lint([c["dir"] for c in cases], extra))
    print(f"{args.half}{' ' + args.collectors if args.collectors else ''}: {len(cases)} cases built, {len(diagnosable)} diagnosable\n")
    print("| tier | caught | recall | findings | noise | noise share |\n|---|---|---|---|---|---|")
    for tier, (caught, noise, total, _) in results.items():
        hit = sum(caught.values())
        share = f"{noise / total:.0%}" if total else "-"
        print(f"| {tier} | {hit}/{len(diagnosable)} | {hit / max(len(diagnosable), 1):.0%} | {total} | {noise} | {share} |")
    for key in ("category", "era", "kind", "shape"):
        print()
        print(table(cases, results, key))
    if args.misses:
        for tier, (caught, *_) in results.items():
            print(f"\nmissed by {tier}: " + ", ".join(sorted(i for i, hit in caught.items() if not hit)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
