"""Output formats of the ``tf-memlint`` command. Columns are printed 1-based, as flake8 prints them.

    text     path:line:col: CODE message            (flake8's default)
    json     {"tool", "version", "findings": [...], "errors": [...]}
    sarif    SARIF 2.1.0 (tf_memlint.sarif), for GitHub code scanning
    github   ::warning workflow commands: annotations on the pull request's diff
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Callable

from tf_memlint import __version__
from tf_memlint.files import FileResult
from tf_memlint.rule import all_rules
from tf_memlint.sarif import as_sarif


def text(results: list[FileResult]) -> str:
    return "".join(f"{r.path}:{d.line}:{d.col + 1}: {d.code} {d.message}\n"
                   for r in results for d in r.findings)


def as_json(results: list[FileResult]) -> str:
    rules = all_rules()
    findings = [{"path": r.path, "line": d.line, "column": d.col + 1, "code": d.code,
                 "name": rules[d.code].name if d.code in rules else d.code, "message": d.message}
                for r in results for d in r.findings]
    errors = [{"path": r.path, "message": r.error} for r in results if r.error]
    return json.dumps({"tool": "tf-memlint", "version": __version__, "findings": findings,
                       "errors": errors}, indent=2) + "\n"


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def github(results: list[FileResult]) -> str:
    """GitHub Actions workflow commands (``::warning file=...,line=...``), one per finding, and
    ``::error`` for each file that could not be linted."""
    rules = all_rules()
    out = []
    for r in results:
        for d in r.findings:
            name = rules[d.code].name if d.code in rules else d.code
            out.append(f"::warning title={_escape_property(f'tf-memlint {d.code} ({name})')},"
                       f"file={_escape_property(r.path)},line={d.line},col={d.col + 1}"
                       f"::{_escape_data(f'{d.code} {d.message}')}\n")
        if r.error:
            out.append(f"::error title=tf-memlint,file={_escape_property(r.path)}::{_escape_data(r.error)}\n")
    return "".join(out)


def statistics(results: list[FileResult]) -> str:
    """Counts per code, flake8's ``--statistics`` layout: ``count code name``, by code."""
    rules = all_rules()
    counts = Counter(d.code for r in results for d in r.findings)
    return "".join(f"{count:<5} {code} {rules[code].name if code in rules else ''}".rstrip() + "\n"
                   for code, count in sorted(counts.items()))


FORMATS: dict[str, Callable[[list[FileResult]], str]] = {
    "text": text, "json": as_json, "sarif": as_sarif, "github": github,
}
# Formats whose stdout is one machine-read document: --statistics goes to stderr instead.
DOCUMENT_FORMATS = frozenset({"json", "sarif"})
