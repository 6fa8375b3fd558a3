"""How often a def runs, read from what calls it: the repetition of a place whose loop is
somewhere else.

A function that loads a model, or defines a ``tf.function``, pays that cost on every call; the
loop that makes it a leak is in its caller (``for row in rows: embed(row)``, with ``embed``
loading the encoder), or in whoever calls an entry point a class offers to be called again and
again (``predict``, ``__call__``, ``act`` of a class that holds a model). Rules that report such
a place feed every call of the walk to ``observe`` (the repetition of a call site is read from
the walk position) and ask ``repetition_of_def`` after the walk (``leave_Module``).

Calls resolve as the function summaries resolve them (facts/functions.py ``resolve``:
``helper()``, ``self.method()``, ``obj.method()`` on an instance of a class of this module); a
method name that one class of the module alone defines (``self.model.action_value(obs)``, the
model passed to a constructor) resolves to it too, as an inference.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import libcst as cst

from tf_memlint.evidence import (COUNT, GROWS, ONCE, PER_REQUEST, SMALL, UNKNOWN, Repetition, repetition_at,
                                 _event)
from tf_memlint.facts.events import repetition as event_repetition
from tf_memlint.syntax import code_of, dotted_name

if TYPE_CHECKING:
    from tf_memlint.context import TFContext

# Methods a class offers to be called once per input: per request in a server, per step in an
# agent, per sample in a scoring loop. A leading underscore is a private spelling of the same.
ENTRY_POINTS = frozenset({"predict", "classify", "encode", "embed", "act", "step", "detect", "infer",
                          "inference", "recognize", "transcribe", "translate", "get_action", "choose_action",
                          "select_action", "predict_one", "predict_image", "segment"})
# Method names too common to stand for one class of the module (a library's object has them too).
COMMON_METHODS = frozenset({"__init__", "__call__", "call", "run", "get", "set", "update", "reset", "close",
                             "save", "load", "build", "compile", "fit", "evaluate", "train", "test", "predict",
                             "append", "add", "read", "write", "open", "start", "stop", "step", "forward",
                             "apply", "process", "render", "sample", "transform", "encode", "decode", "act"})
_ORDER = ("unbounded", "per request", "per step", "per item", "per callback", COUNT, UNKNOWN, SMALL)
MAX_HOPS = 3  # callers followed above the def
SMALL_COUNT = 10  # a loop known to run fewer times is a few calls, not a repetition


@dataclass(frozen=True)
class _Site:
    call: cst.Call
    repetition: Repetition
    caller: cst.CSTNode | None  # the def the call is in (None: module level)


class CallerFacts:
    """Call sites of this module's defs, with the repetition of each site."""

    def __init__(self, context: TFContext) -> None:
        self.context = context
        self._seen: set[int] = set()
        self._sites: dict[int, list[_Site]] = {}
        self._by_method: dict[str, list[cst.FunctionDef]] | None = None

    def observe(self, call: cst.Call) -> None:
        """Record ``call`` (at the walk position) if it runs a def of this module."""
        if id(call) in self._seen:
            return
        self._seen.add(id(call))
        context = self.context
        frame = context.function
        where = frame.node if frame is not None else None
        target = self._target(call, where)
        if target is None:
            return
        if context.in_traced_function:
            repetition = Repetition(ONCE)  # traced once: its calls do not repeat in Python
        elif where is not None and id(call) in context.functions.guarded(where):
            return  # `if self.model is None: self.model = load()`: once, whoever calls `where`
        else:
            repetition = repetition_at(context, call)
            if repetition.kind == COUNT and repetition.count is not None and repetition.count < SMALL_COUNT:
                repetition = Repetition(SMALL, repetition.count, repetition.basis)
        self._sites.setdefault(id(target), []).append(_Site(call, repetition, where))

    def _target(self, call: cst.Call, where: cst.CSTNode | None) -> cst.FunctionDef | None:
        functions = self.context.functions
        found = functions.resolve(call, where)
        if found is not None:
            return found[1]
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value not in COMMON_METHODS \
                and not func.attr.value.startswith("__"):
            candidates = self._methods().get(func.attr.value, [])
            if len(candidates) == 1 and dotted_name(func.value) not in self.context.aliases:
                return candidates[0]
        return None

    def _methods(self) -> dict[str, list[cst.FunctionDef]]:
        if self._by_method is None:
            functions = self.context.functions
            functions.class_of_def(None)  # builds the method table
            self._by_method = {}
            for (_, name), definition in functions.methods.items():
                self._by_method.setdefault(name, []).append(definition)
        return self._by_method

    def called_by_script(self, definition: cst.FunctionDef) -> bool:
        """This module's top-level code (the script's own body, ``if __name__ == "__main__":``
        included) calls ``definition`` (observed calls only)."""
        return any(site.caller is None for site in self._sites.get(id(definition), ()))

    def called_here(self, definition: cst.FunctionDef) -> bool:
        """Some observed call of this module runs ``definition``."""
        return bool(self._sites.get(id(definition)))

    def holds_model(self, cls: cst.ClassDef, is_model_value) -> bool:
        """``cls`` is a Keras model, or one of its methods binds ``self.<attr>`` to a value that
        ``is_model_value`` says is a model (built, loaded)."""
        context = self.context
        if cls.name.value in context.keras.model_classes:
            return True
        functions = context.functions
        functions.class_of_def(None)
        return any(owner == cls.name.value and any(is_model_value(v) for v in values)
                   for (owner, _), values in functions._self_attrs.items())

    def repetition_of_def(self, definition: cst.FunctionDef, is_model_value=None,
                          _hops: int = 0, entry_points: bool = True) -> Repetition | None:
        """How often one call of ``definition`` repeats: the event it handles (a route, a
        servicer method), the repeated call sites that run it (followed up to ``MAX_HOPS``
        callers), or the entry point of a class holding a model (unless ``entry_points`` is
        False: a rule whose claim needs more than the name says); None when nothing says."""
        context = self.context
        scope = context.scopes.get(definition)
        parent = scope.parent.node if scope is not None and scope.parent is not None else None
        cls = parent if isinstance(parent, cst.ClassDef) else None
        event = event_repetition(context, definition, cls)
        if event is not None:
            return _event(event, definition)
        found: list[Repetition] = []
        name = definition.name.value
        for site in self._sites.get(id(definition), ()):
            line = context.functions.line_of(site.call)
            where = f"line {line}" if line else "this module"
            repetition = site.repetition
            if repetition.kind == ONCE:
                if site.caller is None or _hops >= MAX_HOPS or not isinstance(site.caller, cst.FunctionDef) \
                        or site.caller is definition:
                    continue
                above = self.repetition_of_def(site.caller, is_model_value, _hops + 1, entry_points)
                if above is None:
                    continue
                repetition = above
                where = f"{where}, in {site.caller.name.value}()"
            head = repetition.basis or repetition.words()
            basis = f"{head}; {name}() called at {where}"
            found.append(replace(repetition, basis=basis))  # a folder's files stay a folder's
        if entry_points and cls is not None and (name == "__call__" or name.lstrip("_") in ENTRY_POINTS) \
                and is_model_value is not None:
            # ``predict`` of any class names inference; ``__call__`` alone is every callable's
            # protocol (a data loader's ``__call__`` builds its one dataset per split).
            holder = self.holds_model(cls, is_model_value)
            if holder or name != "__call__":
                kind = "a class holding a model" if holder else "a class"
                found.append(Repetition(PER_REQUEST, basis=f"{name}() of {kind}, called once per input", known=holder))
        return _most_telling(found)


def name_only(repetition: Repetition, unseen: str) -> Repetition:
    """A per-input repetition that only an entry point's name gives (its callers out of sight),
    for a claim that needs more than the name: no evidence of repetition, graded as a loop nobody
    can size. ``unseen``: what is not in sight."""
    return Repetition(UNKNOWN, basis=f"{repetition.basis}; {unseen} not in sight", known=False, unsized_loop=True)


def takes_input(definition: cst.FunctionDef) -> bool:
    """A parameter besides ``self``/``cls``: something to be called once per."""
    params = definition.params
    named = [p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)]
    return any(n not in ("self", "cls") for n in named) or isinstance(params.star_arg, cst.Param)


def _most_telling(found: list[Repetition]) -> Repetition | None:
    if not found:
        return None

    def rank(r: Repetition) -> tuple:
        return (_ORDER.index(r.kind) if r.kind in _ORDER else len(_ORDER), not r.known, -(r.count or 0))
    if any(r.kind in GROWS and r.known for r in found):
        found = [r for r in found if r.kind in GROWS and r.known]
    return min(found, key=rank)


def node_words(node: cst.CSTNode) -> str:
    text = code_of(node)
    return text if len(text) <= 40 else text[:37] + "..."
