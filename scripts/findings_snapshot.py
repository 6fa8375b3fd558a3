#!/usr/bin/env python
"""Every finding of every rule on the given paths, as sorted JSON lines: a snapshot to compare
before and after a change that must not change behaviour.

    python scripts/findings_snapshot.py fixtures/ -o /tmp/before.jsonl
    ... change the code ...
    python scripts/findings_snapshot.py fixtures/ -o /tmp/after.jsonl
    diff /tmp/before.jsonl /tmp/after.jsonl

Files are linted through the command's own path (``tf_memlint.files.lint_file``: read, gate,
LibCST, rules, ``# noqa``) with every registered rule enabled, opt-in ones included, and default
settings. One line per finding, ``{"path", "line", "col", "code", "message"}``; a file that cannot
be linted gives ``{"path", "error"}`` (so a new crash shows up as a difference too). A summary
(files, findings per code, errors) goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="+", help="files or directories to lint")
    parser.add_argument("-o", "--output", help="write the JSON lines here (default: stdout)")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="processes (default 1)")
    args = parser.parse_args(argv)

    from tf_memlint.files import discover, lint_files
    from tf_memlint.rule import all_rules

    codes = list(all_rules())
    paths = [path for path, error in discover(args.paths, exclude=[]) if error is None]
    lines: list[str] = []
    counts: Counter[str] = Counter()
    errors = 0
    for result in lint_files(paths, codes, {}, args.jobs):
        if result.error is not None:
            errors += 1
            lines.append(json.dumps({"path": result.path, "error": result.error}, sort_keys=True))
        for finding in result.findings:
            counts[finding.code] += 1
            lines.append(json.dumps({"path": result.path, "line": finding.line, "col": finding.col,
                                     "code": finding.code, "message": finding.message}, sort_keys=True))
    lines.sort()
    text = "".join(line + "\n" for line in lines)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as handle:
            handle.write(text)
    else:
        sys.stdout.write(text)
    per_code = ", ".join(f"{code} {count}" for code, count in sorted(counts.items())) or "none"
    print(f"{len(paths)} files, {sum(counts.values())} findings ({per_code}), {errors} errors",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
