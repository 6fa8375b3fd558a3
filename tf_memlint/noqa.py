"""``# noqa`` for the standalone command: flake8's own semantics, so both front doors agree.

flake8 applies ``# noqa`` itself to what the plugin yields, and a plugin cannot change how, so the
command copies flake8 (7.x, ``FileProcessor._noqa_line_mapping`` and ``Violation.is_inline_ignored``):

- A finding is silenced by a ``# noqa`` on the line it is reported on (the line printed).
- Lines joined into one token range count as one line: a multi-line string, or lines continued
  with a backslash. Lines inside brackets do **not** join: in a call or literal spread over
  several lines, the comment must be on the reported line (the first line of the flagged
  expression or statement), not on a later line of it.
- ``# noqa`` silences every code; ``# noqa: TFM101,TFM2`` those codes and prefixes. The match is
  flake8's regular expression, case-insensitive, with one space after ``#`` (``#noqa`` is not one),
  searched in the line's text (as flake8 does: a ``# noqa`` inside a string on that line counts).
  Codes are compared as written: ``# noqa: tfm101`` silences nothing, in flake8 as here.
- When the source cannot be tokenized, each physical line stands alone.
"""

from __future__ import annotations

import io
import re
import tokenize
from typing import Iterable

from tf_memlint.rule import Diagnostic

# flake8.defaults.NOQA_INLINE_REGEXP (7.x), verbatim.
_NOQA = re.compile(r"# noqa(?::[\s]?(?P<codes>([A-Z]+[0-9]+(?:[,\s]+)?)+))?", re.IGNORECASE)
_SEPARATOR = re.compile(r"[,\s]")
# Physical lines as flake8 (universal newlines) and the positions count them; str.splitlines
# would also break at form feeds and other characters Python does not treat as line ends.
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def _noqa_line_mapping(source: str) -> dict[int, str]:
    """line number -> the text flake8 searches for ``# noqa`` when a finding is on that line."""
    lines = _LINES.findall(source)
    mapping: dict[int, str] = {}
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return {number: text for number, text in enumerate(lines, start=1)}
    first, last = len(lines) + 2, -1
    for token in tokens:
        if token.type in (tokenize.ENDMARKER, tokenize.DEDENT):
            continue
        first, last = min(first, token.start[0]), max(last, token.end[0])
        if token.type in (tokenize.NL, tokenize.NEWLINE):
            joined = "".join(lines[first - 1:last])
            for number in range(first, last + 1):
                mapping[number] = joined
            first, last = len(lines) + 2, -1
    return mapping


def _silenced(code: str, text: str) -> bool:
    match = _NOQA.search(text)
    if match is None:
        return False
    listed = match.group("codes")
    if listed is None:
        return True
    codes = {c.strip() for c in _SEPARATOR.split(listed) if c.strip()}
    return code in codes or code.startswith(tuple(codes))


def filter_noqa(source: str, findings: Iterable[Diagnostic]) -> list[Diagnostic]:
    findings = list(findings)
    if not findings or "noqa" not in source.lower():
        return findings
    mapping = _noqa_line_mapping(source)
    physical = _LINES.findall(source)
    kept = []
    for finding in findings:
        text = mapping.get(finding.line)
        if text is None:
            text = physical[finding.line - 1] if 0 < finding.line <= len(physical) else ""
        if not _silenced(finding.code, text):
            kept.append(finding)
    return kept
