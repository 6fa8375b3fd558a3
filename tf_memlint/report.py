"""Output formats of the ``tf-memlint`` command. Columns are printed 1-based, as flake8 prints them."""

from __future__ import annotations

import json
from typing import Callable

from tf_memlint import __version__
from tf_memlint.files import FileResult
from tf_memlint.rule import all_rules


def text(results: list[FileResult]) -> str:
    return "".join(f"{r.path}:{d.line}:{d.col + 1}: {d.code} {d.message}\n"
                   for r in results for d in r.findings)


def as_json(results: list[FileResult]) -> str:
    rules = all_rules()
    findings = [{"path": r.path, "line": d.line, "column": d.col + 1, "code": d.code,
                 "name": rules[d.code].name, "message": d.message}
                for r in results for d in r.findings]
    errors = [{"path": r.path, "message": r.error} for r in results if r.error]
    return json.dumps({"tool": "tf-memlint", "version": __version__, "findings": findings,
                       "errors": errors}, indent=2) + "\n"


FORMATS: dict[str, Callable[[list[FileResult]], str]] = {"text": text, "json": as_json}
