"""Lint one source text: fast path, one LibCST parse, one traversal for every rule.

The flake8 plugin and the ``tf-memlint`` command both call ``lint_source``; they differ only in
who honours ``# noqa`` (flake8 does it itself; the command calls ``noqa.filter``).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Callable, Iterable

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from tf_memlint.context import TFContext
from tf_memlint.names import MENTIONS_TF
from tf_memlint.rule import Diagnostic, Rule, all_rules


class LintError(Exception):
    """The file could not be linted (syntax error, undecodable bytes); the message says why."""


def enabled_codes(select: Iterable[str] = (), ignore: Iterable[str] = (),
                  extend_select: Iterable[str] = ()) -> list[str]:
    """Rule codes to run, with flake8's and ruff's meaning of code prefixes.

    Without ``select`` the default rules run. ``ignore`` removes codes; where a select and an
    ignore prefix both match, the longer (more specific) wins, ties going to ignore. Opt-in rules
    (off by default, like flake8-bugbear's B9xx) run only when named by their full code.
    """
    select, ignore, extend_select = list(select), list(ignore), list(extend_select)

    def longest(prefixes: list[str], code: str) -> int:
        return max((len(p) for p in prefixes if code.startswith(p)), default=-1)

    chosen = []
    for code, rule in all_rules().items():
        if not rule.default_enabled:
            specificity = len(code) if code in select or code in extend_select else -1
        elif select:
            specificity = longest(select + extend_select, code)
        else:
            specificity = max(0, longest(extend_select, code))
        if specificity >= 0 and specificity > longest(ignore, code):
            chosen.append(code)
    return chosen


class _BatchedWalk(cst.CSTVisitor):
    """One traversal: keeps the TFContext current, then dispatches each node to every rule."""

    def __init__(self, context: TFContext, rules: list[Rule]) -> None:
        self.context = context
        self.visitors: dict[str, list[Callable[[Any], Any]]] = defaultdict(list)
        self.leavers: dict[str, list[Callable[[Any], Any]]] = defaultdict(list)
        for rule in rules:
            for attr in dir(type(rule)):
                if attr.startswith("visit_"):
                    self.visitors[attr[6:]].append(getattr(rule, attr))
                elif attr.startswith("leave_"):
                    self.leavers[attr[6:]].append(getattr(rule, attr))

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.context.enter(node)
        for visit in self.visitors.get(type(node).__name__, ()):
            visit(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        for leave in self.leavers.get(type(original_node).__name__, ()):
            leave(original_node)
        self.context.leave(original_node)


def parse(source: bytes | str) -> cst.Module:
    try:
        return cst.parse_module(source)
    except cst.ParserSyntaxError as error:
        raise LintError(f"syntax error: {str(error).splitlines()[0]} (line {error.raw_line})") from None
    except (UnicodeDecodeError, LookupError) as error:
        raise LintError(f"cannot decode: {error}") from None


def lint_source(source: bytes | str, codes: Iterable[str] | None = None,
                settings: dict[str, Any] | None = None) -> list[Diagnostic]:
    """Findings for one module's source text, sorted by position. Raises LintError."""
    raw = source.encode("utf-8", "surrogatepass") if isinstance(source, str) else source
    if not MENTIONS_TF(raw):
        return []  # fast path: no TensorFlow or Keras module is named, nothing can fire
    registry = all_rules()
    wanted = list(registry) if codes is None else [c for c in codes if c in registry]
    if not wanted:
        return []
    module = parse(source)
    context = TFContext(module)
    if not context.aliases or not any(_is_tf(m) for m in context.aliases.values()):
        return []  # "keras" only in a comment or string: no TF name to resolve
    rules = [registry[code](context, settings or {}) for code in wanted]
    module.visit(_BatchedWalk(context, rules))
    findings = [(rule.code, node, message) for rule in rules for node, message in rule.findings]
    if not findings:
        return []
    # Positions cost a full code-generation pass: computed only when something fired.
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    return sorted({Diagnostic(positions[node].start.line, positions[node].start.column, code, message)
                   for code, node, message in findings})


def _is_tf(module: str) -> bool:
    from tf_memlint.names import canonical

    return canonical(module) is not None
