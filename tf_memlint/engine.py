"""Lint one source text: fast path, a cheap gate, one LibCST parse, one traversal for every rule.

The flake8 plugin and the ``tf-memlint`` command both call ``lint_source``; they differ only in
who honours ``# noqa`` (flake8 does it itself; the command calls ``noqa.filter``).

The steps, cheapest first; each one ends the work for a file that cannot have findings:

1. text: the file never names ``tensorflow``/``keras`` (microseconds);
2. the gate (``could_fire``), on the stdlib ``ast`` tree (free under flake8, which hands it to
   the plugin; ``ast.parse`` is C-fast for the command): the module must import a public
   TensorFlow/Keras module, and must contain a *trigger* of at least one enabled rule
   (``Rule.triggers``, else ``CATALOGUE_TRIGGERS``, else "always");
3. LibCST parse, the ``TFContext`` pre-pass, one batched traversal, positions only if a rule fired.
"""

from __future__ import annotations

import ast
import gc
import dataclasses
import re
import sys
import threading
import warnings
from collections import defaultdict
from typing import Any, Callable, Iterable, TypeVar

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from tf_memlint import context as _context
from tf_memlint.context import TFContext
from tf_memlint.names import MENTIONS_TF, PRIVATE_SUBPACKAGES, canonical
from tf_memlint.rule import TRACED_SCOPE, Diagnostic, Rule, all_rules
from tf_memlint.walk import walk


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
        raise LintError(f"syntax error: {_first_line(error)} (line {error.raw_line})") from None
    except (UnicodeDecodeError, LookupError) as error:
        raise LintError(f"cannot decode: {error}") from None
    except (RecursionError, MemoryError):
        raise
    except Exception as error:  # noqa: BLE001 - the native parser raises plain exceptions too
        raise LintError(f"syntax error: {type(error).__name__}: {_first_line(error)}") from None


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


# ---------------------------------------------------------------------------------------------
# The gate: could any enabled rule fire in this module? Decided on the stdlib ast tree.
# ---------------------------------------------------------------------------------------------

# The ONE place where the engine knows what each catalogue rule matches on, for the rules whose
# class does not declare ``triggers`` (a declaration on the class wins). Keep it conservative:
# a trigger missing here silently loses findings; a superfluous one only costs a parse.
# Syntax (see tf_memlint.rule): a canonical name matches every spelling of it and every name
# under it; ".attr" matches that attribute on any receiver; "*" always. From DESIGN.md section 2.
# Each entry mirrors what the rule's context predicates need (names from tf_memlint.context
# where it has them, so the gate follows when the context learns a new spelling).
_SESSIONS = frozenset(getattr(_context, "SESSION_CLASSES",
                              {"tensorflow.Session", "tensorflow.InteractiveSession"}))
_TF1_GRAPH = frozenset(getattr(_context, "TF1_GRAPH_CALLS", set())) | _SESSIONS | {
    "tensorflow.placeholder", "tensorflow.disable_eager_execution", "tensorflow.disable_v2_behavior"}
# context.is_session_run: sess.run / partial_run / eval; the session may be a parameter.
_SESSION_RUNS = frozenset({".run", ".partial_run", ".eval"})
# context.is_training_call: an optimisation step in the loop (a local function doing one counts,
# and it is in the same module, so its words are too).
_TRAINING = (".apply_gradients", ".train_on_batch", ".assign_sub", ".minimize", "~train_step")
# context.is_keras_model_build: builders, keras.applications, Model subclasses, local factories.
_MODEL_BUILDS = frozenset(getattr(_context, "KERAS_MODEL_BUILDERS", {"keras"})) | {
    "keras.applications", "keras.Model", "keras.Sequential"}
CATALOGUE_TRIGGERS: dict[str, frozenset[str]] = {
    # TFM1xx fire only inside traced code (TFM104: calls of a known tf.function; TFM105:
    # tf.function in a loop); TFM106 also in a TF1 graph (context.builds_tf1_graph).
    "TFM101": TRACED_SCOPE,
    "TFM102": TRACED_SCOPE,
    "TFM103": TRACED_SCOPE,
    "TFM104": TRACED_SCOPE,
    "TFM105": TRACED_SCOPE,
    "TFM106": TRACED_SCOPE | _TF1_GRAPH,
    # TFM2xx: TF1 sessions and graphs.
    "TFM201": _SESSIONS,  # context.is_session_creation
    "TFM202": _SESSION_RUNS,  # ops created in a loop that runs a session
    # TFM3xx: mapped functions and input pipelines.
    "TFM301": TRACED_SCOPE,
    # TFM4xx: eager training loops and Keras.
    "TFM401": frozenset({"tensorflow.GradientTape"}),
    "TFM402": frozenset(".append&" + step for step in _TRAINING),  # append in a training loop
    "TFM403": _MODEL_BUILDS,
    "TFM404": frozenset(".predict&" + build for build in _MODEL_BUILDS),  # on a known Keras model
}
ALWAYS = "*"


def rule_triggers(code: str, rule: type[Rule]) -> frozenset[str]:
    """The triggers the gate uses for ``rule``: its own, else the catalogue's, else always."""
    declared = getattr(rule, "triggers", None)
    if declared is not None:
        return frozenset(declared)
    return CATALOGUE_TRIGGERS.get(code, frozenset({ALWAYS}))


_COMPOUND = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor,
             ast.While, ast.With, ast.AsyncWith, ast.Try) + tuple(
    getattr(ast, name) for name in ("TryStar", "Match") if hasattr(ast, name))


class ModuleFacts:
    """What the gate reads from a stdlib ast tree: import aliases, attribute names, TF names."""

    __slots__ = ("aliases", "tree", "_attrs", "_attribute_nodes", "_identifiers")

    def __init__(self, tree: ast.AST) -> None:
        self.tree = tree
        self.aliases: dict[str, str] = {}
        self._attrs: set[str] | None = None
        self._identifiers: set[str] = set()
        self._attribute_nodes: list[ast.Attribute] = []
        self._collect_imports(getattr(tree, "body", ()))

    def _collect_imports(self, body: list[ast.stmt]) -> None:
        """Import statements at any depth, the same alias table ``context._FactCollector``
        builds. Imports are statements, so only statement lists are walked (cheap)."""
        aliases = self.aliases
        stack = [body]
        while stack:
            for node in stack.pop():
                kind = type(node)
                if kind is ast.Import:
                    for alias in node.names:
                        if alias.asname:
                            aliases[alias.asname] = alias.name
                        else:
                            top = alias.name.split(".")[0]
                            aliases[top] = top
                elif kind is ast.ImportFrom:
                    if node.level or not node.module:
                        continue
                    for alias in node.names:
                        if alias.name != "*":
                            aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
                elif isinstance(node, _COMPOUND):
                    for block in (getattr(node, "body", None), getattr(node, "orelse", None),
                                  getattr(node, "finalbody", None)):
                        if block:
                            stack.append(block)
                    for sub in getattr(node, "handlers", None) or getattr(node, "cases", None) or ():
                        stack.append(sub.body)

    def imports_tf(self) -> bool:
        """Whether a public TF/Keras module is imported (else TFContext resolves nothing)."""
        return any(canonical(module) is not None for module in self.aliases.values())

    def _walk(self) -> None:
        attrs: set[str] = set()
        identifiers = self._identifiers
        nodes = self._attribute_nodes
        attribute, name = ast.Attribute, ast.Name
        for node in ast.walk(self.tree):
            kind = type(node)
            if kind is attribute:
                attrs.add(node.attr)
                nodes.append(node)
            elif kind is name:
                identifiers.add(node.id)
        identifiers |= attrs
        self._attrs = attrs

    @property
    def identifiers(self) -> set[str]:
        """Every name and attribute name used (for "~substring" triggers)."""
        if self._attrs is None:
            self._walk()
        return self._identifiers

    @property
    def attributes(self) -> set[str]:
        """Every attribute name used anywhere (``x.predict`` gives ``predict``)."""
        if self._attrs is None:
            self._walk()
        return self._attrs  # type: ignore[return-value]

    def names(self, lasts: set[str]) -> set[str]:
        """Canonical TF/Keras names the module refers to: every import alias, and every
        ``a.b.c`` chain ending in one of ``lasts``, resolved as ``TFContext.qualified_name``
        resolves it (head through the import aliases, then ``names.canonical``)."""
        found = {c for c in map(canonical, self.aliases.values()) if c is not None}
        if self._attrs is None:
            self._walk()
        for node in self._attribute_nodes:
            if node.attr not in lasts:
                continue
            parts = [node.attr]
            expr = node.value
            while type(expr) is ast.Attribute:
                parts.append(expr.attr)
                expr = expr.value
            if type(expr) is not ast.Name:
                continue
            module = self.aliases.get(expr.id)
            if module is None:
                continue
            parts.append(module)
            name = canonical(".".join(reversed(parts)))
            if name is not None:
                found.add(name)
        return found


def gate_triggers(codes: Iterable[str] | None = None) -> frozenset[str]:
    """The union of the triggers of ``codes`` (default: every rule)."""
    registry = all_rules()
    triggers: set[str] = set()
    for code in (registry if codes is None else codes):
        if code in registry:
            triggers |= rule_triggers(code, registry[code])
        elif code in CATALOGUE_TRIGGERS:  # a catalogue rule not written yet (tests ask)
            triggers |= CATALOGUE_TRIGGERS[code]
    return frozenset(triggers)


_TRIGGER_CACHE: dict[tuple[str, ...], "_Triggers"] = {}


@dataclasses.dataclass(frozen=True)
class _Triggers:
    always: bool
    attributes: frozenset[str]  # ".attr" triggers, without the dot
    names: tuple[str, ...]  # canonical-name triggers
    lasts: frozenset[str]  # the last part of every name atom (single or in a conjunction)
    conjunctions: tuple[tuple[str, ...], ...]  # "a&b" triggers, split
    text: Any  # bytes regex search for any trigger word, or None


def _split_triggers(codes: Iterable[str] | None) -> _Triggers:
    key = tuple(codes) if codes is not None else ("<all>",)
    cached = _TRIGGER_CACHE.get(key)
    if cached is None:
        triggers = gate_triggers(codes)
        single = [t for t in triggers if "&" not in t and t != ALWAYS]
        conjunctions = tuple(tuple(t.split("&")) for t in triggers if "&" in t)
        atoms = single + [atom for conj in conjunctions for atom in conj]
        names = tuple(t for t in single if t[0] not in ".~")
        lasts = frozenset(t.rsplit(".", 1)[-1] for t in atoms if t[0] not in ".~")
        # Every trigger leaves a word in the text: its attribute name, the last part of its name
        # (canonical() rewrites only prefixes), its substring. A text without any cannot fire.
        words = sorted({t.lstrip(".~").rsplit(".", 1)[-1] for t in atoms}, key=len, reverse=True)
        text = re.compile(b"|".join(re.escape(w.encode()) for w in words)).search if words else None
        cached = _Triggers(ALWAYS in triggers, frozenset(t[1:] for t in single if t.startswith(".")),
                           names, lasts, conjunctions, text)
        _TRIGGER_CACHE[key] = cached
    return cached


def may_have_trigger(raw: bytes, codes: Iterable[str] | None = None) -> bool:
    """A text test, sound for ``could_fire``: False when no trigger word occurs at all."""
    triggers = _split_triggers(codes)
    return triggers.always or (triggers.text is not None and triggers.text(raw) is not None)


def could_fire(tree: ast.AST | ModuleFacts, codes: Iterable[str] | None = None) -> bool:
    """False only when no enabled rule can fire in the module: a sound over-approximation.

    That is when the module imports no public TensorFlow/Keras module (then ``TFContext``
    resolves no name and no rule fires), or when it contains no trigger of any enabled rule.
    """
    return gate_reason(tree, codes) is not None


def gate_reason(tree: ast.AST | ModuleFacts, codes: Iterable[str] | None = None) -> str | None:
    """Why the gate lets the module through (the trigger found), or None when it stops it."""
    facts = tree if isinstance(tree, ModuleFacts) else ModuleFacts(tree)
    if not facts.imports_tf():
        return None
    triggers = _split_triggers(codes)
    if triggers.always:
        return ALWAYS
    found = triggers.attributes & facts.attributes
    if found:
        return "." + min(found)
    names: set[str] | None = None

    def matches(atom: str) -> bool:
        nonlocal names
        if atom.startswith("."):
            return atom[1:] in facts.attributes
        if atom.startswith("~"):
            return any(atom[1:] in word for word in facts.identifiers)
        if names is None:
            names = facts.names(set(triggers.lasts))
        return any(name == atom or name.startswith(atom + ".") for name in names)

    for trigger in triggers.names:
        if matches(trigger):
            return trigger
    for conjunction in triggers.conjunctions:
        if all(matches(atom) for atom in conjunction):
            return "&".join(conjunction)
    return None


_HEAD = re.compile(rb"(?<![\w.])(tensorflow_datasets|tensorflow|tf_keras|keras)(?!\w)")
_PRIVATE_NEXT = {top.encode(): tuple(sub.encode() for sub in subs) for top, subs in PRIVATE_SUBPACKAGES.items()}
_SPACE = b" \t\f\r\n\\"


def may_import_tf(raw: bytes) -> bool:
    """A text test, sound for ``ModuleFacts.imports_tf``: False only when no import statement can
    bind a public TF/Keras module, so the command skips ``ast.parse`` for TensorFlow's own files.

    Only a module head (tensorflow, keras, tf_keras, tensorflow_datasets) right after ``import``,
    ``from`` or a comma (``import os, tensorflow``) can start such a binding; the names listed
    after ``from M import`` cannot (``M.name`` is public only if ``M`` is). Of those, ``from
    <head>.<private> import ...`` binds only private names. ``import tensorflow.python.x`` binds
    ``tensorflow`` itself and counts. Mentions in strings, comments and URLs do not.
    """
    for match in _HEAD.finditer(raw):
        start, end = match.span()
        window = raw[max(0, start - 64):start]  # bounded: never quadratic
        before = window.rstrip(_SPACE)
        if not before:
            if start > 64:
                return True  # a run of whitespace longer than the window: cannot tell
            before = b""
        if before.endswith(b","):
            return True
        keyword = _keyword_before(before)
        if keyword == b"import":
            return True
        if keyword == b"from":
            private = _PRIVATE_NEXT.get(match.group(1))
            rest = raw[end:end + 64].lstrip(_SPACE)
            if not (private and rest.startswith(b".") and rest[1:].lstrip(_SPACE).startswith(private)):
                return True
    return False


def _keyword_before(before: bytes) -> bytes | None:
    for keyword in (b"import", b"from"):
        if before.endswith(keyword) and (
                len(before) == len(keyword) or not _is_word(before[-len(keyword) - 1])):
            return keyword
    return None


def _is_word(byte: int) -> bool:
    return byte == 95 or 48 <= byte <= 57 or 65 <= byte <= 90 or 97 <= byte <= 122 or byte >= 128


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

def lint_source(source: bytes | str, codes: Iterable[str] | None = None,
                settings: dict[str, Any] | None = None, *, tree: ast.AST | None = None,
                gate: bool = True) -> list[Diagnostic]:
    """Findings for one module's source text, sorted by position. Raises LintError.

    ``tree``: the stdlib ast of ``source`` when the caller has it (flake8 hands one to its
    plugins). ``gate=False`` skips the gate (the tests prove it changes no finding). Code nested
    too deeply for the default recursion limit is analysed again on a thread with a big stack.
    """
    raw = source.encode("utf-8", "surrogatepass") if isinstance(source, str) else source
    if not MENTIONS_TF(raw):
        return []  # fast path: no TensorFlow or Keras module is named, nothing can fire
    registry = all_rules()
    wanted = list(registry) if codes is None else [c for c in codes if c in registry]
    if not wanted:
        return []
    _last_syntax_error.message = None
    if gate:
        if not may_import_tf(raw):
            return []  # no import statement can bind a public TF/Keras module
        if tree is None:
            # Parsed even when no trigger word occurs: a syntax error in a file that imports
            # TensorFlow is reported, not passed over. C-fast; the walk below is what costs.
            tree = _parse_ast(source)
        if tree is not None and (not may_have_trigger(raw, wanted) or not could_fire(tree, wanted)):
            return []
    settings = settings or {}
    try:
        return _lint_cst(source, registry, wanted, settings)
    except LintError as error:
        # Both parsers refuse it: CPython says why more clearly ("Missing parentheses in call
        # to 'print'"), when it was asked.
        cpython = getattr(_last_syntax_error, "message", None)
        if cpython and str(error).startswith("syntax error"):
            raise LintError(cpython) from None
        raise
    except RecursionError:
        return _on_big_stack(lambda: _lint_cst(source, registry, wanted, settings))


def _lint_cst(source: bytes | str, registry: dict[str, type[Rule]], wanted: list[str],
              settings: dict[str, Any]) -> list[Diagnostic]:
    """The LibCST phase, with the cyclic garbage collector paused.

    A LibCST tree is hundreds of thousands of small objects; each allocation burst triggers GC
    passes that scan the host's whole heap (flake8's trees, tokens and results included):
    measured a third of the plugin's time on a 12k-line file. The tree holds no reference
    cycles, so reference counting frees it when the call returns; the collector resumes after.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _lint_cst_unpaused(source, registry, wanted, settings)
    finally:
        if collecting:
            gc.enable()


def _lint_cst_unpaused(source: bytes | str, registry: dict[str, type[Rule]], wanted: list[str],
                       settings: dict[str, Any]) -> list[Diagnostic]:
    module = parse(source)
    context = TFContext(module)
    if not context.aliases or not any(canonical(m) is not None for m in context.aliases.values()):
        return []  # "keras" only in a comment or string: no TF name to resolve
    rules = [registry[code](context, settings) for code in wanted]
    walk(module, _BatchedWalk(context, rules))
    findings = [(rule.code, node, message) for rule in rules for node, message in rule.findings]
    if not findings:
        return []
    # Positions cost a full code-generation pass: computed only when something fired.
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    return sorted({Diagnostic(positions[node].start.line, positions[node].start.column, code, message)
                   for code, node, message in findings})


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
