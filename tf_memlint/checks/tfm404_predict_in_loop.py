"""TFM404 predict-in-loop: Keras model.predict() per iteration of a loop, per request or per batch."""

from __future__ import annotations

import dataclasses

import libcst as cst

from tf_memlint.context import AT_POINT, STATIC
from tf_memlint.evidence import (ONCE_HERE, PER_ITEM, PER_REQUEST, Repetition, evidence_at, one_sample, rebound_value,
                                 repetition_at)
from tf_memlint.facts.callers import CallerFacts
from tf_memlint.facts.events import BATCH, REQUEST, STEP, user_paced
from tf_memlint.facts.functions import MODEL, PREDICT, Witness
from tf_memlint.facts.keras import MODEL_BUILD_TRIGGERS
from tf_memlint.facts.repetition import (first_time, open_loops_run_fewer_than,
                                         runs_fewer_than_counting_splitters, where_repeated)
from tf_memlint.gate import ENTRY_CALLED, MODEL_METHOD, REPEATED, Inside
from tf_memlint.rule import Rule, register
from tf_memlint.syntax import code_of, runs_every_nth, string_keyed


@register
class PredictInLoop(Rule):
    """``model.predict(x)`` on a Keras model, inside a loop, on an input that changes per iteration.

    Bad::

        for frame in frames:
            scores = model.predict(frame[None])      # about 50 ms of set-up per call

    Good::

        for frame in frames:
            scores = model(frame[None], training=False)
        # or, for the whole set at once:
        scores = model.predict(np.stack(frames))

    ``predict`` builds a dataset and a predict function per call: a cost (time and a few MiB of
    RSS that levels off), not a leak. Fires only when ``model`` is known to be a Keras model, so
    scikit-learn's ``predict`` stays silent. Predicting the same data once per epoch of a loop
    that fits the model (``model.fit(...); model.predict(x_val)``) is monitoring, and a loop
    that builds a new model each iteration (k-fold, bootstrap) predicts once per model: both
    stay silent.
    """

    code = "TFM404"
    harm_is_latency = True
    reaches_across_modules = True  # its reach path: _through_call

    name = "predict-in-loop"
    summary = "Keras model.predict() called per iteration of a loop: slow; call the model directly"
    triggers = frozenset(".predict&" + build for build in MODEL_BUILD_TRIGGERS)  # on a known Keras model
    # in a loop or a request/batch handler, or in a function one calls (_through_call); in the
    # command, a call there of another module's function that predicts
    # a Keras model's own method predicting on itself, run per call from outside (_own_predict)
    # a model's predict in an entry point of a class holding it, on one sample (_in_entry_point)
    structure = Inside(REPEATED, {".predict", PREDICT}) | Inside(MODEL_METHOD, {".predict"}) | Inside(
        ENTRY_CALLED, {".predict"})
    options = {
        "predict_loop_min_iterations": (
            10, "loops known to run fewer times than this are not reported"),
    }

    def __init__(self, context, settings) -> None:
        super().__init__(context, settings)
        self._reach_places: set[int] = set()  # loops and handlers reported through a call
        self._callers = context.facts_of(CallerFacts)
        # `self.predict(x)` in a method of a Keras model class: reported after the walk when
        # the method runs per call (its callers' loops, an entry point).
        self._own_predicts: list[tuple[cst.Call, cst.FunctionDef, object]] = []
        # `self.model.predict(x[None])` in an entry point of a class holding a model (a wrapper's
        # `predict`, an agent's `act`): reported after the walk when nothing here calls it.
        self._entry_predicts: list[tuple[cst.Call, cst.FunctionDef, bool, object]] = []

    def leave_Module(self, node: cst.Module) -> None:
        keras = self.context.keras
        for call, method, evidence in self._own_predicts:
            repetition = self._callers.repetition_of_def(method, keras.is_model_build)
            if repetition is None or not first_time(self._reach_places, method):
                continue
            name = method.name.value
            self.findings.append((call, f"self.predict() in {name}() of a Keras model pays predict's set-up cost "
                                        f"on every call of {name}(); call the model directly, "
                                        f"self(x, training=False)", dataclasses.replace(evidence, repetition=repetition)))
        for call, method, assumed, evidence in self._entry_predicts:
            if self._callers.called_here(method):
                continue  # its callers here decide: _through_call reports at their loop
            repetition = self._callers.repetition_of_def(method, keras.is_model_build)
            if repetition is None or repetition.kind != PER_REQUEST or not first_time(self._reach_places, method):
                continue
            model, name = code_of(call.func.value), method.name.value
            self.findings.append((call, f"{model}.predict() on one sample in {name}(), which is made to be "
                                        f"called once per input, pays predict's set-up cost on every call; call "
                                        f"{model}(x, training=False)", dataclasses.replace(
                                            evidence, repetition=dataclasses.replace(
                                                repetition, basis=f"{repetition.basis}; one sample per call",
                                                known=repetition.known and not assumed))))

    def visit_Call(self, node: cst.Call) -> None:
        self._callers.observe(node)
        if not self.context.keras.predict_builds_per_call:
            if self.context.keras.era_is_elsewhere:
                self._through_call(node)  # another module's helper predicts: its era counts
            return  # Keras in TF1 graph mode reuses one predict function: no per-call set-up
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "predict" and node.args):
            self._through_call(node)  # a function that predicts, called per iteration/request
            return
        context = self.context
        if isinstance(func.value, cst.Name) and func.value.value == "self":
            self._own_predict(node)  # a Keras model's method predicting on itself
        overridden = context.keras.overrides(func.value, "predict")
        if context.in_traced_function or overridden or not context.keras.is_model(func.value):
            self._through_call(node)  # self.model.predict() of a class of this module
            # a global model (`global model`) in a handler; a model one binding of the attribute
            # builds, in an entry point
            if not self._in_handler(node) and not context.in_traced_function and not overridden \
                    and not context.open_loops and context.functions.is_model_static(func.value, self._def()):
                self._in_entry_point(node, assumed=True)
            return  # not Keras's predict: the model's own class defines a predict method
        loops = context.loops_running(node)
        if not loops:
            if not self._in_handler(node):  # per request / per batch (facts/events.py)
                self._in_entry_point(node)
            return
        if self._exempt_loops(node, loops, through_call=False) or self._new_model_in(func.value, loops[-1]):
            return
        if _predicts_whole_batch(context, node, loops[-1]):
            return  # one call per batch of a batching iterator: the forward pass dominates
        model = code_of(func.value)
        self.report(node, f"{model}.predict() in a loop pays its set-up cost on every call; call "
                          f"{model}(x, training=False) in the loop, or predict once on the whole batch",
                    repetition=_with_payload(context, node))

    def _exempt_loops(self, node: cst.Call, loops: list, through_call: bool) -> bool:
        """The exemptions of a predict run by ``loops``, on every path: few iterations, a person's
        uploads, every n-th step (the set-up is not felt), or the same data once per epoch of a
        loop that fits the model (monitoring, not per-item scoring)."""
        context = self.context
        limit = self.settings["predict_loop_min_iterations"]
        # Through a call, a loop known to be short (`for _ in range(10)` in a replay step) is a
        # constant number of batched predicts per call: only long or open-ended loops count.
        # (The loops open at the call there, without splitter counts: kept as they were.)
        short = open_loops_run_fewer_than(context, limit * 10) if through_call \
            else runs_fewer_than_counting_splitters(context, loops, limit)
        if short or user_paced(context, loops) or runs_every_nth(loops[-1], node, limit):
            return True
        used = {n.value for arg in node.args for n in [arg.value, *context.nodes_in(arg.value)]
                if isinstance(n, cst.Name)}
        return not any(used & context.keras.names_changing_in(loop) for loop in loops) \
            and any(context.keras.loop_fits_model(loop) for loop in loops)

    def _new_model_in(self, model: cst.BaseExpression, where: cst.CSTNode) -> bool:
        """The model is built in ``where`` (a loop: k-fold, bootstrap; a handler: TFM403's
        finding): one predict per model."""
        value = self.context.value_of(model, AT_POINT)
        return value is not None and any(value is n for n in self.context.nodes_in(where))

    def _def(self) -> cst.CSTNode | None:
        frame = self.context.function
        return frame.node if frame is not None else None

    def _through_call(self, node: cst.Call) -> None:
        """A call whose function calls ``predict`` on a Keras model, per iteration/request/batch."""
        context = self.context
        if not context.functions.possible(PREDICT):
            return
        place = where_repeated(context, node, units=(REQUEST, BATCH, STEP))
        if place is None:
            return
        found = context.functions.reach(node, PREDICT)
        func = node.func
        if found is None and isinstance(func, cst.Attribute) and func.attr.value == "predict" and node.args \
                and isinstance(func.value, cst.Attribute) and context.functions.resolve(node, self._def()) is None \
                and context.functions.is_model_static(func.value, self._def()):
            found = (code_of(func), Witness(code_of(func) + "()"))  # self.actor.model.predict(): another object's model
        if found is None:
            return
        where, per = place
        loops = context.loops_running(node)
        if loops and self._exempt_loops(node, loops, through_call=True):
            return
        label, witness = found
        if self._predicts_what_it_builds(node, witness):
            return  # one predict per model: the load or build is the cost (TFM403/TFM408)
        if not first_time(self._reach_places, where):
            return
        if not witness.chain:
            self.report(node, f"{label}() on a Keras model held by another object, {per}, pays predict's "
                              f"set-up cost on every call; call the model directly, model(x, training=False)")
            return
        self.report(node, f"{label}() calls Keras predict() {per} (calls {context.functions.describe(witness)}); "
                          f"predict pays its set-up cost on every call: call the model directly, "
                          f"model(x, training=False), or predict once on the whole batch")

    def _predicts_what_it_builds(self, node: cst.Call, predicts: Witness) -> bool:
        """The function ``node`` runs, which predicts, also builds or loads a model on every call
        (``model = load_model(path); return model.predict(x)``): the reach path's form of
        ``_new_model_in``."""
        built = self.context.functions.reach(node, MODEL)
        if built is None or not built[1].chain or not predicts.chain:
            return False
        here, there = built[1].chain[-1][1], predicts.chain[-1][1]
        return here is there or (isinstance(here, str) and here == there)

    def _in_handler(self, node: cst.Call) -> bool:
        """``model.predict(x)`` written in a request handler or a per-batch callback hook; whether
        it stands in one."""
        context = self.context
        if context.open_loops:
            return False
        place = where_repeated(context, node, units=(REQUEST, BATCH, STEP))
        if place is None:
            return False
        where, per = place
        model = node.func.value  # type: ignore[attr-defined]
        if not (context.keras.is_model(model) or context.functions.is_model_static(model, where)) \
                or context.keras.overrides(model, "predict"):
            return True
        if self._new_model_in(model, where) or not first_time(self._reach_places, where):
            return True
        name = code_of(model)
        self.report(node, f"{name}.predict() {per} pays its set-up cost on every call; call "
                          f"{name}(x, training=False) instead")
        return True

    def _in_entry_point(self, node: cst.Call, assumed: bool = False) -> None:
        """``self.model.predict(x[None])`` in a method of a class that holds the model: one sample
        per call says the method runs once per input; whether something calls it again and
        again is decided after the walk (``CallerFacts.repetition_of_def``). ``assumed``: one of
        the attribute's bindings builds a model, not every one."""
        context = self.context
        method = _method_here(context)
        model = node.func.value  # type: ignore[attr-defined]
        if method is None or not isinstance(model, cst.Attribute) or code_of(model).split(".")[0] != "self" \
                or not one_sample(context, node.args[0].value) or self._new_model_in(model, method):
            return
        self._entry_predicts.append((node, method, assumed, evidence_at(context, node, ONCE_HERE)))

    def _own_predict(self, node: cst.Call) -> None:
        """``self.predict(x)`` in a method of a class of this module that is a Keras model and does
        not define ``predict`` itself (a2c's ``action_value``: ``logits, value = self.predict(obs)``)."""
        context = self.context
        method, owner = _method_here(context), context.enclosing_class
        if method is None or context.in_traced_function or context.open_loops \
                or owner.name.value not in context.keras.model_classes:  # type: ignore[union-attr]
            return
        if any(isinstance(s, cst.FunctionDef) and s.name.value == "predict" for s in owner.body.body):  # type: ignore[union-attr]
            return  # the class's own predict, not Keras's
        self._own_predicts.append((node, method, evidence_at(context, node, ONCE_HERE)))


def _method_here(context) -> cst.FunctionDef | None:
    """The def the walk is in when it is a method of the enclosing class itself (not a def nested
    in a method)."""
    frame, owner = context.function, context.enclosing_class
    if frame is None or owner is None or not isinstance(frame.node, cst.FunctionDef):
        return None
    scope = context.scopes[frame.node]
    return frame.node if scope.parent is not None and scope.parent.node is owner else None


# What yields whole batches when iterated: tf.data batching, Keras dataset utilities (batched by
# default), Keras ImageDataGenerator flows.
_BATCHING_METHODS = frozenset({"batch", "padded_batch", "ragged_batch", "flow", "flow_from_directory",
                               "flow_from_dataframe"})


_BATCHED_UTILITIES = frozenset({"image_dataset_from_directory", "text_dataset_from_directory",
                                "audio_dataset_from_directory", "timeseries_dataset_from_array"})


_PASSING_METHODS = frozenset({"take", "skip", "prefetch", "cache", "shuffle", "repeat", "map", "filter",
                              "with_options", "as_numpy_iterator"})


_ONE_ITEM_CALLS = frozenset({"expand_dims", "reshape", "array", "asarray", "stack", "newaxis"})


def _predicts_whole_batch(context, call: cst.Call, loop) -> bool:
    """``model.predict(batch)`` where ``batch`` is what the loop yields (or a call on it that
    keeps its batch dimension, ``preprocess_input(images)``, or a part of it unpacked in the body,
    ``x, y = batch``) and the loop iterates a batching source (404-A); or ``batch`` is taken from
    a batching source with ``next()`` (``x, y = next(generator)``)."""
    names = set()
    if isinstance(loop, cst.For):
        target = loop.target
        parts = [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]
        names = {p.value for p in parts if isinstance(p, cst.Name)}
    arg = call.args[0].value
    for _ in range(3):  # x = preprocess_input(images); model.predict(x)
        if isinstance(arg, cst.Name) and arg.value not in names:
            found = context.binding(arg.value, AT_POINT)
            arg = None if found is None else found.value  # `x, y = batch`: a part of a batch is a batch
        if string_keyed(arg) is not None:
            # `images = batch["image"]`: a feature of a batch of dicts is a batch too (an index,
            # `batch[0]`, may as well be the first sample of a batch of tensors)
            arg = arg.value
        if _is_next(arg):
            return _is_batching(context, arg.args[0].value, 0)
        if isinstance(arg, cst.Call) and arg.args and (code_of(arg.func).rsplit(".", 1)[-1] not in _ONE_ITEM_CALLS):
            arg = arg.args[0].value
    if not (isinstance(arg, cst.Name) and arg.value in names):
        return False
    return _is_batching(context, loop.iter, 0)


def _with_payload(context, call: cst.Call) -> Repetition:
    """How often ``call`` runs where it stands, saying so when a loop per item of some data
    predicts on one sample of it per iteration: the payload confirms it is per item. (Per file of
    a folder it settles nothing: the folder may hold a handful.)"""
    repetition = repetition_at(context, call, latency=True)
    if repetition.kind != PER_ITEM or repetition.folder or not one_sample(context, call.args[0].value):
        return repetition
    return dataclasses.replace(repetition, basis=f"{repetition.basis}; one sample per call")


def _is_next(expr) -> bool:
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "next" \
        and len(expr.args) == 1


def _is_batching(context, expr, depth: int, earlier: tuple | None = None) -> bool:
    """``expr`` yields whole batches when iterated. ``earlier``: as in ``rebound_value``, so that
    ``ds = ds.map(f)`` reads the ``ds`` bound before it."""
    if depth > 8 or expr is None:
        return False
    if isinstance(expr, cst.Name):
        step = rebound_value(context, expr.value, earlier)
        if step is None:  # a parameter, or the rebinding chain used up
            in_chain = earlier is not None and expr.value == earlier[0]
            return not in_chain and _parameter_is_batching(context, expr.value, depth)
        return _is_batching(context, step[0], depth + 1, step[1])
    if not isinstance(expr, cst.Call):
        return False
    func = expr.func
    name = (context.qualified_name(func) or code_of(func)).rsplit(".", 1)[-1]
    if name in _BATCHED_UTILITIES:
        return not any(a.keyword is not None and a.keyword.value == "batch_size"
                       and isinstance(a.value, cst.Name) and a.value.value == "None" for a in expr.args)
    if isinstance(func, cst.Attribute):
        if func.attr.value in _BATCHING_METHODS:
            return True
        if func.attr.value in _PASSING_METHODS:
            return _is_batching(context, func.value, depth + 1, earlier)
    if isinstance(func, cst.Name) and func.value == "iter" and expr.args:
        return _is_batching(context, expr.args[0].value, depth + 1, earlier)  # next(iter(dataset))
    if isinstance(func, cst.Name):
        if func.value in context.keras.sequence_classes:
            return True  # a keras.utils.Sequence yields one batch per item, by its contract
        definition = context.functions.definition(func.value)
        if definition is not None:  # a local generator that yields lists filled up to batch_size
            inner = context.nodes_in(definition.body, into_functions=True)
            return any(isinstance(n, cst.Yield) for n in inner) and any(
                isinstance(n, cst.Name) and "batch" in n.value.lower() for n in inner)
    return False


def _parameter_is_batching(context, name: str, depth: int) -> bool:
    """``name`` is a parameter of the enclosing function and every call of that function in this
    module that passes it passes a batching source."""
    frame = context.function
    if frame is None or not isinstance(frame.node, cst.FunctionDef):
        return False
    params = [p.name.value for p in frame.node.params.params]
    if name not in params:
        return False
    position, function = params.index(name), frame.node.name.value
    passed = []
    for node in context.nodes_in(context.module, into_functions=True):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == function:
            arg = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == name),
                       None)
            positional = [a.value for a in node.args if a.keyword is None]
            if arg is None and len(positional) > position:
                arg = positional[position]
            if arg is not None:
                passed.append(arg)
    return bool(passed) and all(_is_batching(context, context.value_of(a, STATIC) if isinstance(a, cst.Name)
                                             else a, depth + 1) for a in passed)
