"""Apply the shipped fixes to one source text, one finding at a time, and check each one.

A pass lints the text (``# noqa`` honoured: a silenced finding is never fixed), takes the first
finding that has a shipped fix and has not been declined, and asks the rule's fix for an edit. The
edit is kept only when

- it is safe, or unsafe fixes were asked for (``--unsafe-fixes``);
- no line it changes or removes carries a ``# noqa`` that matches the rule (flake8's matching,
  noqa.py), so a line the user silenced is never rewritten;
- the new text parses, has fewer findings of that rule and no more of any other rule.

Otherwise the finding is declined and the next one is tried. The text after the last pass is the
fixed text; a second run over it finds nothing more to fix (each kept edit removed a finding).
"""

from __future__ import annotations

import difflib
import io
import tokenize
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

from tf_memlint.engine import LintError, lint_source
from tf_memlint.fixes import FIXABLE, fix_module, shipped
from tf_memlint.fixes.base import UNSAFE, Site
from tf_memlint.noqa import _noqa_line_mapping, _silenced, filter_noqa
from tf_memlint.rule import Diagnostic

# Each kept edit removes a finding, so the passes end; this only bounds a pathological file.
MAX_PASSES = 200


@dataclass
class Fixed:
    text: str
    applied: list[Diagnostic] = field(default_factory=list)  # the findings fixed, as first reported
    unsafe_hidden: int = 0  # findings with an unsafe fix, not applied without --unsafe-fixes

    def changed(self, original: str) -> bool:
        return self.text != original


def fix_text(source: str, codes: list[str], settings: dict[str, Any], *, unsafe: bool = False,
             unmeasured: bool = False, lint: Callable[[str], list[Diagnostic]] | None = None) -> Fixed:
    """The source with every applicable shipped fix applied (see the module docstring).
    ``unmeasured``: also the fixes not shipped (what the verifier measures before they are)."""
    if lint is None:
        def lint(text: str) -> list[Diagnostic]:
            return filter_noqa(text, lint_source(text, codes, settings))
    fixable = [code for code in codes if (code in FIXABLE if unmeasured else shipped(code))]
    result = Fixed(source)
    if not fixable:
        return result
    findings = lint(source)
    declined: set[tuple[str, str, str]] = set()
    sites: dict[str, Site | None] = {}
    hidden: set[tuple[str, str, str]] = set()
    for _ in range(MAX_PASSES):
        lines = result.text.splitlines()
        candidates = [f for f in findings if f.code in fixable and _key(f, lines) not in declined]
        if not candidates:
            break
        finding = candidates[0]
        declined.add(_key(finding, lines))
        edit = _edit(result.text, finding, sites)
        if edit is None:
            continue
        if edit.applicability == UNSAFE and not unsafe:
            hidden.add(_key(finding, lines))
            continue
        new_text = edit.module.code
        if new_text == result.text or _touches_noqa(result.text, new_text, finding.code):
            continue
        try:
            new_findings = lint(new_text)
        except LintError:
            continue
        if not _removes(findings, new_findings, finding.code):
            continue
        result.text, findings = new_text, new_findings
        result.applied.append(finding)
        declined.clear()  # positions moved: what was declined is looked at again (and declined again)
    result.unsafe_hidden = len(hidden)
    return result


def _key(finding: Diagnostic, lines: list[str]) -> tuple[str, str, str]:
    """A finding across passes: its code, message and the text of its line (lines above it move)."""
    text = lines[finding.line - 1].strip() if 0 < finding.line <= len(lines) else ""
    return finding.code, finding.message, text


def _edit(text: str, finding: Diagnostic, sites: dict[str, Site | None]):
    """The rule's edit for the finding; ``sites`` keeps the parsed text of this pass (the tree and
    its positions are built once per text, however many findings are tried on it)."""
    if text not in sites:
        sites.clear()
        try:
            sites[text] = Site(text)
        except Exception:  # noqa: BLE001 - what LibCST cannot parse is not fixed
            sites[text] = None
    site = sites[text]
    return None if site is None else fix_module(finding.code).fix(site, finding)


def _removes(before: list[Diagnostic], after: list[Diagnostic], code: str) -> bool:
    old, new = Counter(f.code for f in before), Counter(f.code for f in after)
    return new[code] < old[code] and all(new[c] <= old[c] for c in new)


def _touches_noqa(old: str, new: str, code: str) -> bool:
    """A line the edit changes or removes carries a ``# noqa`` that silences ``code``."""
    if "noqa" not in old.lower():
        return False
    old_lines, new_lines = old.splitlines(keepends=True), new.splitlines(keepends=True)
    mapping = _noqa_line_mapping(old)
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            for number in range(i1 + 1, i2 + 1):
                if _silenced(code, mapping.get(number, old_lines[number - 1])):
                    return True
    return False


def unified_diff(old: str, new: str, path: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        fromfile=f"a/{path}", tofile=f"b/{path}"))


def encoding_of(raw: bytes) -> str:
    """The encoding to write a fixed file back in: the one it was read with (PEP 263, BOM)."""
    try:
        return tokenize.detect_encoding(io.BytesIO(raw).readline)[0]
    except SyntaxError:
        return "utf-8"
