"""What a function defined in this module (or, in the CLI, in the linted project) does,
followed through the calls that reach it.

``definition(name)`` finds the def a call ``name(...)`` or ``self.name(...)`` may run, and
``calls_through_helpers`` answers "does this call, or a local helper it calls (up to two levels
down), call one of these TensorFlow functions?". The domain modules use ``definition`` for their
own "a local function that does X" questions (keras.py: training steps, model factories).

Function summaries. ``summary(def)`` says, once per def, which *effects* one
call of it has, each with a ``Witness`` (the call that does it and the chain of functions it
goes through): MODEL (builds or loads a Keras model), PREDICT (``predict`` on a Keras model;
``param_predicts`` when the model is a parameter, decided at the call site), FIT, OPS (adds TF1
graph operations), SESSION (opens a session that stays alive: an ``InteractiveSession`` or one
stored in a container), RETURNS_SESSION, TF_FUNCTION (creates a ``tf.function``). Effects go up
through the calls a body makes: ``helper()``, ``self.method()``, ``Cls()`` (its ``__init__``),
``obj.method()`` and ``self.attr.method()`` where the object is an instance of a class of this
module, ``module.func()`` / ``from .m import func`` through the project table the command builds
(tf_memlint/project.py). Depth is bounded (``MAX_DEPTH`` defs below the call site); a cycle is cut
where it closes (the def being summarised counts as doing nothing there). A body that clears the
Keras session, starts a fresh graph, caches its result (``if self._model is None:``,
``@lru_cache``) or is traced by ``tf.function`` does not pass on what it builds.

``reach(call, kind)`` is the question a rule asks at a call site.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import libcst as cst

from tf_memlint.facts.base import (EFFECT_KINDS, FIT, MODEL, OPS, PREDICT, RETURNED, RETURNS_MODEL,  # noqa: F401
                                   RETURNS_SESSION, RUNS_SESSION, SESSION, TF_FUNCTION)
from tf_memlint.facts.keras import CLEAR_SESSION_CALLS, KERAS_APPLICATIONS, KERAS_MODEL_BUILDERS
from tf_memlint.facts.sessions import GRAPH_RESETS, SESSION_CLASSES
from tf_memlint.syntax import (STORING_METHODS, all_params, code_of, dotted_name, int_literal,
                               is_self_attribute)
from tf_memlint.walk import children, positions_of

if TYPE_CHECKING:
    from tf_memlint.context import TFContext


# Function summaries (the effect kinds are in facts/base.py) ---------------------------------
MAX_DEPTH = 4  # defs followed below a call site
# Memoising decorators, Streamlit's among them (its script reruns; a cached function does not).
CACHE_DECORATORS = frozenset({"lru_cache", "cache", "cached_property", "memoize", "cached", "cache_resource",
                              "cache_data", "experimental_singleton", "experimental_memo"})
# What a function undoes itself, after its calls are followed, and the calls that undo it: a
# helper that calls clear_session() leaves no model behind, one that resets the graph no ops.
UNDONE_BY = {MODEL: CLEAR_SESSION_CALLS, OPS: GRAPH_RESETS}
_FIT_METHODS = frozenset({"fit", "fit_generator", "compile", "evaluate"})
# The key of the project table (project.py, command only) that lists where other modules call a
# method of this module's classes: {"Class.method": [[caller, file name, line, in a loop (0/1)]]}.
METHOD_CALLERS = "__method_callers__"


@dataclass(frozen=True)
class Witness:
    """Why a call has an effect: ``what`` does it (``load_model()``), reached through ``chain``,
    the functions passed through from the callee down: (label, def node in this module, or a
    "file:line" string for a def in another module of the project)."""

    what: str
    chain: tuple[tuple[str, Any], ...] = ()

    def via(self, label: str, where: Any) -> "Witness":
        return Witness(self.what, ((label, where),) + self.chain)


@dataclass
class Summary:
    effects: dict[str, Witness]
    param_predicts: dict[str, Witness]  # parameter name -> predict on it (a model if the caller passes one)
    params: list[str]


_EMPTY = Summary({}, {}, [])


class FunctionFacts:
    """Definitions of this module, summaries of what they do, and how calls resolve to them."""

    def __init__(self, context: TFContext, calls: list | None = None) -> None:
        self.context = context
        self._calls = calls or []
        self._ready = False
        self._graph_mode: bool | None = None
        self._guarded: dict[int, set[int]] = {}
        self._latch_attributes: dict[int, frozenset[str]] = {}
        self._possible: dict[str, bool] = {}
        self._names: set | None = None
        self.definitions: dict[str, cst.FunctionDef] = {}  # first def of each name, any scope
        for node in context.scopes:
            if isinstance(node, cst.FunctionDef):
                self.definitions.setdefault(node.name.value, node)
        self._reaches: dict[tuple[int, str], bool] = {}
        self._sites: dict[int, list] | None = None

    def definition(self, name: str) -> cst.FunctionDef | None:
        """The def named ``name`` in this module (the first one, at any depth), if any."""
        return self.definitions.get(name)

    def calls_through_helpers(self, node: cst.CSTNode, names: frozenset, fact: str, _depth: int = 0) -> bool:
        """``node`` calls one of ``names`` (canonical), or is a call of a local function whose
        body does, two levels deep at most. ``fact`` names the question (the cache key)."""
        context = self.context
        if context.call_name(node) in names:
            return True
        if _depth > 2 or not isinstance(node, cst.Call) or not isinstance(node.func, cst.Name):
            return False
        definition = self.definitions.get(node.func.value)
        if definition is None or context.call_name(node) is not None or _is_method(context, definition):
            return False
        key = (id(definition.body), fact)
        if key not in self._reaches:
            self._reaches[key] = any(self.calls_through_helpers(call, names, fact, _depth + 1)
                                     for call in context.calls_in(definition.body))
        return self._reaches[key]

    def _init_summaries(self) -> None:
        """The classes, methods and ``self.attr`` bindings summaries follow: built on first use."""
        if self._ready:
            return
        self._ready = True
        context = self.context
        self._summaries: dict[int, Summary] = {}
        self._in_progress: set[int] = set()
        self.module_defs: dict[str, cst.FunctionDef] = {}
        self.classes: dict[str, cst.ClassDef] = {}
        self.methods: dict[tuple[str, str], cst.FunctionDef] = {}
        self._class_of_def: dict[int, cst.ClassDef] = {}
        self._self_attrs: dict[tuple[str, str], list[cst.BaseExpression]] = {}
        # Every module-level def of each name with its statement index: a notebook (or a script)
        # may define the same name again in a later cell, and a call runs the def bound when it runs.
        self.module_def_history: dict[str, list[tuple[int, cst.FunctionDef]]] = {}
        for index, statement in enumerate(context.module.body):
            if isinstance(statement, cst.FunctionDef):
                self.module_defs[statement.name.value] = statement
                self.module_def_history.setdefault(statement.name.value, []).append((index, statement))
        # The scopes that declare each name ``global``, in scope order (asked of every name read).
        self._declaring_global: dict[str, list] = {}
        for scope in context.scopes.values():
            for name in scope.declared_global:
                self._declaring_global.setdefault(name, []).append(scope)
        for node, scope in context.scopes.items():
            if isinstance(node, cst.ClassDef):
                self.classes.setdefault(node.name.value, node)
            elif isinstance(node, cst.FunctionDef) and scope.parent is not None \
                    and isinstance(scope.parent.node, cst.ClassDef):
                cls = scope.parent.node
                self.methods.setdefault((cls.name.value, node.name.value), node)
                self._class_of_def[id(node)] = cls
                for inner in context.nodes_in(node.body, into_functions=True):
                    if type(inner) is cst.Assign:
                        for target in inner.targets:
                            if is_self_attribute(target.target):
                                self._self_attrs.setdefault(
                                    (cls.name.value, target.target.attr.value), []).append(inner.value)
        self.method_names = {name for _, name in self.methods}

    # Where things are ---------------------------------------------------------------------
    def line_of(self, node: cst.CSTNode) -> int | None:
        """The line of a node of this module (None for another node), computed only when a
        message needs one (walk.positions_of: one top-level statement's positions, placed by
        the stdlib tree when the engine has it). A def's line is its ``def`` line."""
        context = self.context
        where = node.name if isinstance(node, cst.FunctionDef) else node
        position = positions_of(context.module, context.source or "", [where], context.tree, context.walked)
        return position[id(where)][0] if id(where) in position else None

    def describe(self, witness: Witness) -> str:
        """``load_model() via build_agent(), line 12 -> make(), line 20``."""
        hops = []
        for label, where in witness.chain:
            line = self.line_of(where) if isinstance(where, cst.CSTNode) else where
            hops.append(f"{label}(), line {line}" if isinstance(line, int) else
                        f"{label}(), {line}" if line else f"{label}()")
        return witness.what + (" via " + " -> ".join(hops) if hops else "")

    def class_of_def(self, node: cst.CSTNode | None) -> cst.ClassDef | None:
        self._init_summaries()
        return self._class_of_def.get(id(node)) if node is not None else None

    # What an expression is, wherever it is asked --------------------------------------------
    def _values(self, name: str, where: cst.CSTNode | None) -> list[cst.BaseExpression] | None:
        """Every value bound to ``name`` as seen from def ``where``: its own bindings, else the
        module's (with the functions that assign it through ``global``); None for a parameter."""
        self._init_summaries()
        context = self.context
        if where is not None:
            scope = context.scopes.get(where)
            if scope is not None and name not in scope.declared_global:
                if name in scope.params:
                    return None
                if name in scope.assignments:
                    return [v for v in scope.assignments[name] if v is not None]
        values = [v for v in context.module_scope.assignments.get(name, []) if v is not None]
        for scope in self._declaring_global.get(name, ()):
            values.extend(v for v in scope.assignments.get(name, []) if v is not None)
        return values

    def class_of(self, expr: cst.BaseExpression, where: cst.CSTNode | None, _depth: int = 0) -> cst.ClassDef | None:
        """The class of this module ``expr`` is an instance of: ``self``, ``agent`` bound to
        ``Agent(...)``, ``self.actor`` assigned ``Actor(...)``, chains of those."""
        self._init_summaries()
        if _depth > 4:
            return None
        if isinstance(expr, cst.Name):
            if expr.value == "self":
                return self.class_of_def(where)
            values = self._values(expr.value, where) or []
        elif isinstance(expr, cst.Attribute):
            owner = self.class_of(expr.value, where, _depth + 1)
            values = self._self_attrs.get((owner.name.value, expr.attr.value), []) if owner is not None else []
        else:
            return None
        for value in values:
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in self.classes:
                return self.classes[value.func.value]
        return None

    def is_model_static(self, expr: cst.BaseExpression, where: cst.CSTNode | None) -> bool | None:
        """``expr`` holds a Keras model, wherever the walk is: True, False, or None when it is
        a parameter of ``where`` (the caller decides)."""
        self._init_summaries()
        keras = self.context.keras
        if isinstance(expr, cst.Name):
            values = self._values(expr.value, where)
            if values is None:
                return None
        elif isinstance(expr, cst.Attribute):
            owner = self.class_of(expr.value, where)
            if owner is None:
                return False
            values = self._self_attrs.get((owner.name.value, expr.attr.value), [])
            if any(self.passed_to_constructor(owner, v) for v in values):
                return True
        else:
            return False
        return any(keras.is_model_build(v) for v in values)

    def passed_to_constructor(self, owner: cst.ClassDef, value: cst.BaseExpression) -> bool:
        """``value`` (what ``__init__`` stores on ``self``) is a parameter of ``owner``'s
        ``__init__`` that a construction in this module is given a Keras model for:
        ``Agent(load_model(path))`` with ``self.model = model``."""
        init = self.methods.get((owner.name.value, "__init__"))
        if not isinstance(value, cst.Name) or init is None:
            return False
        return any(arg is not None and (self.context.keras.is_model_build(arg)
                                        or isinstance(arg, cst.Name) and self.is_model_static(arg, caller))
                   for _site, arg, caller in self._passed(init, value.value) or ())

    def parameter_given_models(self, definition: cst.FunctionDef, param: str) -> bool:
        """Every call of this module that runs ``definition`` gives its parameter ``param`` a Keras
        model (``recompile(build())``, ``evaluate(model, rows)`` with ``model = load_model(...)``),
        and there is at least one: the function works on what its callers hand it."""
        passed = self._passed(definition, param)
        if not passed:
            return False
        keras = self.context.keras
        return all(isinstance(site, cst.Call) and not any(a.star for a in site.args) and arg is not None
                   and (keras.is_model_build(arg) or isinstance(arg, cst.Name) and self.is_model_static(arg, caller))
                   for site, arg, caller in passed)

    def names_feeding(self, definition: cst.FunctionDef, call: cst.Call) -> set[str]:
        """The names ``call``'s arguments are computed from, followed through the names
        ``definition`` binds a few assignments deep (``X = pad(df[col])``; ``model.predict(X)``)."""
        context = self.context
        scope = context.scopes[definition]
        names = {n.value for arg in call.args for n in [arg.value, *context.nodes_in(arg.value)]
                 if isinstance(n, cst.Name)}
        for _ in range(4):
            more = names | {n.value for name in names for value in scope.assignments.get(name, ())
                            if value is not None for n in [value, *context.nodes_in(value)] if isinstance(n, cst.Name)}
            if more == names:
                break
            names = more
        return names

    def arguments_given(self, definition: cst.FunctionDef, param: str) -> list[cst.BaseExpression | None] | None:
        """What each call of this module that runs ``definition`` passes for ``param`` (None in
        the list: a call that passes nothing found for it); None when ``param`` is not what the
        callers pass (``_passed``)."""
        passed = self._passed(definition, param)
        if passed is None:
            return None
        return [arg if isinstance(site, cst.Call) and not any(a.star for a in site.args) else None
                for site, arg, _ in passed]

    def argument_at(self, definition: cst.FunctionDef, param: str, site: cst.CSTNode) -> cst.BaseExpression | None:
        """What the call ``site`` of ``definition`` passes for its parameter ``param`` (None: nothing
        found, the default, or a parameter the def rebinds)."""
        return next((arg for where, arg, _caller in self._passed(definition, param) or () if where is site), None)

    def parameter_ints(self, definition: cst.FunctionDef, param: str) -> list[int] | None:
        """The ints ``param`` of ``definition`` takes at every call of this module (its default
        where a call leaves it out), when every one is known; None when one is not, or nothing
        here calls the def (a library's caller decides)."""
        passed = self._passed(definition, param)
        if not passed:
            return None
        default = next(p.default for p in definition.params.params if p.name.value == param)
        found = []
        for site, arg, caller in passed:
            if not isinstance(site, cst.Call) or any(a.star for a in site.args):
                return None  # a callback, or f(*args, **kwargs): what it passes is not in sight
            value = self._int_in(arg if arg is not None else default, caller)
            if value is None:
                return None
            found.append(value)
        return found

    def _passed(self, definition: cst.FunctionDef, param: str) -> list[tuple] | None:
        """(site, the argument it passes for ``param`` or None, the def it is in) for each call of
        this module that runs ``definition``; None when ``param`` is not one of its positional
        parameters or is rebound in it (then it is not what the caller passed)."""
        scope = self.context.scopes[definition]
        names = [p.name.value for p in definition.params.params]
        if param not in names or scope.assignments.get(param):
            return None
        method = scope.parent is not None and isinstance(scope.parent.node, cst.ClassDef)
        return [(site, _argument_for(site, names, param, method) if isinstance(site, cst.Call) else None,
                 caller) for site, _loops, caller in self.call_sites(definition)]

    def _int_in(self, expr: cst.BaseExpression | None, where: cst.CSTNode | None) -> int | None:
        """The int ``expr`` stands for, read in def ``where``: a literal, or a name bound once
        there (or at module level) to one."""
        if expr is None:
            return None
        literal = int_literal(expr)
        if literal is not None or not isinstance(expr, cst.Name):
            return literal
        values = self._values(expr.value, where)
        if not values or len(values) > 1:
            return None
        return int_literal(values[0])

    # Which def a call runs -----------------------------------------------------------------
    def resolve(self, call: cst.Call, where: cst.CSTNode | None) -> tuple[str, cst.FunctionDef] | None:
        """(label, def) of this module that ``call`` runs, seen from def ``where`` (None: module level)."""
        self._init_summaries()
        func = call.func
        context = self.context
        if isinstance(func, cst.Name):
            name = func.value
            if name in context.aliases:
                return None
            if name in self.classes:
                init = self.methods.get((name, "__init__"))
                return (name, init) if init is not None else None
            definition = self._module_def_at(name, where) if name in self.module_defs \
                else self.definitions.get(name)
            if definition is None:
                return None
            home = context.scopes[definition].parent
            if home is not None and isinstance(home.node, cst.ClassDef):
                return None  # a method: a class body lends its names to no code outside it, nor to its methods
            if home is not None and any(v is not None for v in home.assignments.get(name, ())):
                return None  # `resize = tffunc(...)(resize)`: the name no longer runs the def
            local = context.scopes.get(where) if where is not None else None
            if local is not None and local is not home and name in local.assignments:
                return None  # `train, test = load_dataset()` in the caller: its own local `train`
            return name, definition
        if isinstance(func, cst.Attribute):
            if func.attr.value not in self.method_names:
                return None  # no class of this module defines a method of that name
            owner = self.class_of(func.value, where)
            if owner is None:
                return None
            method = self._method(owner, func.attr.value)
            if method is None:
                return None
            if is_self_attribute(func) and self._self_attrs.get((owner.name.value, func.attr.value)):
                return None  # `self.optimizer = self.optimizer()`: the attribute no longer runs the method
            return (code_of(func), method)
        return None

    def _module_def_at(self, name: str, where: cst.CSTNode | None) -> cst.FunctionDef | None:
        """The module-level def of ``name`` a call runs. Defined once: that def. Defined again
        later (a notebook cell redefining a helper): a call at module level runs the last def
        above it (none above: unknown); a call inside a function runs whichever is bound when that
        function runs, which the file does not say: unknown."""
        history = self.module_def_history[name]
        if len(history) == 1:
            return history[0][1]
        statement = self.context.statement
        if where is not None or statement is None:
            return None
        above = [definition for index, definition in history if index < statement]
        return above[-1] if above else None

    def _method(self, cls: cst.ClassDef, name: str, _depth: int = 0) -> cst.FunctionDef | None:
        found = self.methods.get((cls.name.value, name))
        if found is not None or _depth > 3:
            return found
        for base in cls.bases:  # a base class of this module
            if isinstance(base.value, cst.Name) and base.value.value in self.classes:
                found = self._method(self.classes[base.value.value], name, _depth + 1)
                if found is not None:
                    return found
        return None

    # Summaries -----------------------------------------------------------------------------
    def summary(self, definition: cst.FunctionDef, _depth: int = 0) -> Summary:
        self._init_summaries()
        key = id(definition)
        cached = self._summaries.get(key)
        if cached is not None:
            return cached
        if key in self._in_progress or _depth > MAX_DEPTH:
            return _EMPTY  # a cycle closes here, or too deep: nothing known
        self._in_progress.add(key)
        try:
            result = self._summarise(definition, _depth)
        finally:
            self._in_progress.discard(key)
        if _depth == 0 or result.effects or result.param_predicts:
            self._summaries[key] = result
        return result

    def _summarise(self, definition: cst.FunctionDef, depth: int) -> Summary:
        context = self.context
        params = [p.name.value for p in all_params(definition.params)]
        if context.tracing.is_traced_def(definition) or any(
                is_cache_decorator(dotted_name(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator))
                for d in definition.decorators):
            return Summary({}, {}, params)
        nodes = context.nodes_in(definition.body)
        skipped = self.guarded(definition)  # under a cache guard or inside a fresh graph
        calls = [n for n in nodes if isinstance(n, cst.Call) and id(n) not in skipped]
        # A predict in a loop of this body is that loop's finding, not its callers'.
        looped = {id(n) for loop in nodes if isinstance(loop, (cst.For, cst.While)) for n in context.nodes_in(loop)}
        # Code written for both modes (`if tf.executing_eagerly():`) builds no graph in TF2.
        dual_mode = any(context.call_name(c) == "tensorflow.executing_eagerly" for c in calls)
        effects: dict[str, Witness] = {}
        param_predicts: dict[str, Witness] = {}
        closes = any(isinstance(n, cst.Attribute) and n.attr.value == "close" for n in nodes)
        keras, sessions = context.keras, context.sessions
        for call in calls:
            name = context.call_name(call)
            what = code_of(call.func) + "()"
            func = call.func
            if MODEL not in effects and self._builds_model(call, name):
                effects[MODEL] = Witness(what)
            if isinstance(func, cst.Attribute) and call.args:
                method = func.attr.value
                if method == "predict" and id(call) not in looped and self.resolve(call, definition) is None:
                    model = self.is_model_static(func.value, definition)
                    if model and PREDICT not in effects:
                        effects[PREDICT] = Witness(what)
                    elif model is None and isinstance(func.value, cst.Name):
                        param_predicts.setdefault(func.value.value, Witness(what))
                elif method in _FIT_METHODS and FIT not in effects and self.is_model_static(func.value, definition):
                    effects[FIT] = Witness(what)
                elif method in STORING_METHODS and SESSION not in effects and any(
                        sessions.is_session_creation(a.value) for a in call.args):
                    effects[SESSION] = Witness(code_of(call.args[0].value.func) + "()")  # type: ignore[attr-defined]
            if OPS not in effects and not dual_mode and sessions.creates_graph_ops(call) and self.graph_mode():
                effects[OPS] = Witness(what)
            if RUNS_SESSION not in effects and sessions.is_session_run(call):
                effects[RUNS_SESSION] = Witness(what)
            if name == "tensorflow.InteractiveSession" and not closes and SESSION not in effects:
                effects[SESSION] = Witness(what)
            if name == "tensorflow.function" and TF_FUNCTION not in effects:
                effects[TF_FUNCTION] = Witness(what)
        for node in nodes:
            if isinstance(node, cst.Return) and node.value is not None and RETURNS_SESSION not in effects:
                value = node.value
                if isinstance(value, cst.Name):
                    bound = (self._values(value.value, definition) or [])
                    value = next((v for v in bound if sessions.is_session_creation(v)), value)
                if sessions.is_session_creation(value) and not closes:
                    effects[RETURNS_SESSION] = Witness(code_of(value.func) + "()")  # type: ignore[attr-defined]
            if isinstance(node, cst.Return) and node.value is not None and RETURNS_MODEL not in effects \
                    and self.context.keras.predict_builds_per_call:
                value = node.value  # what the tables tell other modules (project.py); here, keras follows the factory
                if isinstance(value, cst.Name):
                    value = next((v for v in self._values(value.value, definition) or [] if isinstance(v, cst.Call)
                                  and self._builds_model(v, self.context.call_name(v))), value)
                if isinstance(value, cst.Call) and self._builds_model(value, self.context.call_name(value)):
                    effects[RETURNS_MODEL] = Witness(definition.name.value + "()")
        # Through the calls this body makes.
        for call in calls:
            target = self.resolve(call, definition)
            if target is None:
                found = self.project_summary(call, definition)
                if found is None:
                    continue
                for kind, witness in found.items():
                    if not (kind == OPS and dual_mode) and kind not in RETURNED:
                        effects.setdefault(kind, witness)
                continue
            label, callee = target
            if callee is definition:
                continue
            sub = self.summary(callee, depth + 1)
            for kind, witness in sub.effects.items():
                if kind == PREDICT and id(call) in looped or kind == OPS and dual_mode:
                    continue
                if kind not in effects and kind not in RETURNED:
                    effects[kind] = witness.via(label, callee)
            for param, witness in sub.param_predicts.items():
                arg = _argument_for(call, sub.params, param, method=self.class_of_def(callee) is not None)
                if arg is None:
                    continue
                model = self.is_model_static(arg, definition)
                if model and PREDICT not in effects:
                    effects[PREDICT] = witness.via(label, callee)
                elif model is None and isinstance(arg, cst.Name):
                    param_predicts.setdefault(arg.value, witness.via(label, callee))
        undoes = {MODEL: keras.clears_session, OPS: sessions.resets_graph}  # UNDONE_BY, through helpers
        for kind in UNDONE_BY:
            if kind in effects and any(undoes[kind](c) for c in calls):
                del effects[kind]  # the helper cleans up after itself
        return Summary(effects, param_predicts, params)

    def graph_mode(self) -> bool:
        """TF ops built here go into a TF1 graph: this module builds TF1 graphs (sessions,
        placeholders, eager turned off), runs sessions or imports ``tensorflow.compat.v1``, or,
        in the command, the linted project does (project.py: TF1 graph mode of the project)."""
        if self._graph_mode is None:
            context = self.context
            project = getattr(context, "project", None) or {}
            self._graph_mode = bool(
                context.sessions.builds_tf1_graph or project.get("__graph_mode__")
                or "tensorflow.compat.v1" in context.aliases.values()
                or any(context.sessions.is_session_run(call) for call, _ in self._calls))
        return self._graph_mode

    def guarded(self, definition: cst.CSTNode) -> set[int]:
        """Ids of the nodes of ``definition`` (a def, or the module's own code) that run once, not
        per call: under a cache test (``if model is None:``, ``if k not in cache:``, ``if "model" not
        in st.session_state:``) or in a fresh graph (``with g.as_default():``)."""
        key = id(definition)
        found = self._guarded.get(key)
        if found is None:
            found = set()
            fresh_graph = self.context.sessions.def_makes_fresh_graph
            body = definition if isinstance(definition, cst.Module) else getattr(definition, "body", definition)
            latches = self._latches(definition)
            for node in self.context.nodes_in(body):
                kind = type(node)
                if (kind is cst.If and (_is_cache_test(node.test) or _latch_tested(node.test) in latches)) or (
                        kind is cst.With and any(fresh_graph(item.item, definition) for item in node.items)):
                    found.update(id(n) for n in self.context.nodes_in(node.body))
            if isinstance(definition, cst.FunctionDef) and isinstance(definition.body, cst.IndentedBlock):
                statements = definition.body.body
                # `if model is not None: return model` first: what follows runs to fill the cache.
                first = next((i for i, statement in enumerate(statements) if _returns_when_filled(statement)), None)
                for statement in statements[first + 1:] if first is not None else ():
                    found.add(id(statement))
                    found.update(id(n) for n in self.context.nodes_in(statement))
            self._guarded[key] = found
        return found

    def _latches(self, definition: cst.CSTNode) -> frozenset[str]:
        """Attributes of the class ``definition`` is a method of that only ``__init__`` and the
        branches testing them set: ``if self.done == 0: ...; self.done = 1`` (a flag), ``if
        self.dim != dim: self.dim = dim; rebuild()`` (a value). Such a branch runs once, or once
        per distinct value, not on every call; an attribute set anywhere else (a countdown reset
        in another method, ``self.wait -= 1``) is no latch."""
        cls = _home_class(self.context, definition) if isinstance(definition, cst.FunctionDef) else None
        if cls is None:
            return frozenset()
        found = self._latch_attributes.get(id(cls))
        if found is not None:
            return found
        nodes_in = self.context.nodes_in
        sets: dict[str, list[tuple[str, cst.CSTNode]]] = {}
        stepped: set[str] = set()
        latched: dict[str, set[int]] = {}  # attribute -> ids of the assignments its own tests guard
        for method in cls.body.body:
            if not isinstance(method, cst.FunctionDef):
                continue
            for node in nodes_in(method, into_functions=True):
                if isinstance(node, cst.Assign):
                    for target in node.targets:
                        name = _self_attribute(target.target)
                        if name is not None:
                            sets.setdefault(name, []).append((method.name.value, node))
                elif isinstance(node, cst.AugAssign) and _self_attribute(node.target) is not None:
                    stepped.add(_self_attribute(node.target))  # type: ignore[arg-type]
                elif isinstance(node, cst.If):
                    name = _latch_tested(node.test)
                    if name is not None:
                        latched.setdefault(name, set()).update(
                            id(n) for n in nodes_in(node.body, into_functions=True) if isinstance(n, cst.Assign))
        found = self._latch_attributes[id(cls)] = latches_among(sets, stepped, latched)
        return found

    def _builds_model(self, call: cst.Call, name: str | None) -> bool:
        keras = self.context.keras
        if name is not None:
            return keras.is_model_build(call) and not keras.is_view_model(call)
        return isinstance(call.func, cst.Name) and call.func.value in keras.model_classes

    def project_summary(self, call: cst.Call, where: cst.CSTNode | None = None) -> dict[str, Witness] | None:
        """Effects of a function of another module of the linted project (CLI only): ``func()``,
        ``module.func()``, ``Agent()``, and ``agent.act()`` / ``self.agent.act()`` on an instance
        of a class imported from the project, seen from def ``where`` (default: the current one)."""
        table = getattr(self.context, "project", None)
        if not table:
            return None
        dotted = dotted_name(call.func)  # None for self.agent.act(): only the instance's class names it
        entry = table.get(dotted) if dotted and self._imported_here(dotted, table) else None
        if not entry and isinstance(call.func, cst.Attribute):
            if where is None and self.context.function is not None:
                where = self.context.function.node
            cls = self._project_class_of(call.func.value, where, table)
            entry = table.get(f"{cls}.{call.func.attr.value}") if cls else None
        if not entry:
            return None
        return {kind: Witness(what, tuple((label, where) for label, where in chain))
                for kind, (what, chain) in entry.items()}

    def project_callers(self, cls: str, method: str) -> list[tuple[str, str, int, bool]]:
        """Where other modules of the linted project call ``cls.method`` (the project's method
        index, project.py: methods only one class of the project defines): (caller, file name,
        line, in a loop of the caller). Command only; empty in the flake8 plugin."""
        table = getattr(self.context, "project", None) or {}
        sites = (table.get(METHOD_CALLERS) or {}).get(f"{cls}.{method}") or ()
        return [(caller, filename, line, bool(looped)) for caller, filename, line, looped in sites]

    def _project_class_of(self, expr: cst.BaseExpression, where: cst.CSTNode | None,
                          table: dict[str, Any]) -> str | None:
        """The name (as this module calls it) of the project class ``expr`` is an instance of:
        ``agent`` bound to ``Agent(...)``, ``self.agent`` assigned ``agents.Agent(...)``."""
        self._init_summaries()
        if isinstance(expr, cst.Name):
            values = self._values(expr.value, where) or []
        elif is_self_attribute(expr) and (owner := self.class_of_def(where)) is not None:
            values = self._self_attrs.get((owner.name.value, expr.attr.value), [])  # type: ignore[attr-defined]
        else:
            return None
        for value in values:
            name = dotted_name(value.func) if isinstance(value, cst.Call) else None
            if name and self._imported_here(name, table) and any(key.startswith(name + ".") for key in table):
                return name
        return None

    def _imported_here(self, dotted: str, table: dict[str, Any]) -> bool:
        """``dotted`` starts with a name this module imports (a project one, for a relative import)."""
        head = dotted.split(".")[0]
        return head in self.context.aliases or head in table.get("__relative__", ())

    def possible(self, kind: str) -> bool:
        """A cheap test, once per module and effect: could any function of this module (or of the
        project table) have ``kind``? Spares resolving every call of modules that cannot."""
        found = self._possible.get(kind)
        if found is None:
            project = getattr(self.context, "project", None) or {}
            if any(not key.startswith("__") for key in project):
                found = True
            else:
                context = self.context
                names = self._names
                if names is None:
                    names = self._names = {context.call_name(call) for call, _ in self._calls}
                if kind == MODEL:
                    found = bool(names & KERAS_MODEL_BUILDERS or context.keras.model_classes
                                 or any(n and n.startswith(KERAS_APPLICATIONS + ".") for n in names))
                elif kind == PREDICT:
                    found = any(isinstance(c.func, cst.Attribute) and c.func.attr.value == "predict"
                                for c, _ in self._calls)
                elif kind in (SESSION, RETURNS_SESSION):
                    found = bool(names & SESSION_CLASSES)
                elif kind == OPS:
                    found = self.graph_mode()
                else:
                    found = True
            self._possible[kind] = found
        return found

    # Who calls a def --------------------------------------------------------------------------
    def call_sites(self, definition: cst.FunctionDef) -> list[tuple[cst.CSTNode, list, cst.FunctionDef | None]]:
        """Where this module runs ``definition``: (the call, the loops open around it in its own
        function, the def it is in or None at module level). A method or function handed as a
        ``*callback*`` argument (``minimize(step_callback=self._on_step)``) counts as called there,
        the argument standing for the call."""
        if self._sites is None:
            self._sites = {}
            context = self.context
            owners: list[cst.CSTNode] = [context.module] + [n for n in context.scopes if isinstance(n, cst.FunctionDef)]
            for owner in owners:
                where = owner if isinstance(owner, cst.FunctionDef) else None
                stack: list[tuple[cst.CSTNode, tuple]] = [(child, ()) for child in reversed(children(owner))]
                while stack:
                    node, loops = stack.pop()
                    if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                        continue
                    if isinstance(node, cst.Call):
                        self._add_site(node, node, loops, where)
                        for arg in node.args:
                            if arg.keyword is not None and "callback" in arg.keyword.value \
                                    and isinstance(arg.value, (cst.Name, cst.Attribute)):
                                self._add_site(cst.Call(func=arg.value), arg, loops, where)
                    inner = loops + (node,) if isinstance(node, (cst.For, cst.While)) else loops
                    stack.extend((child, inner) for child in reversed(children(node)))
        return self._sites.get(id(definition), [])

    def _add_site(self, call: cst.Call, site: cst.CSTNode, loops: tuple, where: cst.FunctionDef | None) -> None:
        try:
            target = self.resolve(call, where)
        except KeyError:  # a def outside this module's scopes
            return
        if target is not None:
            self._sites.setdefault(id(target[1]), []).append((site, list(loops), where))  # type: ignore[union-attr]

    # The question rules ask at a call site ---------------------------------------------------
    def reach(self, call: cst.Call, kind: str) -> tuple[str, Witness] | None:
        """(callee label, witness) when ``call`` runs a function that has effect ``kind``."""
        if not isinstance(call, cst.Call) or not self.possible(kind):
            return None
        frame = self.context.function
        where = frame.node if frame is not None else None
        target = self.resolve(call, where)
        if target is None:
            found = self.project_summary(call)
            if found and kind in found:
                return code_of(call.func), found[kind]
            return None
        label, callee = target
        sub = self.summary(callee)
        witness = sub.effects.get(kind)
        if witness is not None:
            return label, witness.via(label, callee)
        if kind == PREDICT:
            keras = self.context.keras
            for param, witness in sub.param_predicts.items():
                arg = _argument_for(call, sub.params, param, method=self.class_of_def(callee) is not None)
                if arg is not None and (keras.is_model(arg) or self.is_model_static(arg, where)):
                    return label, witness.via(label, callee)
        return None


def is_cache_decorator(dotted: str | None) -> bool:
    """A memoising decorator, by the last part of its name (``functools.lru_cache``, ``cache``,
    ``cached_property``...): the body of a def under one runs once per key, not per call."""
    return bool(dotted) and dotted.rsplit(".", 1)[-1] in CACHE_DECORATORS  # type: ignore[union-attr]


def _is_cache_test(test: cst.BaseExpression) -> bool:
    """``x is None``, ``not x``, ``k not in cache``, ``not hasattr(...)``: a build guarded by one
    of these runs once, not on every call."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return True
    if isinstance(test, cst.Comparison):
        return any(isinstance(c.operator, (cst.Is, cst.NotIn, cst.In, cst.Equal))
                   and (not isinstance(c.operator, (cst.Is, cst.Equal))
                        or (isinstance(c.comparator, cst.Name) and c.comparator.value == "None"))
                   for c in test.comparisons)
    if isinstance(test, cst.BooleanOperation):
        return _is_cache_test(test.left) or _is_cache_test(test.right)
    return False


def latches_among(sets: dict[str, list[tuple[str, Any]]], stepped: set[str],
                  latched: dict[str, set[int]]) -> frozenset[str]:
    """The latch attributes of a class, from what its methods do to ``self`` attributes (both
    trees collect these, FunctionFacts._latches and project.py): ``sets`` attribute -> (method,
    assignment) pairs, ``stepped`` the attributes augmented anywhere, ``latched`` attribute -> ids
    of the assignments under its own tests. A latch is set under its own test, and elsewhere only
    in ``__init__``."""
    return frozenset(name for name, guarded in latched.items() if name not in stepped
                     and any(id(node) in guarded for _, node in sets.get(name, ()))
                     and all(method == "__init__" or id(node) in guarded for method, node in sets.get(name, ())))


def _self_attribute(node: cst.CSTNode) -> str | None:
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
        return node.attr.value
    return None


def _latch_tested(test: cst.BaseExpression) -> str | None:
    """X for ``self.X == v`` or ``v != self.X`` (one comparison): the test of a latch."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1 \
            or not isinstance(test.comparisons[0].operator, (cst.Equal, cst.NotEqual)):
        return None
    return _self_attribute(test.left) or _self_attribute(test.comparisons[0].comparator)


def _home_class(context: TFContext, definition: cst.FunctionDef) -> cst.ClassDef | None:
    """The class whose body holds ``definition``, if it is a method."""
    scope = context.scopes.get(definition)
    home = scope.parent if scope is not None else None
    return home.node if home is not None and isinstance(home.node, cst.ClassDef) else None


def _is_method(context: TFContext, definition: cst.FunctionDef) -> bool:
    """A def of a class body: no bare name calls it."""
    return _home_class(context, definition) is not None


def _is_filled_test(test: cst.BaseExpression) -> bool:
    """``x is not None``, ``k in cache``, ``self.model``, ``hasattr(...)``: true once a cache is
    filled (the negation of ``_is_cache_test``)."""
    if isinstance(test, (cst.Name, cst.Attribute)):
        return True
    if isinstance(test, cst.Call):
        return dotted_name(test.func) == "hasattr"
    if isinstance(test, cst.Comparison):
        return all(isinstance(c.operator, cst.In) or (isinstance(c.operator, cst.IsNot) and isinstance(
            c.comparator, cst.Name) and c.comparator.value == "None") for c in test.comparisons)
    if isinstance(test, cst.BooleanOperation):
        return _is_filled_test(test.left) and _is_filled_test(test.right)
    return False


def _returns_when_filled(statement: cst.CSTNode) -> bool:
    """``if <filled test>: ... return`` with no ``else``: the lazy loader's early return."""
    if not isinstance(statement, cst.If) or statement.orelse is not None or not _is_filled_test(statement.test):
        return False
    body = statement.body.body
    last = body[-1] if body else None
    return isinstance(last, cst.Return) or (isinstance(last, cst.SimpleStatementLine)
                                            and any(isinstance(s, cst.Return) for s in last.body))


def _argument_for(call: cst.Call, params: list[str], param: str, method: bool) -> cst.BaseExpression | None:
    """The argument ``call`` passes for ``param`` (``self`` skipped for a method)."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == param:
            return arg.value
    positional = params[1:] if method and params and params[0] in ("self", "cls") else params
    if param not in positional:
        return None
    index = positional.index(param)
    plain = [a for a in call.args if a.keyword is None]
    if any(a.star for a in plain):
        return None
    return plain[index].value if index < len(plain) else None
