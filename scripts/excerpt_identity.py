#!/usr/bin/env python
"""The excerpt (tf_memlint/excerpt.py) changes no finding: lint every .py file under the given
paths whole and as an excerpt (its size threshold at zero, so every module is cut where it can
be), every rule at every confidence, and compare.

    python scripts/excerpt_identity.py fixtures/ /work/corpus/dev -j2
"""
from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from tf_memlint.engine import EXCERPT_MIN_BYTES
from tf_memlint.files import lint_file
from tf_memlint.rule import all_rules


def both(path: str) -> tuple[str, list, list]:
    codes = list(all_rules())
    whole = lint_file(path, codes, {"confidence": "low", EXCERPT_MIN_BYTES: None})
    cut = lint_file(path, codes, {"confidence": "low", EXCERPT_MIN_BYTES: 0})
    key = lambda r: ([(d.line, d.col, d.code, d.message, d.confidence) for d in r.findings], r.error)
    return path, key(whole), key(cut)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="+")
    parser.add_argument("-j", "--jobs", type=int, default=1)
    args = parser.parse_args()
    files = sorted(str(p) for root in args.paths for p in ([Path(root)] if root.endswith(".py") else Path(root).rglob("*.py")))
    differ = findings = 0
    with ProcessPoolExecutor(args.jobs) as pool:
        for path, whole, cut in pool.map(both, files, chunksize=16):
            findings += len(whole[0])
            if whole != cut:
                differ += 1
                print(f"{path}: whole {whole} != excerpt {cut}")
    print(f"{len(files)} files, {findings} findings, {differ} differ", file=sys.stderr)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
