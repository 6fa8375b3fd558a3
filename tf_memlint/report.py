"""Output formats of the ``tf-memlint`` command. Columns are printed 1-based, as flake8 prints them.

    text     path:line:col: CODE message            (flake8's default)
             nb.ipynb:cell 3:4:5: CODE message      (a notebook: cell, line in the cell, column; ruff's form)
    json     {"tool", "version", "findings": [...], "errors": [...]}; a finding has "cell" (null
             outside notebooks), "line" and "column" (in the cell for a notebook), and "url",
             its rule's page (``links.rule_url``)
    sarif    SARIF 2.1.0 (tf_memlint.sarif), for GitHub code scanning; a notebook finding's region
             is in the .ipynb file as stored, its cell position in the result's properties
    github   ::warning workflow commands: annotations on the pull request's diff (a notebook's at
             the line of the .ipynb file; the message starts with ``cell 3:4:5:``)

Every finding is exactly one line in every format: messages are flattened (``one_line``).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Callable

from tf_memlint import __version__
from tf_memlint.files import FileResult
from tf_memlint.links import rule_url
from tf_memlint.rule import Diagnostic
from tf_memlint.rule import all_rules
from tf_memlint.sarif import as_sarif


def one_line(message: str) -> str:
    """The message on one line: every run of whitespace (line breaks included) is one space."""
    return " ".join(message.split())


def position(result: FileResult, finding: Diagnostic) -> str:
    """``line:col`` (1-based column), or ``cell N:line:col`` in a notebook."""
    cell = result.cells.get(finding)
    return str(cell) if cell is not None else f"{finding.line}:{finding.col + 1}"


def text(results: list[FileResult]) -> str:
    return "".join(f"{r.path}:{position(r, d)}: {d.code} {one_line(d.message)}\n"
                   for r in results for d in r.findings)


def _json_finding(result: FileResult, finding: Diagnostic, rules: dict, url_base: str | None = None) -> dict:
    cell = result.cells.get(finding)
    return {"path": result.path, "cell": cell.cell if cell else None,
            "line": cell.line if cell else finding.line, "column": (cell.col if cell else finding.col) + 1,
            "code": finding.code,
            "name": rules[finding.code].name if finding.code in rules else finding.code,
            "message": one_line(finding.message), "confidence": finding.confidence,
            "evidence": finding.evidence, "cost": finding.cost,
            "url": rule_url(finding.code, url_base) if finding.code in rules else None}


def as_json(results: list[FileResult], url_base: str | None = None) -> str:
    rules = all_rules()
    findings = [_json_finding(r, d, rules, url_base) for r in results for d in r.findings]
    errors = [{"path": r.path, "message": one_line(r.error)} for r in results if r.error]
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
            cell = r.cells.get(d)
            line, col = (cell.raw_line, cell.raw_col + 1) if cell else (d.line, d.col + 1)
            where = f"{cell}: " if cell else ""
            out.append(f"::warning title={_escape_property(f'tf-memlint {d.code} ({name})')},"
                       f"file={_escape_property(r.path)},line={line},col={col}"
                       f"::{_escape_data(f'{where}{d.code} {one_line(d.message)}')}\n")
        if r.error:
            out.append(f"::error title=tf-memlint,file={_escape_property(r.path)}::"
                       f"{_escape_data(one_line(r.error))}\n")
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
# Formats whose stdout is one machine-read document: --statistics goes to stderr instead; they
# link each rule's page (``url_base``).
DOCUMENT_FORMATS = frozenset({"json", "sarif"})
