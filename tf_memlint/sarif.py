"""SARIF 2.1.0 output, for GitHub code scanning and other SARIF viewers.

One ``reportingDescriptor`` per TFM code (id, name, short and full description, help URI to the
rule's page: ``links.rule_url``, the installed page unless ``rule-url-base`` is set); results
with paths relative to the repository root (``%SRCROOT%``), 1-based lines and columns, and a
partial fingerprint that survives unrelated edits (it hashes the rule, the path and the text of
the flagged line, not its number). Files that could not be linted become
tool execution notifications, and the invocation is then not successful.

A finding in a notebook has its region in the ``.ipynb`` file as stored (the line and column of
the JSON text holding that character of the cell), the location's message ``cell 3:4:5``, and
``properties`` ``notebookCell``, ``cellLine``, ``cellColumn`` (1-based).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from tf_memlint import __version__
from tf_memlint.links import rule_url
from tf_memlint.resources import rule_page
from tf_memlint.rule import Rule, all_rules

if TYPE_CHECKING:
    from tf_memlint.files import FileResult

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
FINGERPRINT = "tfMemlintLineHash/v1"


def project_root(start: Path | None = None) -> Path:
    """The repository root (the nearest directory with .git, .hg or .svn), else the cwd."""
    start = (start or Path.cwd()).resolve()
    for directory in (start, *start.parents):
        if any((directory / marker).exists() for marker in (".git", ".hg", ".svn")):
            return directory
    return start


def _full_description(code: str, rule: type[Rule]) -> str:
    """The "What it does" section of the rule's page, else the first paragraph of its docstring."""
    try:
        page = rule_page(code).read_text(encoding="utf-8")
        match = re.search(r"^## What it does\s*\n(.*?)(?=^## |\Z)", page, re.S | re.M)
        if match and match.group(1).strip():
            return " ".join(match.group(1).split())
    except OSError:
        pass
    doc = (rule.__doc__ or rule.summary).strip().split("\n\n")[0]
    return " ".join(doc.split())


def _descriptor(code: str, rule: type[Rule], url_base: str | None) -> dict[str, Any]:
    url = rule_url(code, url_base)
    return {
        "id": code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": _full_description(code, rule)},
        "helpUri": url,
        "help": {"text": f"{rule.summary}. See {url} (or `tf-memlint explain {code}`)"},
        "defaultConfiguration": {"level": "warning", "enabled": bool(rule.default_enabled)},
        "properties": {"tags": ["tensorflow", "memory", "performance"], "precision": "high"},
    }


def _artifact(path: str, root: Path) -> dict[str, Any]:
    absolute = Path(os.path.abspath(path))
    try:
        relative = absolute.relative_to(root)
    except ValueError:
        return {"uri": absolute.as_uri()}
    return {"uri": quote(relative.as_posix()), "uriBaseId": "%SRCROOT%"}


def _line_text(path: str, line: int, cache: dict[str, list[str]]) -> str:
    if path not in cache:
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                cache[path] = handle.read().splitlines()
        except OSError:
            cache[path] = []
    lines = cache[path]
    return lines[line - 1] if 0 < line <= len(lines) else ""


_RANK = {"high": 90.0, "medium": 60.0, "low": 30.0}


def as_sarif(results: list[FileResult], root: Path | None = None, url_base: str | None = None) -> str:
    root = project_root(root)
    rules = all_rules()
    codes = sorted(rules)
    index = {code: i for i, code in enumerate(codes)}
    cache: dict[str, list[str]] = {}
    seen: dict[str, int] = {}
    sarif_results = []
    for result in results:
        artifact = _artifact(result.path, root)
        for finding in result.findings:
            cell = result.cells.get(finding)
            # A notebook finding points into the .ipynb as stored (the JSON line holding that
            # character of the cell's source); its cell position goes in the properties.
            line, col = (cell.raw_line, cell.raw_col + 1) if cell else (finding.line, finding.col + 1)
            text = " ".join(_line_text(result.path, line, cache).split())
            key = f"{finding.code}\0{artifact['uri']}\0{text}"
            occurrence = seen[key] = seen.get(key, 0) + 1  # same line text twice in a file
            digest = hashlib.sha256(f"{key}\0{occurrence}".encode("utf-8", "surrogatepass")).hexdigest()
            entry: dict[str, Any] = {
                "ruleId": finding.code,
                # Confidence as SARIF's rank (0-100, how sure) and level (a low-confidence
                # finding is a note, not a warning).
                "level": "note" if finding.confidence == "low" else "warning",
                "rank": _RANK[finding.confidence],
                "message": {"text": " ".join(finding.message.split())},
                "locations": [{"physicalLocation": {
                    "artifactLocation": artifact,
                    "region": {"startLine": line, "startColumn": col},
                }}],
                "partialFingerprints": {FINGERPRINT: digest[:32]},
            }
            entry["properties"] = {"confidence": finding.confidence, "evidence": finding.evidence,
                                   "projectedCost": finding.cost}
            if cell is not None:
                entry["locations"][0]["message"] = {"text": f"{cell}"}
                entry["properties"].update({"notebookCell": cell.cell, "cellLine": cell.line,
                                            "cellColumn": cell.col + 1})
            if finding.code in index:
                entry["ruleIndex"] = index[finding.code]
            sarif_results.append(entry)
    notifications = [{
        "level": "error",
        "message": {"text": " ".join(result.error.split())},
        "locations": [{"physicalLocation": {"artifactLocation": _artifact(result.path, root)}}],
    } for result in results if result.error]
    document = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "tf-memlint",
                "version": __version__,
                "rules": [_descriptor(code, rules[code], url_base) for code in codes],
            }},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": root.as_uri() + "/"}},
            "columnKind": "unicodeCodePoints",
            "invocations": [{
                "executionSuccessful": not notifications,
                "toolExecutionNotifications": notifications,
            }],
            "results": sarif_results,
        }],
    }
    return json.dumps(document, indent=2) + "\n"
