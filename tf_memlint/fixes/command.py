"""``tf-memlint --fix / --unsafe-fixes / --diff``: the command's side of the fixes.

``--fix`` rewrites the files in place and the command then reports what is left (exit status 1
when findings remain, as ruff's); ``--diff`` prints what ``--fix`` would change as a unified diff
and writes nothing (exit status 1 when there is something to change, else 0). Source read from
stdin is written back to stdout, fixed (``--fix``), or as a diff. Notebooks are reported, not
fixed.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Callable

from tf_memlint import project
from tf_memlint.engine import LintError
from tf_memlint.files import PROJECT_TABLES, decode_source, read_bytes
from tf_memlint.fixes.driver import encoding_of, fix_text, unified_diff
from tf_memlint.notebook import is_notebook_path
from tf_memlint.rule import all_rules


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("fixes")
    group.add_argument("--fix", action="store_true",
                       help="apply the safe fixes in place, then report what is left")
    group.add_argument("--unsafe-fixes", action="store_true",
                       help="with --fix or --diff, also the fixes that may change what the code does")
    group.add_argument("--diff", action="store_true",
                       help="print the fixes as a unified diff and write nothing (exit 1 when there is one)")


def wanted(args: argparse.Namespace) -> bool:
    return bool(args.fix or args.diff)


def fix_paths(args: argparse.Namespace, paths: list[str], codes: list[str], settings: dict[str, Any],
              codes_for: Callable[[str], list[str]] | None = None) -> int:
    """Fix (or diff) each file; returns the exit status --diff means (1: something to change, 2: a
    file could not be read or fixed, named on stderr). ``codes_for(path)``: the codes of that file
    (per-file-ignores leave some out: what is not reported there is not fixed there either)."""
    registry = all_rules()
    if any(registry[code].reaches_across_modules for code in codes):
        settings = {**settings, PROJECT_TABLES: project.build(paths)}
    fixed = hidden = failed = 0
    changed_files = 0
    for path in paths:
        if is_notebook_path(path):
            continue
        try:
            raw = read_bytes(path)
            source = decode_source(raw)
        except LintError as error:
            print(f"{path}: error: {error}", file=sys.stderr)
            failed += 1
            continue
        tables = settings.get(PROJECT_TABLES)
        own = {**settings, "project": tables.get(path)} if tables else settings
        try:
            file_codes = codes_for(path) if codes_for else codes
            result = fix_text(source, file_codes, own, unsafe=args.unsafe_fixes)
        except (LintError, RecursionError) as error:
            print(f"{path}: error: not fixed: {error}", file=sys.stderr)
            failed += 1
            continue
        except Exception as error:  # noqa: BLE001 - a fix's bug must not stop the other files
            print(f"{path}: error: not fixed: TFM000 internal error: {type(error).__name__}: {error}",
                  file=sys.stderr)
            failed += 1
            continue
        hidden += result.unsafe_hidden
        if not result.changed(source):
            continue
        changed_files += 1
        fixed += len(result.applied)
        if args.diff:
            sys.stdout.write(unified_diff(source, result.text, path))
        else:
            with open(path, "wb") as handle:
                handle.write(result.text.encode(encoding_of(raw)))
    _summary(args, fixed, changed_files, hidden)
    if failed:
        return 2  # a file could not be fixed (the lint that follows --fix reports it too)
    return 1 if args.diff and changed_files else 0


def fix_stdin(args: argparse.Namespace, raw: bytes, display: str, codes: list[str], settings: dict[str, Any]) -> int:
    """The source from stdin, fixed, on stdout (``--fix``), or the diff (``--diff``)."""
    try:
        source = decode_source(raw)
        result = fix_text(source, codes, settings, unsafe=args.unsafe_fixes)
    except LintError as error:
        print(f"{display}: error: {error}", file=sys.stderr)
        return 2
    _summary(args, len(result.applied), int(result.changed(source)), result.unsafe_hidden)
    if args.diff:
        sys.stdout.write(unified_diff(source, result.text, display))
        return 1 if result.changed(source) else 0
    sys.stdout.write(result.text)
    return 0


def _summary(args: argparse.Namespace, fixed: int, files: int, hidden: int) -> None:
    verb = "would fix" if args.diff else "fixed"
    lines = [f"tf-memlint: {verb} {fixed} finding{'s' * (fixed != 1)} in {files} file{'s' * (files != 1)}"]
    if hidden:
        lines.append(f"tf-memlint: {hidden} unsafe fix{'es' * (hidden != 1)} not applied (add --unsafe-fixes)")
    print("\n".join(lines), file=sys.stderr)
