#!/usr/bin/env python3
"""The real-leak benchmark's split, fixed before any lint run (README.md, "The split").

    python benchmarks/leaks/split.py            # every case id and its half, then the counts

A case is held out when the first byte of sha256("tf-memlint-leaks/2026-11-27:" + id) is odd.
The rule reads the id alone, so adding a case never moves another one.
"""
from __future__ import annotations

import hashlib
import sys
import tomllib
from collections import Counter
from pathlib import Path

CASES = Path(__file__).resolve().parent / "cases"
SALT = "tf-memlint-leaks/2026-11-27:"


def half_of(case_id: str) -> str:
    return "heldout" if hashlib.sha256((SALT + case_id).encode()).digest()[0] % 2 else "dev"


def load_cases(root: Path = CASES) -> list[dict]:
    cases = []
    for toml in sorted(root.glob("*/case.toml")):
        with open(toml, "rb") as f:
            case = tomllib.load(f)
        if case.get("id") != toml.parent.name:
            raise SystemExit(f"{toml}: id {case.get('id')!r} is not the folder name")
        case["half"] = half_of(case["id"])
        case["dir"] = toml.parent
        cases.append(case)
    return cases


def main() -> int:
    cases = load_cases()
    for case in cases:
        print(f"{case['half']:8} {case['id']}")
    counts = Counter((c["half"], c.get("diagnosable", True)) for c in cases)
    for half in ("dev", "heldout"):
        print(f"{half}: {counts[half, True]} diagnosable, {counts[half, False]} not", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
