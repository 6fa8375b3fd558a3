"""TFM403 model-in-loop-without-clear-session: a Keras model built or loaded per iteration (or per request
or callback event) without clear_session()."""

from __future__ import annotations

import dataclasses

import libcst as cst

from tf_memlint.facts.functions import MODEL, RETURNS_MODEL
from tf_memlint.evidence import PER_EPOCH, PER_ITEM, PER_STEP, SMALL, UNBOUNDED, UNKNOWN, Repetition, one_sample, repetition_at
from tf_memlint.facts.keras import MODEL_BUILD_TRIGGERS
from tf_memlint.facts.events import TRIAL
from tf_memlint.facts.repetition import (first_time, open_loops_run_fewer_than,
                                         runs_fewer_than_counting_splitters, where_repeated)
from tf_memlint.gate import REPEATED, Inside
from tf_memlint.rule import Rule, register
from tf_memlint.syntax import code_of, target_names
from tf_memlint.walk import walk


@register
class ModelInLoopWithoutClearSession(Rule):
    """Building or loading a Keras model on every iteration of a loop without ``clear_session()``.

    Bad::

        for units in candidate_units:          # a hyper-parameter search
            model = keras.Sequential([keras.layers.Dense(units), keras.layers.Dense(1)])
            model.compile("adam", "mse")
            model.fit(x, y, epochs=1)

    Good::

        for units in candidate_units:
            keras.backend.clear_session()
            model = keras.Sequential([keras.layers.Dense(units), keras.layers.Dense(1)])
            model.compile("adam", "mse")
            model.fit(x, y, epochs=1)

    ``clear_session()`` frees what building a model leaves in Keras's global state; it does not
    stop the memory that compile+fit leaks per model (measured: still about 3.8 MiB each).
    Silent when each model is kept on purpose (appended to a list: an ensemble), for sub-models
    composed inside a Keras class, and for loops known to run fewer than
    ``model_loop_min_iterations`` times.
    """

    code = "TFM403"
    reaches_across_modules = True  # its reach path: _through_call

    name = "model-in-loop-without-clear-session"
    summary = "Keras model built or loaded in a loop with no keras.backend.clear_session()"
    triggers = MODEL_BUILD_TRIGGERS
    # a build in a loop or a request/batch handler, or in a function one calls (_through_call),
    # or, in the command, a call there of another module's function that builds one
    structure = Inside(REPEATED, MODEL_BUILD_TRIGGERS | {MODEL})
    options = {
        "model_loop_min_iterations": (
            10, "loops known to run fewer times than this (e.g. over a 3-item list) are not reported"),
    }

    def __init__(self, context, settings) -> None:
        super().__init__(context, settings)
        self._reach_places: set[int] = set()  # loops and handlers reported through a call
        self._layers: set[int] = set()  # model builds called at once as a layer

    def visit_Call(self, node: cst.Call) -> None:
        context = self.context
        if isinstance(node.func, cst.Call):
            self._layers.add(id(node.func))  # `block(...)(x)`: visited before the call it makes
        if context.in_traced_function or not context.keras.is_model_build(node) or _cached_factory(context, node):
            self._through_call(node)  # a function that builds one, called per iteration/request
            return
        if id(node) in self._layers or context.keras.is_view_model(node):
            # Called on a tensor where it is built, the model is a block of the model being
            # built (a residual block per level); a view over a model's tensors has no weights.
            return
        loops = context.loops_running(node)
        if not loops:
            self._in_handler(node)  # per request / per batch (facts/events.py)
            return
        if self._exempt(node, loops, loops[-1], through_call=False):
            return
        fit = _fit_of_what_it_builds(context, node, loops[-1])
        if fit is None:
            frame = context.function
            target = context.functions.resolve(node, frame.node if frame is not None else None)
            trained = target is not None and _def_trains(context, target[1])  # a factory that fits
        else:
            trained = not (fit.args and one_sample(context, fit.args[0].value))
        self.report(node, f"{code_of(node.func)}() builds a Keras model on every iteration without "
                          f"keras.backend.clear_session(): each model's state stays alive; call "
                          f"clear_session() at the top of the loop (it does not stop the compile+fit leak)",
                    repetition=_training_runs(context, node, loops[-1]) if trained else None)

    def _exempt(self, node: cst.Call, loops: list, where: cst.CSTNode, through_call: bool) -> bool:
        """The exemptions of every path: the Keras state is cleared on each repetition, the loops
        are short, each model is kept on purpose, or the model is a part of a Keras class."""
        context = self.context
        limit = self.settings["model_loop_min_iterations"]
        if loops:
            if any(context.keras.loop_clears_session(loop) for loop in loops):
                return True
            # Two measures of "short" (splitters counted in-file only; through a call, the loops
            # open at the call): kept apart so that findings do not change with this layout.
            if open_loops_run_fewer_than(context, limit) if through_call \
                    else runs_fewer_than_counting_splitters(context, loops, limit):
                return True
            # An ensemble: every model is meant to stay alive. Through a call, only when the
            # function returns a model (what else it returns may be kept without one).
            if context.keras.is_kept(node, loops[-1]) and not (through_call and _returns_no_model(context, node)):
                return True
        elif any(context.keras.clears_session(c) for c in context.calls_in(where)):
            return True  # the handler clears the Keras state itself
        owner = context.enclosing_class
        return owner is not None and owner.name.value in context.keras.layer_classes  # sub-models

    def _through_call(self, node: cst.Call) -> None:
        """A call whose function builds or loads a Keras model, run per iteration/request."""
        context = self.context
        if not context.functions.possible(MODEL) or context.keras.is_model_build(node):
            return  # the rule's own test covers factories that return a model
        place = where_repeated(context, node)
        if place is None:
            return
        found = context.functions.reach(node, MODEL)
        if found is None:
            return
        where, per = place
        loops = context.loops_running(node)
        if self._exempt(node, loops, where, through_call=True) or not first_time(self._reach_places, where):
            return
        label, witness = found
        if _loaded_in_this_module(witness) and not self._one_model_per_pass(witness, node, loops):
            return  # TFM408 reports the load itself, where the fix goes: load once and reuse
        chain = context.functions.describe(witness)
        home = witness.chain[-1][1] if witness.chain else None  # the def of this module that builds
        trained = isinstance(home, cst.FunctionDef) and _def_trains(context, home)
        if loops:
            advice = "build it once before the loop, or call clear_session() at the top of the loop"
            repetition = _training_runs(context, node, loops[-1]) if trained else None
        elif trained:  # the request's product: "build it once" cannot apply
            advice = "call keras.backend.clear_session() when the request is done"
            repetition = _TRAINING_ENDPOINT
        else:
            advice = "build or load it once (at import or start-up) and reuse it"
            repetition = None
        self.report(node, f"{label}() builds or loads a Keras model {per} (calls {chain}); each model's "
                          f"state stays alive; {advice}", repetition=repetition)

    def _one_model_per_pass(self, witness, node: cst.Call, loops: list) -> bool:
        """The def called here loads (``witness``: itself, no hop between) a model whose path this
        call's one loop changes on each pass: a different model per pass, which TFM408 leaves to
        this rule."""
        return len(witness.chain) == 1 and self.context.keras.loads_a_model_per_pass(witness.chain[-1][1], node, loops)

    def _in_handler(self, node: cst.Call) -> None:
        """A model built or loaded directly in a request handler or a callback hook."""
        context = self.context
        if context.open_loops:
            return
        place = where_repeated(context, node)
        if place is None:
            return
        where, per = place
        if self._exempt(node, [], where, through_call=False) or not first_time(self._reach_places, where):
            return
        if context.repeated_scope == TRIAL:
            if _returns_what_it_builds(context, node, where):
                return  # `return {"loss": ..., "model": net}`: the search keeps every model on purpose
            # A search's objective builds and fits its model by design: what it must not do is
            # keep every trial's Keras state in the one process the search runs in.
            self.report(node, f"{code_of(node.func)}() builds a Keras model per trial without "
                              f"keras.backend.clear_session(): every trial's model state stays alive; call "
                              f"clear_session() at the start of the objective")
            return
        if _fit_of_what_it_builds(context, node, where) is not None:
            # A training endpoint (`/retrain`, a forecast fitted to the posted series): the model
            # is what the request asks for, so "build it once" cannot apply, and such endpoints
            # are called now and then; what stays is the Keras state of each model.
            self.report(node, f"{code_of(node.func)}() builds a Keras model {per} and trains it there: each "
                              f"model's state stays alive; call keras.backend.clear_session() when the "
                              f"request is done",
                        repetition=Repetition(SMALL, basis="a training endpoint: each request fits its own "
                                                           "model", known=False))
            return
        self.report(node, f"{code_of(node.func)}() builds or loads a Keras model {per}: each model's state "
                          f"stays alive; build or load it once (at import or start-up) and reuse it")


def _cached_factory(context, call: cst.Call) -> bool:
    """``load_model()`` of this module, or ``get_model()`` of another module of the project, that
    builds only under a cache test (``if model is None:`` on a global): it returns the one model,
    as the reach path already reads it (its summary has no MODEL effect)."""
    frame = context.function
    target = context.functions.resolve(call, frame.node if frame is not None else None)
    if target is None:
        found = context.functions.project_summary(call)
        return bool(found) and RETURNS_MODEL in found and MODEL not in found
    return MODEL not in context.functions.summary(target[1]).effects


# A whole training run: one model's fit. A request or a loop pass that builds a model and trains
# it is paced by the training: a search's candidates, folds, restarts until a score, an endpoint
# that trains what it is sent. Such passes are few, and "build it once" cannot apply.
_TRAINING_METHODS = frozenset({"fit", "fit_generator"})
_TRAINING_ENDPOINT = Repetition(SMALL, basis="a training endpoint: each request fits its own model", known=False)


def _names_bound_to(context, call: cst.Call, where: cst.CSTNode) -> set[str]:
    """The names ``where`` binds to what ``call`` returns (``model = build()``)."""
    return {name for node in context.nodes_in(where) if isinstance(node, cst.Assign) and node.value is call
            for target in node.targets for name in target_names(target.target)}


def _fit_of_what_it_builds(context, call: cst.Call, where: cst.CSTNode) -> cst.Call | None:
    """``model = build(); ...; model.fit(...)`` in ``where`` (a handler, a loop): the ``fit`` that
    trains the model built at ``call`` there."""
    names = _names_bound_to(context, call, where)
    return next((c for c in context.calls_in(where) if names and isinstance(c.func, cst.Attribute)
                 and c.func.attr.value in _TRAINING_METHODS and isinstance(c.func.value, cst.Name)
                 and c.func.value.value in names), None)


def _def_trains(context, definition: cst.FunctionDef) -> bool:
    """``definition``, which builds a model, also trains a Keras model: ``def train(config):
    model = build(config); model.fit(...)``."""
    return any(isinstance(c.func, cst.Attribute) and c.func.attr.value in _TRAINING_METHODS
               and context.functions.is_model_static(c.func.value, definition) for c in context.calls_in(definition))


def _training_runs(context, call: cst.Call, loop) -> Repetition | None:
    """How often a loop that trains the model it builds runs, when the count is not read off the
    code: a loop over data, steps, epochs or configurations, ``while not done`` or ``while True``
    left by a ``break`` (retry until a score), runs as many training runs as the work allows: a
    few, by the nature of the work (inferred, so medium). Known counts, loops that never end and
    a model trained on one sample per pass (per item of the data, surely) keep their grade."""
    repetition = repetition_at(context, call)
    few = repetition.kind in (PER_ITEM, PER_EPOCH, PER_STEP) or repetition.kind == UNKNOWN and not repetition.unsized_loop \
        or repetition.kind == UNBOUNDED and _breaks_out(loop)
    if not few:
        return None
    return dataclasses.replace(repetition, basis=f"{repetition.basis}, each pass training a model of its own",
                               known=False)


def _breaks_out(loop: cst.CSTNode) -> bool:
    """A ``break`` of ``loop`` itself, not of a loop or a def nested in it."""
    finder = _OwnBreak()
    walk(loop.body, finder)
    return finder.found


class _OwnBreak(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found = False

    def visit_Break(self, node: cst.Break) -> None:
        self.found = True

    def visit_For(self, node: cst.For) -> bool:
        return False

    def visit_While(self, node: cst.While) -> bool:
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False


def _returns_what_it_builds(context, call: cst.Call, where: cst.CSTNode) -> bool:
    """``net = build(); ...; return {"loss": loss, "model": net}`` in the def ``where``: the model
    built at ``call`` leaves with the result (hyperas's template), which the search keeps."""
    names = _names_bound_to(context, call, where)

    def parts(value: cst.BaseExpression) -> list:
        if isinstance(value, (cst.Tuple, cst.List)):
            return [e.value for e in value.elements]
        if isinstance(value, cst.Dict):
            return [e.value for e in value.elements if isinstance(e, cst.DictElement)]
        return [value]
    return bool(names) and any(isinstance(node, cst.Return) and node.value is not None and any(
        isinstance(part, cst.Name) and part.value in names for part in parts(node.value))
        for node in context.nodes_in(where))


def _returns_no_model(context, call: cst.Call) -> bool:
    """``call`` runs a function of this module (not a constructor: an object keeps its models)
    none of whose returns is a model: keeping what it returns (``scores[k] = train_candidate()``,
    ``preds.append(predict_chunk())``) keeps no model, so it is no ensemble."""
    frame = context.function
    target = context.functions.resolve(call, frame.node if frame is not None else None)
    if target is None or target[1].name.value == "__init__":
        return False
    definition = target[1]
    scope = context.scopes[definition]
    for node in context.nodes_in(definition.body):
        if isinstance(node, cst.Return) and node.value is not None:
            value = node.value
            values = (scope.assignments.get(value.value) or []) if isinstance(value, cst.Name) else [value]
            if any(v is not None and context.keras.is_model_build(v) for v in values):
                return False
    return True


def _loaded_in_this_module(witness) -> bool:
    """The model comes from ``load_model()`` in a function of this module (every hop of the
    chain is a def of this module): TFM408 reports it at the load."""
    return witness.what.rsplit(".", 1)[-1] == "load_model()" and bool(witness.chain) \
        and all(isinstance(where, cst.CSTNode) for _, where in witness.chain)
