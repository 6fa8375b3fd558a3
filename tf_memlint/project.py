"""Project-level facts for the command: summaries across the modules of
the linted project, and TF1 graph mode from the project, not only the file.

The flake8 plugin sees one file at a time; it gets in-file reach only. The command sees every
file it was given: before linting, ``build`` reads them with the stdlib ``ast`` (C-fast; files
that never name tensorflow/keras cost a text search) and computes, for the top-level functions
and the methods of top-level classes of every module (``Agent.act``; ``Agent`` for its
``__init__``), the same effects as facts/functions.py (a Keras model built or loaded, predict
on a module's own model, TF ops, a session kept or returned, a session run) from canonical names,
followed through the calls between the project's modules (a few rounds: bounded depth; a cycle
adds nothing new and stops). Then, for each file that imports a project function with an effect
(``from .models import build``, ``import mypkg.models``, ``from mypkg import models``), a table
keyed by the names that file calls it by (``models.build``, ``Agent.act``: facts/functions.py finds
the class of ``agent.act()`` from ``agent = Agent()``) goes to the engine (``settings["project"]``), which
hands it to ``TFContext.project``; FunctionFacts consults it when a call does not resolve in-file.

Callers the other way: a method that only one class of the project defines, called from another
module on a receiver that module cannot type (``predict_data.as_tf_dataset()`` in a model's
``predict``), runs that class's method; for the methods that build a generator-fed dataset, where
they are called goes into the defining module's table (``METHOD_CALLERS``, ``_method_callers``).

Graph mode: a project where some module calls ``disable_eager_execution()`` /
``disable_v2_behavior()``, or imports ``tensorflow.compat.v1`` and creates a Session, builds TF1
graphs everywhere: ``"__graph_mode__"`` in every table.

What a file's bytes alone decide (``text_facts``, ``summarize``) is plain data: the command's
cache (cache.py) keeps it between runs, and only the linking of the modules is redone.
"""

from __future__ import annotations

import ast
import gc
import os
import re
import sys
from pathlib import Path
from typing import Any

from tf_memlint.facts.callers import COMMON_METHODS
from tf_memlint.facts.functions import (EFFECT_KINDS, METHOD_CALLERS, MODEL, OPS, PREDICT, RETURNED, RETURNS_MODEL,
                                       RETURNS_SESSION, RUNS_SESSION, SESSION, UNDONE_BY, is_cache_decorator,
                                       latches_among)
from tf_memlint.facts.keras import (KERAS_APPLICATIONS, KERAS_MODEL_BUILDERS, graph_mode_keras, is_view_inputs,
                                   tf2_keras)
from tf_memlint.facts.sessions import (INTERACTIVE_SESSION, SESSION_CLASSES, SESSION_NAME, SESSION_RUN_METHODS,
                                      op_creating_name)
from tf_memlint.gate import ModuleFacts
from tf_memlint.names import MENTIONS_TF
from tf_memlint.syntax import ast_dotted_name, ast_nodes, ast_own_nodes

PROJECT_SETTING = "project"
GRAPH_MODE = "__graph_mode__"
RELATIVE = "__relative__"
_ROUNDS = 3  # module-to-module hops followed
# Module names that an import line means as the installed package, not a file of the project
# (a stub named tensorflow.py would otherwise make every file a consumer).
_NOT_PROJECT = frozenset({"tensorflow", "keras", "tf_keras", "tensorflow_datasets", "google", "numpy",
                          "__init__", "__main__", "setup", "tensorflow_hub", "tensorflow_probability",
                          "sklearn", "scipy", "pandas", "matplotlib", "torch", "absl", "six", "gym", "cv2",
                          "PIL", "flask", "fastapi", "django", "tqdm", "IPython", "official"}) | frozenset(getattr(sys, "stdlib_module_names", ()))
# A module can only have an effect if its text has one of these (model builders and loaders,
# predict, sessions and their runs, TF1 graph markers: ops count only in graph mode). A module that
# runs a session builds into a TF1 graph, as FunctionFacts.graph_mode says in the file.
_GRAPH_PATTERN = rb"Session\(|disable_eager_execution\(|disable_v2_behavior\(|placeholder\(|sess(ion)?\.run\("
_GRAPH_WORDS = re.compile(_GRAPH_PATTERN).search
_EFFECT_WORDS = re.compile(rb"load_model|Sequential|Model\(|applications|model_from_|\.predict\(|" + _GRAPH_PATTERN).search


def module_name(path: Path) -> tuple[str, str]:
    """(root, ``pkg.sub.mod``) for root/pkg/sub/mod.py when pkg and sub are packages (``__init__.py``)."""
    path = path.resolve()
    parts = [path.stem] if path.stem != "__init__" else []
    parent = path.parent
    while (parent / "__init__.py").is_file():
        parts.insert(0, parent.name)
        parent = parent.parent
    return str(parent), ".".join(parts)


class _Module:
    """One module's stdlib tree, while ``summarize`` reads it."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.facts = ModuleFacts(tree)  # import aliases, and names through them (the gate's own)
        self.aliases = self.facts.aliases
        self.functions: dict[str, ast.FunctionDef] = {
            n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        # Methods of top-level classes as "Class.method", and a class's __init__ as "Class" (what
        # calling the class runs): an agent class in agent.py, called per step from train.py.
        self.model_attrs: dict[str, set[str]] = {}  # class -> self attributes bound to a model
        self.latches: dict[int, frozenset[str]] = {}  # method -> its class's latch attributes
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                latches = _latch_attributes(node)
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        self.functions.setdefault(f"{node.name}.{item.name}", item)
                        self.latches[id(item)] = latches
                        if item.name == "__init__":
                            self.functions.setdefault(node.name, item)
        self.globals_models: set[str] = set()
        self.tf2_predict: bool | None = None  # _predict_builds_per_call, once

    def imported(self, node: ast.AST) -> str | None:
        """The dotted name ``node`` has through this module's imports, as imported."""
        return self.facts.imported(node)

    def canonical(self, node: ast.AST) -> str | None:
        return self.facts.qualified(node)


def _is_model_build(module: _Module, call: ast.Call) -> bool:
    name = module.canonical(call.func)
    if name is not None and name == "keras.Model":
        inputs = next((k.value for k in call.keywords if k.arg == "inputs"), call.args[0] if call.args else None)
        if inputs is not None and is_view_inputs(name, ast.unparse(inputs)):
            return False
    return name is not None and (name in KERAS_MODEL_BUILDERS or (
        name.startswith(KERAS_APPLICATIONS + ".") and name.rsplit(".", 1)[-1][:1].isupper()))


_NODES: dict[int, list[ast.AST]] = {}


def _nodes(function: ast.AST) -> list[ast.AST]:
    """Every node of a function, walked once per build; not those of the defs, lambdas and classes
    nested in it, whose bodies run at another time (as ``TFContext.nodes_in``)."""
    found = _NODES.get(id(function))
    if found is None:
        found = _NODES[id(function)] = ast_own_nodes(function, ast.ClassDef)
    return found


_GUARDED: dict[int, set[int]] = {}


def _guarded(module: _Module, function: ast.AST) -> set[int]:
    """Nodes under ``if x is None:`` / ``if not x:`` / ``if k not in cache:``, or under the test of
    a latch of the method's class (``if self.done == 0:``): run once. Asked twice per function
    (``_undone``, ``_direct``): kept, with ``_NODES``, for one summary."""
    found = _GUARDED.get(id(function))
    if found is not None:
        return found
    found = _GUARDED[id(function)] = set()
    latches = module.latches.get(id(function), frozenset())
    for node in _nodes(function):
        if type(node) is ast.If and (
                _latch_tested(node.test) in latches
                or (isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not))
                or (isinstance(node.test, ast.Compare) and any(
                    isinstance(op, (ast.NotIn, ast.In)) or (isinstance(op, (ast.Is, ast.Eq))
                                                            and isinstance(c, ast.Constant) and c.value is None)
                    for op, c in zip(node.test.ops, node.test.comparators)))):
            for statement in node.body:
                found.update(id(n) for n in ast_nodes(statement))
    # `if model is not None: return model` first: what follows runs to fill the cache.
    statements = getattr(function, "body", [])
    first = next((i for i, statement in enumerate(statements) if _returns_when_filled(statement)), None)
    for statement in statements[first + 1:] if first is not None else ():
        found.update(id(n) for n in ast_nodes(statement))
    return found


def _self_attribute(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def _latch_tested(test: ast.expr) -> str | None:
    """The twin of FunctionFacts' ``_latch_tested``: X for ``self.X == v`` or ``v != self.X``."""
    if not isinstance(test, ast.Compare) or len(test.ops) != 1 or not isinstance(test.ops[0], (ast.Eq, ast.NotEq)):
        return None
    return _self_attribute(test.left) or _self_attribute(test.comparators[0])


def _latch_attributes(cls: ast.ClassDef) -> frozenset[str]:
    """The twin of ``FunctionFacts._latches``: attributes only ``__init__`` and the branches
    testing them set (``latches_among`` decides, for both)."""
    sets: dict[str, list[tuple[str, ast.AST]]] = {}
    stepped: set[str] = set()
    latched: dict[str, set[int]] = {}
    for method in cls.body:
        if not isinstance(method, ast.FunctionDef):
            continue
        for node in ast.walk(method):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    name = _self_attribute(target)
                    if name is not None:
                        sets.setdefault(name, []).append((method.name, node))
            elif isinstance(node, ast.AugAssign) and _self_attribute(node.target) is not None:
                stepped.add(_self_attribute(node.target))  # type: ignore[arg-type]
            elif isinstance(node, ast.If):
                name = _latch_tested(node.test)
                if name is not None:
                    latched.setdefault(name, set()).update(
                        id(n) for statement in node.body for n in ast.walk(statement) if isinstance(n, ast.Assign))
    return latches_among(sets, stepped, latched)


def _is_filled_test(test: ast.expr) -> bool:
    """The twin of FunctionFacts' ``_is_filled_test``: true once a cache is filled."""
    if isinstance(test, (ast.Name, ast.Attribute)):
        return True
    if isinstance(test, ast.Call):
        return ast_dotted_name(test.func) == "hasattr"
    if isinstance(test, ast.Compare):
        return all(isinstance(op, ast.In) or (isinstance(op, ast.IsNot) and isinstance(c, ast.Constant) and c.value is None)
                   for op, c in zip(test.ops, test.comparators))
    if isinstance(test, ast.BoolOp):
        return all(_is_filled_test(value) for value in test.values)
    return False


def _returns_when_filled(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.If) and not statement.orelse and _is_filled_test(statement.test) \
        and bool(statement.body) and isinstance(statement.body[-1], ast.Return)


def _undone(module: _Module, function: ast.FunctionDef) -> frozenset[str]:
    """The effects ``function`` never passes on: all of them under a cache decorator (its body
    runs once per key), else those it undoes itself (``UNDONE_BY``: a direct call, here)."""
    if any(is_cache_decorator(ast_dotted_name(d.func if isinstance(d, ast.Call) else d))
           for d in function.decorator_list):
        return EFFECT_KINDS
    guarded = _guarded(module, function)
    names = {module.canonical(n.func) for n in _nodes(function) if type(n) is ast.Call and id(n) not in guarded}
    return frozenset(kind for kind, undoing in UNDONE_BY.items() if names & undoing)


def _direct(module: _Module, function: ast.FunctionDef, graph_mode: bool,
            owner: str | None = None) -> dict[str, tuple[str, tuple]]:
    """What one call of ``function`` does itself (``owner``: its class, for a method)."""
    effects: dict[str, tuple[str, tuple]] = {}
    guarded = _guarded(module, function)
    calls = [n for n in _nodes(function) if type(n) is ast.Call and id(n) not in guarded]
    names = [module.canonical(c.func) for c in calls]
    closes = any(type(n) is ast.Attribute and n.attr == "close" for n in _nodes(function))
    if "tensorflow.executing_eagerly" in names:
        graph_mode = False  # written for both modes: no graph in TF2
    for call, name in zip(calls, names):
        what = (ast_dotted_name(call.func) or "call") + "()"
        if _is_model_build(module, call):
            effects.setdefault(MODEL, (what, ()))
        if name is not None and op_creating_name(name) and graph_mode:
            effects.setdefault(OPS, (what, ()))
        if name == INTERACTIVE_SESSION and not closes:
            effects.setdefault(SESSION, (what, ()))
        if isinstance(call.func, ast.Attribute):
            receiver = call.func.value
            if call.func.attr == "predict" and call.args and isinstance(receiver, ast.Name) \
                    and receiver.id in module.globals_models and _predict_builds_per_call(module):
                effects.setdefault(PREDICT, (what, ()))
            if call.func.attr in SESSION_RUN_METHODS and _names_session(receiver):
                effects.setdefault(RUNS_SESSION, (what, ()))
    held = module.model_attrs.get(owner, set()) if owner else set()
    if held and PREDICT not in effects and _predict_builds_per_call(module):
        looped = {id(n) for loop in _nodes(function) if type(loop) in (ast.For, ast.While) for n in ast_nodes(loop)}
        for call in calls:
            func = call.func
            if isinstance(func, ast.Attribute) and func.attr == "predict" and call.args and id(call) not in looped \
                    and isinstance(func.value, ast.Attribute) and func.value.attr in held \
                    and isinstance(func.value.value, ast.Name) and func.value.value.id == "self":
                effects[PREDICT] = (f"self.{func.value.attr}.predict()", ())
                break
    built = None  # the names this function binds to a model it builds: `model = Sequential(...)`
    for node in _nodes(function):
        if type(node) is ast.Return and isinstance(node.value, ast.Call) \
                and module.canonical(node.value.func) in SESSION_CLASSES and not closes:
            effects.setdefault(RETURNS_SESSION, ((ast_dotted_name(node.value.func) or "Session") + "()", ()))
        if type(node) is ast.Return and node.value is not None and RETURNS_MODEL not in effects \
                and _predict_builds_per_call(module):
            if built is None:
                built = {t.id for n in _nodes(function) if type(n) is ast.Assign and isinstance(n.value, ast.Call)
                         and _is_model_build(module, n.value) for t in n.targets if isinstance(t, ast.Name)}
            value = node.value
            if isinstance(value, ast.Call) and _is_model_build(module, value) \
                    or isinstance(value, ast.Name) and value.id in built:
                effects[RETURNS_MODEL] = (function.name + "()", ())
    return effects


def _names_session(receiver: ast.AST) -> bool:
    """``sess``, ``self.sess``, ``self.session``: spelled like a session, as facts/sessions.py
    ``is_session`` reads a name or a ``self`` attribute whose binding it cannot see."""
    if isinstance(receiver, ast.Name):
        return bool(SESSION_NAME(receiver.id))
    return (isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name)
            and receiver.value.id == "self" and bool(SESSION_NAME(receiver.attr)))


def _predict_builds_per_call(module: _Module) -> bool:
    """The provider's Keras is TF2's, as facts/keras.py ``predict_builds_per_call`` decides for the
    module that calls ``predict`` (a consumer that imports no Keras cannot tell the era itself)."""
    if module.tf2_predict is None:  # type: ignore[has-type]
        calls = [(module.imported(c.func), module.canonical(c.func),
                  c.func.attr if type(c.func) is ast.Attribute else None)
                 for c in ast_nodes(module.tree) if type(c) is ast.Call]
        module.tf2_predict = tf2_keras(module.aliases.values(), calls) and not graph_mode_keras(calls)
    return module.tf2_predict


def _model_attributes(module: _Module, cls: ast.ClassDef) -> set[str]:
    """The ``self`` attributes a method of ``cls`` binds to a Keras model it builds or loads."""
    def builds(call: ast.Call) -> bool:  # Sequential(...), or self._build_model() / build() that does
        if _is_model_build(module, call):
            return True
        dotted = ast_dotted_name(call.func) or ""
        helper = module.functions.get(f"{cls.name}.{dotted[5:]}" if dotted.startswith("self.") else dotted)
        return helper is not None and any(type(n) is ast.Call and _is_model_build(module, n) for n in _nodes(helper))

    def binds_model(value: ast.AST) -> bool:  # `load_model(p) if evaluating else self._build()` too
        if isinstance(value, ast.IfExp):
            return binds_model(value.body) and binds_model(value.orelse)
        return isinstance(value, ast.Call) and builds(value)

    found = set()
    for node in ast_nodes(cls):
        if type(node) is ast.Assign and binds_model(node.value):
            found.update(t.attr for t in node.targets if isinstance(t, ast.Attribute)
                         and isinstance(t.value, ast.Name) and t.value.id == "self")
    return found


def build(paths: list[str], summaries: Any = None) -> dict[str, dict[str, Any]]:
    """{path: table} for the files that call a project function with an effect (and, in a TF1
    graph-mode project, every file).

    ``summaries``: where each module's ``summarize`` is kept between runs (cache.py): an object
    with ``get(raw, variant)`` (the summary, or None) and ``put(raw, variant, summary)``.

    The cyclic garbage collector is paused meanwhile, as for a LibCST tree (engine._lint_cst):
    the stdlib trees have no cycles, and the collections their allocations trigger scanned them
    over and over (3.1 s instead of 7 s on the dev corpus).
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _build(paths, summaries)
    finally:
        if collecting:
            gc.enable()


def _build(paths: list[str], summaries: Any = None) -> dict[str, dict[str, Any]]:
    """``build`` with the collector paused.

    Cheap first: the bytes of every file are searched (``text_facts``), but only *providers*
    (importable modules that name TensorFlow/Keras and define a function) and the files that name
    a provider's module are parsed (``summarize``); graph mode is a text test
    (``disable_eager_execution()``, ``disable_v2_behavior()``, ``compat.v1`` with ``Session(``).
    Both depend on a file's bytes alone (and summarize on two flags), so ``summaries`` can keep
    them; what ties the modules together (``_tables``) is redone every time, from plain data."""
    raws: dict[str, bytes] = {}
    for path in paths:
        if path.endswith(".py"):
            try:
                raws[path] = Path(path).read_bytes()
            except OSError:
                continue
    stem = {path: Path(path).stem for path in raws}
    facts: dict[str, dict[str, Any]] = {}
    for path, raw in raws.items():
        found = summaries.get(raw, TEXT_VARIANT) if summaries is not None else None
        if found is None:
            found = text_facts(raw)
            if summaries is not None:
                summaries.put(raw, TEXT_VARIANT, found)
        facts[path] = found
    # Graph mode belongs to a project: the given tree when its top has a project marker, else
    # each top-level directory under it (linting a folder of checkouts judges each on its own).
    owner = _projects(list(raws))
    # (a notebook, x.ipynb.py, is a program of its own)
    graph_projects = {owner[path] for path in raws if stem[path].isidentifier() and facts[path]["graph_marker"]}
    callers = _method_callers(raws, owner)
    return _with_callers(_link(raws, facts, stem, owner, graph_projects, summaries), callers)


def _link(raws: dict[str, bytes], facts: dict[str, dict[str, Any]], stem: dict[str, str], owner: dict[str, str],
          graph_projects: set[str], summaries: Any) -> dict[str, dict[str, Any]]:
    """The tables of the modules that import a project function with an effect (``_build``)."""
    modules: dict[str, _Unit] = {}

    def parse(path: str, raw: bytes) -> _Unit | None:
        # A provider (names TF/Keras, imported somewhere) gets effects; the graph mode its ops
        # count in is its own or its project's. The summary depends on nothing else but the bytes.
        provider = facts[path]["tf"] and os.fsencode(stem[path]) in wanted
        graph_mode = facts[path]["graph_words"] or owner[path] in graph_projects
        variant = f"provider={provider:d},graph={graph_mode:d}"
        summary = summaries.get(raw, variant) if summaries is not None else None
        if summary is None:
            summary = summarize(raw, provider, graph_mode)
            if summaries is not None:
                summaries.put(raw, variant, summary)
        if summary.get("unparsable"):
            return None
        return _Unit(path, summary, provider)

    # Providers: importable modules that name TF/Keras and define functions, kept only when an
    # import line of another file names them; those files are the consumers.
    candidates = {path: stem[path] for path in raws
                  if stem[path].isidentifier() and stem[path] not in _NOT_PROJECT
                  and facts[path]["tf"] and facts[path]["def"]
                  and (owner[path] in graph_projects or facts[path]["effect_words"])}
    if not candidates:
        return {path: {GRAPH_MODE: True} for path in raws if owner[path] in graph_projects}
    stems = {os.fsencode(stem) for stem in candidates.values()}
    wanted: set[bytes] = set()
    consumers: list[str] = []
    for path in raws:
        if not facts[path]["words"]:
            continue
        named = {word.encode() for word in facts[path]["words"]} & stems
        named.discard(os.fsencode(stem[path]))
        if named:
            wanted |= named
            consumers.append(path)
    for path in dict.fromkeys([p for p, stem in candidates.items() if os.fsencode(stem) in wanted] + consumers):
        module = parse(path, raws[path])
        if module is not None:
            modules.setdefault(module.key, module)
    if not modules:
        return {path: {GRAPH_MODE: True} for path in raws if owner[path] in graph_projects}
    return _tables(modules, raws, graph_projects, owner)


def _with_callers(tables: dict[str, dict[str, Any]],
                  callers: dict[str, dict[str, list[list[Any]]]]) -> dict[str, dict[str, Any]]:
    for path, found in callers.items():
        tables.setdefault(path, {})[METHOD_CALLERS] = found
    return tables


# Where the project calls a method that only one class of it defines, for the rules that judge a
# per-call cost by its callers (TFM304: a from_generator pipeline built in a method, called from
# another module's predict()). A call ``x.method(...)`` runs that class's method whatever ``x``
# is, when no other class or function of the project has a def of that name and the name is not
# one a library's object has too (``_COMMON_METHODS``: the call graph's list, and a dataset's own
# methods, which a pipeline calls on every receiver). Only methods that build a generator-fed
# dataset are indexed: a text test (``from_generator(``) picks the few modules to parse.
# A method's body is indented twice at least: a line that calls from_generator at that depth.
_INDEXED_CALL = re.compile(rb"\n(?:[ ]{8,}|\t\t|[ ]{4,}\t|\t[ ]{4,})[^\n]*from_generator\(").search
_COMMON_METHODS = COMMON_METHODS | {"map", "batch", "shuffle", "repeat", "take", "cache", "prefetch", "filter"}


def _method_callers(raws: dict[str, bytes], owner: dict[str, str]) -> dict[str, dict[str, list[list[Any]]]]:
    """{path of the defining module: {"Class.method": [[caller "Class.func" or "func", file name,
    line, in a loop of the caller (0/1)], ...]}} for the methods of top-level classes that call
    ``Dataset.from_generator`` themselves, defined once in their project, called elsewhere."""
    indexed: dict[str, tuple[str, str]] = {}  # method -> (path, "Class.method")
    for path, raw in raws.items():
        if b"from_generator(" not in raw or not _INDEXED_CALL(raw) or not MENTIONS_TF(raw):
            continue
        try:
            tree = ast.parse(raw)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        facts = ModuleFacts(tree)
        for cls in tree.body:
            if not isinstance(cls, ast.ClassDef):
                continue
            for item in cls.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name not in _COMMON_METHODS \
                        and any(type(n) is ast.Call and (facts.qualified(n.func) or "").endswith(".from_generator")
                                for n in ast.walk(item)):
                    indexed.setdefault(item.name, (path, f"{cls.name}.{item.name}"))
    if not indexed:
        return {}
    found: dict[str, dict[str, list[list[Any]]]] = {}
    for method, (home, label) in indexed.items():
        defined = re.compile(rb"\bdef[ \t]+" + method.encode() + rb"[ \t]*\(").findall
        called = b"." + method.encode()
        project = [path for path in raws if owner.get(path) == owner.get(home)]
        if sum(len(defined(raws[path])) for path in project) != 1:
            continue  # another def of that name: a call may run it instead
        sites: list[list[Any]] = []
        for path in project:
            if called not in raws[path]:
                continue
            try:
                tree = ast.parse(raws[path])
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue
            sites.extend(_call_sites(tree, method, os.path.basename(path)))
        if sites:
            found.setdefault(home, {})[label] = sites
    return found


def _call_sites(tree: ast.Module, method: str, filename: str) -> list[list[Any]]:
    """``<x>.method(...)`` calls in the functions and methods of ``tree``, ``x`` not ``self``
    (the defining class's own calls are its module's to judge)."""
    sites = []
    functions = [(None, n) for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    functions += [(c.name, n) for c in tree.body if isinstance(c, ast.ClassDef)
                  for n in c.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for cls, function in functions:
        looped = {id(n) for loop in ast.walk(function) if type(loop) in (ast.For, ast.While)
                  for n in ast.walk(loop) if n is not loop}
        for node in ast.walk(function):
            if type(node) is ast.Call and isinstance(node.func, ast.Attribute) and node.func.attr == method \
                    and not (isinstance(node.func.value, ast.Name) and node.func.value.id in ("self", "cls")):
                sites.append([f"{cls}.{function.name}" if cls else function.name, filename, node.lineno,
                              int(id(node) in looped)])
    return sites


TEXT_VARIANT = "text"
TEXT_FLAGS = ("tf", "graph_marker", "graph_words", "def", "effect_words")


def text_facts(raw: bytes) -> dict[str, Any]:
    """What ``build``'s text tests find in a file's bytes (plain data, so a cache can keep it)."""
    mentions = bool(MENTIONS_TF(raw))
    defines = b"def " in raw
    return {"tf": mentions, "def": defines,
            "graph_marker": mentions and (b"disable_eager_execution(" in raw or b"disable_v2_behavior(" in raw
                                          or (b"compat.v1" in raw and b"Session(" in raw)),
            # what a provider's graph mode and candidacy need (a provider names TF and has a def)
            "graph_words": mentions and bool(_GRAPH_WORDS(raw)),
            "effect_words": mentions and defines and bool(_EFFECT_WORDS(raw)),
            "words": sorted(word.decode("ascii") for word in _imported_words(raw)) if b"import" in raw else []}


def summarize(raw: bytes, provider: bool, graph_mode: bool) -> dict[str, Any]:
    """What the project's tables need of one module, from its bytes alone (plain data, so a cache
    can keep it): its functions (name -> line), its import statements, and for a provider the
    direct effects of each function, the effects it never passes on (``_undone``) and the names it
    calls that may be the project's."""
    try:
        tree = ast.parse(raw)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {"unparsable": True}
    module = _Module(tree)
    imports: list[list[Any]] = []
    for node in _statements(tree):
        if isinstance(node, ast.Import):
            imports.append(["import", "", 0, [[a.name, a.asname] for a in node.names]])
        elif isinstance(node, ast.ImportFrom):
            imports.append(["from", node.module or "", node.level, [[a.name, a.asname] for a in node.names]])
    summary: dict[str, Any] = {"functions": {f: node.lineno for f, node in module.functions.items()},
                               "imports": imports, "effects": {}, "calls": {}, "undone": {}}
    if not provider:
        return summary
    try:
        for node in tree.body:  # only top-level models count as globals
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and _is_model_build(module, node.value):
                module.globals_models.update(t.id for t in node.targets if isinstance(t, ast.Name))
            if isinstance(node, ast.ClassDef):
                module.model_attrs[node.name] = _model_attributes(module, node)
        # What a call may resolve to (lookup in _tables): a function of this module, or a name
        # bound by an import; kept in order, once each (a later duplicate finds the same).
        bound = {(asname or name).split(".")[0] for _, _, _, names in imports for name, asname in names}
        for fname, function in module.functions.items():
            undone = _undone(module, function)
            if undone:
                summary["undone"][fname] = sorted(undone)
            found = _direct(module, function, graph_mode, fname.partition(".")[0] if fname != function.name else None)
            found = {kind: what for kind, what in found.items() if kind not in undone}
            if found:
                summary["effects"][fname] = {kind: what for kind, (what, _) in found.items()}
            calls: dict[str, None] = {}
            guarded = _guarded(module, function)  # a call under a cache test runs once: it passes nothing on
            for node in _nodes(function):
                if type(node) is not ast.Call or id(node) in guarded:
                    continue
                dotted = ast_dotted_name(node.func)
                if dotted and dotted.startswith("self.") and fname != function.name and dotted.count(".") == 1:
                    dotted = fname.partition(".")[0] + dotted[4:]  # self.act() in a method of Agent
                if dotted and dotted != fname and (dotted in module.functions or dotted.partition(".")[0] in bound):
                    calls[dotted] = None
            if calls:
                summary["calls"][fname] = list(calls)
    finally:
        _NODES.clear()  # keyed by id(): the tree goes now
        _GUARDED.clear()
    return summary


class _Unit:
    """One parsed module in the link step of ``build``: where it is (this run's paths) and what
    it holds (its ``summarize``)."""

    def __init__(self, path: str, summary: dict[str, Any], provider: bool) -> None:
        root, name = module_name(Path(path))
        self.path, self.name, self.provider = path, name, provider
        self.filename = os.path.basename(path)  # how the tables name it
        self.package = name if Path(path).stem == "__init__" else name.rpartition(".")[0]
        # Where its absolute imports are looked for: its root, then the directories above it
        # (a script in repo/scripts importing repo/mylib); modules are keyed "root|name", so two
        # projects linted together (or two files named utils.py) never meet.
        self.roots = [root, *map(str, list(Path(root).parents)[:3])]
        self.key = f"{root}|{name}"
        self.functions: dict[str, int] = summary["functions"]  # name -> line of its def
        self.import_statements: list[list[Any]] = summary["imports"]
        self.calls: dict[str, list[str]] = summary["calls"]
        self.effects: dict[str, dict[str, tuple[str, tuple]]] = {
            fname: {kind: (what, ()) for kind, what in found.items()} for fname, found in summary["effects"].items()}
        # function -> the effects it never passes on, its own or its callees' (``_undone``)
        self.undone: dict[str, frozenset[str]] = {fname: frozenset(kinds) for fname, kinds in summary["undone"].items()}
        self.imports: dict[str, str] = {}  # local dotted name -> "module.func" or "module"


_IMPORT_LINE = re.compile(rb"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import[ \t]+\(?([\w ,\t]*)|import[ \t]+([\w., \t]+))", re.M)


def _imported_words(raw: bytes) -> set[bytes]:
    """Module names an import line of ``raw`` may mean (each dotted part; after ``from A import``
    the names too, unless A is TensorFlow/Keras or the standard library): a text test."""
    words: set[bytes] = set()
    for source, names, plain in _IMPORT_LINE.findall(raw):
        if plain:
            for item in plain.split(b","):
                parts = item.split()[0].split(b".") if item.split() else []
                if parts and parts[0].decode() not in _NOT_PROJECT:
                    words.update(parts)
            continue
        parts = [p for p in source.split(b".") if p]
        if parts and parts[0].decode() in _NOT_PROJECT:
            continue
        words.update(parts)
        words.update(n.split()[0] for n in names.split(b",") if n.split())
    return words


_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


def _projects(paths: list[str]) -> dict[str, str]:
    """The project each file belongs to (see ``build``)."""
    if not paths:
        return {}
    absolute = {path: Path(path).resolve() for path in paths}
    try:
        base = Path(os.path.commonpath([str(p.parent) for p in absolute.values()]))
    except ValueError:
        return {path: str(p.parent) for path, p in absolute.items()}
    if any((base / marker).exists() for marker in _MARKERS):
        return {path: str(base) for path in paths}
    owner = {}
    for path, resolved in absolute.items():
        relative = resolved.relative_to(base).parts
        owner[path] = str(base / relative[0]) if len(relative) > 1 else str(base)
    return owner


def _statements(tree: ast.Module):
    """Every statement, at any depth, without walking expressions (imports are statements)."""
    stack = [tree.body]
    while stack:
        for node in stack.pop():
            yield node
            for block in (getattr(node, "body", None), getattr(node, "orelse", None),
                          getattr(node, "finalbody", None)):
                if isinstance(block, list):
                    stack.append(block)
            for handler in getattr(node, "handlers", None) or ():
                stack.append(handler.body)


def _key(modules: dict[str, _Unit], module: _Unit, dotted: str) -> str | None:
    """The key of the project module ``dotted`` as ``module`` imports it, if linted: from its
    roots, else beside it (``import helpers`` in a package's module run as a script, whose own
    directory is first on ``sys.path``: web apps started with ``python app.py``)."""
    for root in module.roots:
        key = f"{root}|{dotted}"
        if key in modules:
            return key
    if module.package:
        key = f"{module.roots[0]}|{module.package}.{dotted}"
        if key in modules:
            return key
    return None


def _tables(modules: dict[str, _Unit], raws: dict[str, bytes], graph_projects: set[str],
            project_of: dict[str, str]) -> dict[str, dict[str, Any]]:
    # Only modules some file imports need summaries (their direct effects are in their summary).
    providers = [m for m in modules.values() if m.provider]
    # Imports of project modules, per module (import statements only: statement lists are walked).
    for module in modules.values():
        for kind, source, level, names in module.import_statements:
            if kind == "import":
                for name, asname in names:
                    key = _key(modules, module, name)
                    if key is not None:
                        module.imports[asname or name] = key
            else:
                base = source
                if level:
                    package = module.package.split(".") if module.package else []
                    package = package[:len(package) - (level - 1)] if level > 1 else package
                    base = ".".join([*package, *([base] if base else [])])
                for name, asname in names:
                    if name == "*":  # from helpers import *: every top-level def of helpers
                        key = _key(modules, module, base) if base else None
                        if key is not None:
                            for fname in modules[key].functions:
                                if "." not in fname and not fname.startswith("_"):
                                    module.imports.setdefault(fname, f"{key}.{fname}")
                        continue
                    full = f"{base}.{name}" if base else name
                    local = asname or name
                    key = _key(modules, module, full)
                    if key is not None:
                        module.imports[local] = key  # from pkg import models
                    else:
                        key = _key(modules, module, base) if base else None
                        if key is not None:
                            module.imports[local] = f"{key}.{name}"  # from .models import build

    def lookup(module: _Unit, dotted: str) -> tuple[str, dict] | None:
        if dotted in module.functions:  # a function, a class (its __init__) or Class.method of this module
            return f"{module.filename}:{module.functions[dotted]}", module.effects.get(dotted, {})
        head, _, rest = dotted.partition(".")
        target = module.imports.get(head)
        if target is None:
            return None
        full = f"{target}.{rest}" if rest else target
        owner, _, fname = full.rpartition(".")
        other = modules.get(owner)
        if other is None or fname not in other.functions:
            return None
        return f"{other.filename}:{other.functions[fname]}", other.effects.get(fname, {})

    for _ in range(_ROUNDS):
        changed = False
        for module in providers:
            for fname in module.functions:
                mine = module.effects.setdefault(fname, {})
                undone = module.undone.get(fname, frozenset())
                for dotted in module.calls.get(fname, ()):
                    found = lookup(module, dotted)
                    if not found:
                        continue
                    where, theirs = found
                    for kind, (what, chain) in theirs.items():
                        if kind not in mine and kind not in RETURNED and kind not in undone:
                            mine[kind] = (what, ((dotted, where),) + chain)
                            changed = True
        if not changed:
            break
    # Tables, per file: the names it calls project functions by.
    tables: dict[str, dict[str, Any]] = {}
    for module in modules.values():
        table: dict[str, Any] = {}
        for local, target in module.imports.items():
            other = modules.get(target)
            if other is not None:  # a module: module.func
                for fname in other.functions:
                    effects = other.effects.get(fname)
                    if effects:
                        where = f"{other.filename}:{other.functions[fname]}"
                        table[f"{local}.{fname}"] = {k: (w, ((f"{local}.{fname}", where),) + c)
                                                     for k, (w, c) in effects.items()}
            else:
                owner, _, fname = target.rpartition(".")
                other = modules.get(owner)
                if other is None:
                    continue
                for name in [fname, *(n for n in other.functions if n.startswith(fname + "."))]:
                    if other.effects.get(name):  # from .agent import Agent: Agent() and Agent.act
                        key = local + name[len(fname):]
                        where = f"{other.filename}:{other.functions[name]}"
                        table[key] = {k: (w, ((key, where),) + c) for k, (w, c) in other.effects[name].items()}
        if table:
            table[RELATIVE] = sorted({name.split(".")[0] for name in table})
        if table:
            tables[module.path] = table
    for path in raws:
        if project_of[path] in graph_projects:
            tables.setdefault(path, {})[GRAPH_MODE] = True
    return tables
