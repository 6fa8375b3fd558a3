"""``# noqa`` handling for the standalone command, matching flake8's behaviour.

A ``# noqa`` comment anywhere in a logical line (a statement spread over several physical lines,
or a multi-line string) silences findings reported on any line of it; ``# noqa: TFM101,TFM2``
silences only those codes and prefixes.
"""

from __future__ import annotations

import io
import re
import tokenize
from typing import Iterable

from tf_memlint.rule import Diagnostic

_NOQA = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_ALL = "*"


def _comments_by_logical_line(source: str) -> dict[int, list[str]]:
    """line -> the comments of every physical line in its logical line."""
    by_line: dict[int, list[str]] = {}
    comments: list[str] = []
    first, depth = 1, 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.OP and token.string in "([{":
                depth += 1
            elif token.type == tokenize.OP and token.string in ")]}":
                depth = max(0, depth - 1)
            elif token.type == tokenize.COMMENT:
                comments.append(token.string)
            elif token.type in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER):
                if token.type == tokenize.NL and depth:
                    continue  # a line break inside brackets: the statement goes on
                for line in range(first, token.end[0] + 1):
                    by_line[line] = comments
                comments, first = [], token.end[0] + 1
    except (tokenize.TokenError, SyntaxError):
        # Fall back to one physical line at a time.
        for number, text in enumerate(source.splitlines(), start=1):
            if "#" in text:
                by_line[number] = [text[text.index("#"):]]
    return by_line


def _silenced_codes(comments: list[str]) -> set[str]:
    codes: set[str] = set()
    for comment in comments:
        for match in _NOQA.finditer(comment):
            listed = match.group("codes")
            if listed is None:
                return {_ALL}
            codes.update(c.upper() for c in re.split(r"[,\s]+", listed) if c)
    return codes


def filter_noqa(source: str, findings: Iterable[Diagnostic]) -> list[Diagnostic]:
    findings = list(findings)
    if not findings or "noqa" not in source.lower():
        return findings
    by_line = _comments_by_logical_line(source)
    kept = []
    for finding in findings:
        silenced = _silenced_codes(by_line.get(finding.line, []))
        if _ALL in silenced or any(finding.code.startswith(code) for code in silenced):
            continue
        kept.append(finding)
    return kept
