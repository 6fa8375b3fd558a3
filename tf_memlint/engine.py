"""Lint one source text: fast path, a cheap gate, one LibCST parse, one traversal for every rule.

The flake8 plugin and the ``tf-memlint`` command both call ``lint_source``; they differ only in
who honours ``# noqa`` (flake8 does it itself; the command calls ``noqa.filter``).

The steps, cheapest first; each one ends the work for a file that cannot have findings:

1. text: the file never names ``tensorflow``/``keras`` (microseconds);
2. the gate (``gate.py``), on the bytes and then the stdlib ``ast`` tree (free under flake8,
   which hands it to the plugin; ``ast.parse`` is C-fast for the command): the module must
   import a public TensorFlow/Keras module, and must contain a *trigger* of at least one enabled
   rule (``Rule.triggers``, else "always");
3. LibCST parse, the ``TFContext`` pre-pass (whose walk is recorded, ``walk.Walked``), the
   rules whose own gate passed in one replay of that walk (the hook order is in rule.py),
   positions only if a rule fired.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import gc
import sys
import threading
import warnings
from collections import defaultdict
from typing import Any, Callable, Iterable, Iterator, TypeVar

import libcst as cst

from tf_memlint.context import TFContext
from tf_memlint.gate import (  # noqa: F401  (the gate's entry points, also re-exported from here)
    ALWAYS,
    ModuleFacts,
    codes_that_can_fire,
    could_fire,
    gate_reason,
    gate_triggers,
    may_have_trigger,
    MODEL_PACKAGES,
    may_import_tf,
    rule_triggers,
)
from tf_memlint.names import MENTIONS_TF, canonical
from tf_memlint.evidence import Evidence
from tf_memlint.ignores import configured_test_path, is_test_path
from tf_memlint.excerpt import MIN_BYTES, excerpt
from tf_memlint.grading import DEFAULT_MIN_MIB, DEFAULT_MIN_SECONDS, HIGH, Grade, at_least, grade, graded_message
from tf_memlint.rule import Diagnostic, Rule, all_rules
from tf_memlint.syntax import contains, never_run, uncalled_in_script
from tf_memlint.walk import Walked, in_use, positions_of


class LintError(Exception):
    """The file could not be linted (syntax error, undecodable bytes); the message says why."""


def enabled_codes(select: Iterable[str] = (), ignore: Iterable[str] = (),
                  extend_select: Iterable[str] = ()) -> list[str]:
    """Rule codes to run, with flake8's (and ruff's) meaning of code prefixes.

    Without ``select`` the default rules run. A ``select`` or ``extend-select`` code or prefix
    selects every rule under it, opt-in rules included (``--select TFM`` is every rule, as flake8
    decides with the opt-in codes in its default ignore list, and as ruff selects by prefix);
    opt-in rules are otherwise off. ``ignore`` removes codes; where a select and an ignore prefix
    both match, the longer (more specific) wins, ties going to ignore.
    """
    select, ignore, extend_select = list(select), list(ignore), list(extend_select)

    def longest(prefixes: list[str], code: str) -> int:
        return max((len(p) for p in prefixes if code.startswith(p)), default=-1)

    chosen = []
    for code, rule in all_rules().items():
        if select or not rule.default_enabled:
            specificity = longest(select + extend_select, code)
        else:
            specificity = max(0, longest(extend_select, code))
        if specificity >= 0 and specificity > longest(ignore, code):
            chosen.append(code)
    return chosen


_HOOKS: dict[type, tuple[str, ...]] = {}


def _hooks(cls: type) -> tuple[str, ...]:
    """The ``visit_*``/``leave_*`` methods of a rule class, in ``dir`` order (read once)."""
    found = _HOOKS.get(cls)
    if found is None:
        found = _HOOKS[cls] = tuple(a for a in dir(cls) if a.startswith(("visit_", "leave_")))
    return found


class _BatchedWalk:
    """One traversal: keeps the TFContext current, then dispatches each node to every rule.
    The order (context entered before the rules visit a node, left after they leave it) is
    the contract documented in rule.py."""

    def __init__(self, context: TFContext, rules: list[Rule], module: cst.Module | None = None) -> None:
        self.context = context
        # The index of each top-level statement: the context knows which one is being walked.
        self.tops = {id(statement): index for index, statement in enumerate(module.body)} if module else {}
        self.visitors: dict[str, list[Callable[[Any], Any]]] = defaultdict(list)
        self.leavers: dict[str, list[Callable[[Any], Any]]] = defaultdict(list)
        for rule in rules:
            for attr in _hooks(type(rule)):
                if attr.startswith("visit_"):
                    self.visitors[attr[6:]].append(getattr(rule, attr))
                else:
                    self.leavers[attr[6:]].append(getattr(rule, attr))
        # What runs on entering / leaving a node of each type, in the hook order: filled on
        # first sight of the type. Most nodes (names, whitespace, operators) have nothing to run.
        self._on_enter: dict[type, list[Callable[[Any], Any]]] = {}
        self._on_leave: dict[type, list[Callable[[Any], Any]]] = {}

    def _steps(self, kind: type) -> None:
        context, name = self.context, kind.__name__
        self._on_enter[kind] = ([context.enter] if kind in context.ENTERED else []) + self.visitors.get(name, [])
        self._on_leave[kind] = self.leavers.get(name, []) + ([context.leave] if kind in context.LEFT else [])

    def run(self, walked: Walked) -> None:
        """The recorded walk of the module (``Walked``: the scope pre-pass's), replayed with the
        dispatch inline: two method calls per node fewer than a visitor's on_visit/on_leave."""
        on_enter, on_leave, tops = self._on_enter, self._on_leave, self.tops
        open_nodes: list[cst.CSTNode] = []
        push, pop = open_nodes.append, open_nodes.pop
        for node in walked.events:
            if node is None:
                node = pop()
                for step in on_leave[type(node)]:
                    step(node)
                continue
            if len(open_nodes) == 1:  # a child of the Module
                top = tops.get(id(node))
                if top is not None:
                    self.context.statement = top
            push(node)
            steps = on_enter.get(type(node))
            if steps is None:
                self._steps(type(node))
                steps = on_enter[type(node)]
            for step in steps:
                step(node)


def parse(source: bytes | str, *, valid_python: bool = False) -> cst.Module:
    """The LibCST tree of ``source``. ``valid_python``: CPython has parsed the same source (the
    stdlib tree exists), so LibCST's check of every node the parser builds is skipped."""
    try:
        if valid_python:
            with _nodes_unchecked():
                return cst.parse_module(source)
        return cst.parse_module(source)
    except cst.ParserSyntaxError as error:
        raise LintError(f"syntax error: {_first_line(error)} (line {error.raw_line})") from None
    except (UnicodeDecodeError, LookupError) as error:
        raise LintError(f"cannot decode: {error}") from None
    except (RecursionError, MemoryError):
        raise
    except Exception as error:  # noqa: BLE001 - the native parser raises plain exceptions too
        raise LintError(f"syntax error: {type(error).__name__}: {_first_line(error)}") from None


# LibCST checks every node it constructs (``CSTNode.__post_init__`` calls ``_validate``), the
# parser's own nodes too, although a tree its parser builds from valid Python is valid by
# construction (LibCST's comment there: "PERF: ... avoid validating the tree when parsing a
# file"). It is a sixth of the parse: 5.3 s -> 4.4 s for the files the gate passes on the
# development corpus. The check is off only in the thread that parses, only during the parse:
# any other thread constructing LibCST nodes at that time is still checked.
_CHECK_NODE = cst.CSTNode.__post_init__
_parsing = threading.local()
_unchecked_lock = threading.Lock()
_unchecked_parses = 0


_SKIP_CHECK = object.__init__  # a method of every object that takes no argument and does nothing


def _check_unless_parsing(node: cst.CSTNode) -> None:
    if not getattr(_parsing, "trusted", False):
        _CHECK_NODE(node)


@contextlib.contextmanager
def _nodes_unchecked() -> Iterator[None]:
    global _unchecked_parses
    with _unchecked_lock:
        if _unchecked_parses == 0:
            # The only thread (flake8 and the command's workers parse on their main thread):
            # no other thread can construct a node meanwhile, so the check is skipped by a
            # method in C instead of a Python call per node (a few million per corpus).
            alone = threading.active_count() == 1
            cst.CSTNode.__post_init__ = _SKIP_CHECK if alone else _check_unless_parsing  # type: ignore[method-assign]
        _unchecked_parses += 1
    _parsing.trusted = True
    try:
        yield
    finally:
        _parsing.trusted = False
        with _unchecked_lock:
            _unchecked_parses -= 1
            if _unchecked_parses == 0:
                cst.CSTNode.__post_init__ = _CHECK_NODE  # type: ignore[method-assign]


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


def parse_ast(source: bytes | str) -> ast.AST | None:
    """The stdlib tree, or None when CPython cannot build it."""
    try:
        return _parse_ast(source)
    except LintError:
        return None


_last_syntax_error = threading.local()
_NESTING = ("too many nested", "too many indentation", "too many statically nested")


def _parse_ast(source: bytes | str) -> ast.AST | None:
    """The stdlib tree; None when CPython rejects syntax LibCST may still know (a newer Python's);
    LintError when the file cannot be analysed at all (nesting beyond CPython's own limits:
    LibCST would take minutes on it, or overflow its stack)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning for "\d" and friends: not ours
            return ast.parse(source)
    except SyntaxError as error:
        if error.msg and error.msg.startswith(_NESTING):
            raise LintError(f"syntax error: {error.msg} (line {error.lineno})") from None
        _last_syntax_error.message = f"syntax error: {error.msg} (line {error.lineno})"
        return None
    except (RecursionError, MemoryError):
        raise LintError("nested too deeply to analyse (CPython cannot compile it either)") from None
    except ValueError as error:  # "source code string cannot contain null bytes"
        raise LintError(f"cannot parse: {error}") from None


# ---------------------------------------------------------------------------------------------
# Linting
# ---------------------------------------------------------------------------------------------

# The settings keys holding the linted file's path and the configured test-paths globs (the
# evidence reads test code off them: ignores.is_test_path, the same test the ignores use).
PATH_SETTING = "path"
TEST_PATHS_SETTING = "test_paths"


def lint_source(source: bytes | str, codes: Iterable[str] | None = None,
                settings: dict[str, Any] | None = None, *, tree: ast.AST | None = None,
                gate: bool = True) -> list[Diagnostic]:
    """Findings for one module's source text, sorted by position. Raises LintError.

    ``tree``: the stdlib ast of ``source`` when the caller has it (flake8 hands one to its
    plugins). ``gate=False`` skips the gate (the tests prove it changes no finding). Code nested
    too deeply for the default recursion limit is analysed again on a thread with a big stack.
    """
    raw = source.encode("utf-8", "surrogatepass") if isinstance(source, str) else source
    # The command's project table (project.py): this file calls functions of other modules of the
    # linted project that build a model, predict, add ops... The text tests cannot see that; the
    # gate can: a rule that follows calls counts those calls where its structure says (gate.py).
    cross = _calls_project(settings)
    if not MENTIONS_TF(raw) and not cross:
        return []  # fast path: no TensorFlow or Keras module is named, nothing can fire
    registry = all_rules()
    wanted = list(registry) if codes is None else [c for c in codes if c in registry]
    if not wanted:
        return []
    _last_syntax_error.message = None
    if gate:
        if not cross and not may_import_tf(raw):
            return []  # no import statement can bind a public TF/Keras module
        if tree is None:
            # Parsed even when no trigger word occurs: a syntax error in a file that imports
            # TensorFlow is reported, not passed over. C-fast; the walk below is what costs.
            tree = _parse_ast(source)
        if tree is not None:
            if not cross and not may_have_trigger(raw, wanted):
                return []
            facts = ModuleFacts(tree, settings["project"] if cross else None,  # type: ignore[index]
                                notebook=bool(settings and settings.get("notebook")))
            if not could_fire(facts, wanted):
                return []
            wanted = codes_that_can_fire(facts, wanted)  # only the rules whose own gate passes run
    settings = settings or {}
    if tree is not None and not cross and not (settings.get("notebook")):
        cut = _excerpt_of(source, tree, wanted, settings)
        if cut is not None:
            # Every line kept in place (excerpt.py): the findings are at the module's lines.
            return lint_source(cut, wanted, {**settings, EXCERPT_MIN_BYTES: None}, tree=_parse_ast(cut), gate=False)
    try:
        return shown(_lint_cst(source, registry, wanted, settings, tree), settings)
    except LintError as error:
        # Both parsers refuse it: CPython says why more clearly ("Missing parentheses in call
        # to 'print'"), when it was asked.
        cpython = getattr(_last_syntax_error, "message", None)
        if cpython and str(error).startswith("syntax error"):
            raise LintError(cpython) from None
        raise
    except RecursionError:
        return shown(_on_big_stack(lambda: _lint_cst(source, registry, wanted, settings, tree)), settings)


# The settings key of the size above which a module is linted as an excerpt (excerpt.py);
# None: never (an excerpt is not cut again).
EXCERPT_MIN_BYTES = "excerpt_min_bytes"


def _excerpt_of(source: bytes | str, tree: ast.AST, wanted: list[str], settings: dict[str, Any]) -> str | None:
    min_bytes = settings.get(EXCERPT_MIN_BYTES, MIN_BYTES)
    if min_bytes is None or len(source) < min_bytes:
        return None
    if isinstance(source, bytes):
        try:
            source = source.decode("utf-8")  # a module in another encoding is parsed whole
        except UnicodeDecodeError:
            return None
    return excerpt(source, tree, wanted, min_bytes)  # type: ignore[arg-type]


def _lint_cst(source: bytes | str, registry: dict[str, type[Rule]], wanted: list[str],
              settings: dict[str, Any], tree: ast.AST | None = None) -> list[Diagnostic]:
    """The LibCST phase, with the cyclic garbage collector paused.

    A LibCST tree is hundreds of thousands of small objects; each allocation burst triggers GC
    passes that scan the host's whole heap (flake8's trees, tokens and results included):
    measured a third of the plugin's time on a 12k-line file. The tree holds no reference
    cycles, so reference counting frees it when the call returns; the collector resumes after.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _lint_cst_unpaused(source, registry, wanted, settings, tree)
    finally:
        if collecting:
            gc.enable()


def _lint_cst_unpaused(source: bytes | str, registry: dict[str, type[Rule]], wanted: list[str],
                       settings: dict[str, Any], tree: ast.AST | None = None) -> list[Diagnostic]:
    module = parse(source, valid_python=tree is not None)
    context = TFContext(module)
    rules: list[Rule] = []
    try:
        # Linting a Jupyter notebook's code cells (files.lint_file sets it): a kernel lives on.
        context.notebook = bool(settings.get("notebook"))
        context.path = settings.get(PATH_SETTING)
        test_paths = list(settings.get(TEST_PATHS_SETTING) or ())
        context.test_file = bool(context.path) and is_test_path(context.path, test_paths)
        context.test_file_configured = bool(context.path) and configured_test_path(context.path, test_paths)
        context.source, context.tree = source, tree  # for the lines a message names (positions_of)
        context.project = settings.get("project")  # cross-module summaries, command only (project.py)
        if not _calls_project(settings) and (
                not context.aliases or not any(canonical(m) is not None or m.split(".")[0] in MODEL_PACKAGES
                                               for m in context.aliases.values())):
            return []  # "keras" only in a comment or string: no TF name to resolve
        rules = [registry[code](context, settings) for code in wanted]
        walker = _BatchedWalk(context, rules, module)
        with in_use(context.walked):  # syntax.contains reads the recording
            walker.run(context.walked)
        # A finding's grade does not depend on where it is: those below the confidence shown are
        # dropped before positions are generated for the rest (``shown`` drops them anyway).
        level = settings.get("confidence") or HIGH
        found_here = _where_it_runs([(rule, node, message, found) for rule in rules
                                     for node, message, found in rule.findings], module, source, context)
        findings = [(rule, node, message, found, graded) for rule, node, message, found in found_here
                    for graded in (_grade(rule, found, settings),) if at_least(graded.confidence, level)]
        if not findings:
            return []
        positions = positions_of(module, source, [node for _, node, _, _, _ in findings], tree, context.walked)
        return sorted({_diagnostic(positions[id(node)], rule, message, found, graded)
                       for rule, node, message, found, graded in findings})
    finally:
        _release(context, rules)


def _where_it_runs(found: list, module: cst.Module, source: bytes | str, context: TFContext) -> list:
    """The findings less those in code that never runs; those in a function of a script that
    nothing in the script calls say so in their evidence (graded low)."""
    if not found:
        return found
    dead = never_run(module, cells=context.notebook)
    text = source.decode("utf-8", "replace") if isinstance(source, bytes) else source
    uncalled = uncalled_in_script(module, text)
    if not dead and not uncalled:
        return found
    kept = []
    with in_use(context.walked):
        for rule, node, message, evidence in found:
            if any(contains(block, node) for block in dead):
                continue
            function = next((f for f in uncalled if contains(f, node)), None)
            if function is not None:
                evidence = dataclasses.replace(evidence, uncalled=function.name.value)
            kept.append((rule, node, message, evidence))
    return kept


def _grade(rule: Rule, found: Evidence, settings: dict[str, Any]) -> Grade:
    return grade(rule.code, found, found.once_confidence or rule.once_confidence,
                 min_bytes=settings.get("min_memory_cost", DEFAULT_MIN_MIB) * 1024 * 1024,
                 min_seconds=settings.get("min_time_cost", DEFAULT_MIN_SECONDS))


def _diagnostic(position: tuple[int, int], rule: Rule, message: str, found: Evidence, graded: Grade) -> Diagnostic:
    """The finding with its grade (grading.graded_message says how the message shows it)."""
    words = found.words()
    return Diagnostic(*position, rule.code, graded_message(message, words, graded.cost), graded.confidence,
                      graded.cost, words or None)


def shown(findings: list[Diagnostic], settings: dict[str, Any] | None) -> list[Diagnostic]:
    """The findings at or above the configured confidence (``high`` unless set)."""
    level = (settings or {}).get("confidence") or HIGH
    return [f for f in findings if at_least(f.confidence, level)]


def _release(context: TFContext, rules: list[Rule]) -> None:
    """Break the reference cycles of one file's analysis (the fact modules and the context point
    at each other) so reference counting frees the LibCST tree as soon as the file is done,
    instead of the next collection having to traverse its hundreds of thousands of nodes."""
    for facts in [*vars(context).values(), *getattr(context, "on_demand", {}).values()]:
        if hasattr(facts, "__dict__") and getattr(facts, "context", None) is context:
            vars(facts).clear()
    vars(context).clear()
    for rule in rules:
        vars(rule).clear()


def _calls_project(settings: dict[str, Any] | None) -> bool:
    project = settings.get("project") if settings else None
    return bool(project) and any(not key.startswith("__") for key in project)


_T = TypeVar("_T")
_BIG_STACK = 512 * 1024 * 1024
_BIG_RECURSION_LIMIT = 100_000
_big_stack_lock = threading.Lock()


def _on_big_stack(work: Callable[[], _T]) -> _T:
    """Run ``work`` on a thread with a 512 MiB stack and a high recursion limit. LibCST visits
    recursively, and generated code nests deep (a 2000-term ``a + b + ...`` is 2000 levels).
    What still does not fit raises RecursionError to the caller."""
    result: list[tuple[bool, Any]] = []

    def target() -> None:
        try:
            result.append((True, work()))
        except BaseException as error:  # noqa: BLE001 - handed back to the calling thread
            result.append((False, error))

    with _big_stack_lock:
        old_limit, old_stack = sys.getrecursionlimit(), threading.stack_size()
        try:
            threading.stack_size(_BIG_STACK)
            sys.setrecursionlimit(max(old_limit, _BIG_RECURSION_LIMIT))
            thread = threading.Thread(target=target, name="tf-memlint-deep", daemon=True)
            thread.start()
            thread.join()
        finally:
            sys.setrecursionlimit(old_limit)
            threading.stack_size(old_stack)
    ok, value = result[0] if result else (False, RecursionError("analysis thread failed"))
    if not ok:
        raise value
    return value
