#!/usr/bin/env python
"""Every finding of every rule on the given paths, as sorted JSON lines: a snapshot to compare
before and after a change that must not change behaviour.

    python scripts/findings_snapshot.py fixtures/ -o /tmp/before.jsonl
    ... change the code ...
    python scripts/findings_snapshot.py fixtures/ -o /tmp/after.jsonl
    diff /tmp/before.jsonl /tmp/after.jsonl

Files are linted through the command's own path (``tf_memlint.files.lint_file``: read, gate,
LibCST, rules, ``# noqa``) with every registered rule enabled, opt-in ones included, and default
settings, every grade. One line per finding, ``{"path", "line", "col", "code", "message"}``; a file that cannot
be linted gives ``{"path", "error"}`` (so a new crash shows up as a difference too). A summary
(files, findings per code, errors) goes to stderr.

``--reference`` lints each ``.py`` file the slow, plain way instead: no gate (every file that names
TensorFlow gets a LibCST tree) and positions from one metadata pass over the whole module. The
fast path (the gate, positions per top-level statement) must give the same snapshot:

    python scripts/findings_snapshot.py /work/corpus/dev -j2 -o /tmp/fast.jsonl
    python scripts/findings_snapshot.py /work/corpus/dev -j2 --reference -o /tmp/reference.jsonl
    grep -v '"error"' /tmp/fast.jsonl > /tmp/a; grep -v '"error"' /tmp/reference.jsonl > /tmp/b; cmp /tmp/a /tmp/b

(Compare the findings: error lines differ by design. The reference path parses files the gate
skips, so a syntax error there shows up only in the reference, and it words syntax errors as
LibCST does, without CPython's message.)
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
    parser.add_argument("--reference", action="store_true",
                        help="no gate, whole-module positions (the slow path the fast one must equal)")
    args = parser.parse_args(argv)

    from tf_memlint.files import discover, lint_files
    from tf_memlint.rule import all_rules

    codes = list(all_rules())
    paths = [path for path, error in discover(args.paths, exclude=[]) if error is None]
    lines: list[str] = []
    counts: Counter[str] = Counter()
    errors = 0
    if args.reference:
        from concurrent.futures import ProcessPoolExecutor
        with ProcessPoolExecutor(max(args.jobs, 1)) as pool:
            results = list(pool.map(_lint_reference, paths, [codes] * len(paths), chunksize=16))
    else:
        results = lint_files(paths, codes, {}, args.jobs)
    for result in results:
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


def _lint_reference(path: str, codes: list[str]):
    """``files.lint_file`` without the gate and with whole-module positions (``.py`` files;
    notebooks go through ``lint_file``, their cell mapping being the point there)."""
    from tf_memlint.engine import LintError, lint_source
    from tf_memlint.files import FileResult, is_notebook_path, lint_file, read_source
    from tf_memlint.noqa import filter_noqa

    if is_notebook_path(path):
        return lint_file(path, codes, {"confidence": "low"})  # every grade
    try:
        source = read_source(path)
        return FileResult(path, filter_noqa(source, lint_source(source, codes, {}, gate=False)))
    except LintError as error:
        return FileResult(path, error=str(error))
    except RecursionError:
        return FileResult(path, error="nested too deeply to analyse")
    except Exception as error:  # noqa: BLE001 - as lint_file: one bad file must not stop the run
        return FileResult(path, error=f"TFM000 internal error: {type(error).__name__}: {error}")


if __name__ == "__main__":
    sys.exit(main())
