"""TFM107 retrace-on-changing-shape: a tf.function (or a restored SavedModel function) called
again and again with a tensor whose shape changes: per loop iteration, per item, per request."""

from __future__ import annotations

import dataclasses

import libcst as cst

from tf_memlint.evidence import COUNT, GROWS, PER_ITEM, PER_REQUEST, UNKNOWN, Repetition, evidence_at, repetition_at
from tf_memlint.facts.callers import CallerFacts, name_only
from tf_memlint.facts.data_shapes import RESTORED_TRIGGERS, DataShapeFacts
from tf_memlint.facts.tracing import MIN_DISTINCT_VALUES, TRACED_SCOPE
from tf_memlint.gate import IN_DEF_OR_LOOP, TF_FUNCTION_CALL, Inside
from tf_memlint.syntax import code_of
from tf_memlint.rule import Rule, register

_FIX = "give it an input_signature with None for that dimension, or reduce_retracing=True"
_RESTORED_FIX = ("save it with an input_signature that has None for that dimension, call its "
                 "signatures['serving_default'], or pad the input to a fixed shape")


def _inferred(repetition: Repetition) -> Repetition:
    """The same repetition, graded as an inference: the shapes are read off data the code does
    not show (the texts may all be one length), or the callee's tracing is not in the code."""
    if repetition.kind in GROWS:
        return dataclasses.replace(repetition, known=False)
    if repetition.kind == COUNT and (repetition.count or 0) > 1:
        return Repetition(UNKNOWN, repetition.count, repetition.basis, known=False)
    return repetition


@register
class RetraceOnChangingShape(Rule):
    """A known tf.function, or a function restored by ``tf.saved_model.load`` / ``hub.load``,
    called again and again with a tensor whose shape changes from call to call.

    Bad::

        @tf.function
        def encode(tokens):
            return tf.reduce_sum(embed(tokens), axis=0)

        for i in range(1, len(ids) + 1):
            encode(ids[:i])          # one new trace (and concrete function) per prefix length

        qa = hub.load(url)
        for question, context in pairs:
            enc = tokenizer.encode_plus(question, context)   # each pair its own length
            qa([tf.constant([enc["input_ids"]]), ...])        # one restored trace per length

    Good::

        @tf.function(input_signature=[tf.TensorSpec([None], tf.int32)])
        def encode(tokens):          # or @tf.function(reduce_retracing=True)
            return tf.reduce_sum(embed(tokens), axis=0)

        enc = tokenizer.encode_plus(question, context, padding="max_length", max_length=384)
    """

    code = "TFM107"
    name = "retrace-on-changing-shape"
    summary = "tf.function called in a loop with a tensor whose shape changes per call retraces every time"
    triggers = TRACED_SCOPE | RESTORED_TRIGGERS  # calls of a tf.function, of a restored SavedModel
    # in a loop; or in a def that may run per request (an entry point, a handler)
    structure = Inside(IN_DEF_OR_LOOP, {TF_FUNCTION_CALL})
    options = {
        "min_distinct_shapes": (
            MIN_DISTINCT_VALUES,
            "fewest iterations (a loop's known trip count) that count as retracing on shapes",
        ),
    }

    def __init__(self, context, settings) -> None:
        super().__init__(context, settings)
        self._callers = context.facts_of(CallerFacts)
        # Calls outside a loop with the caller's input: reported after the walk when their def
        # runs per request (an entry point of a class holding a model, through its callers).
        self._per_call: list[tuple[cst.Call, cst.FunctionDef, str, object]] = []
        self._names: set[str] | None = None

    def _callable_names(self) -> set[str]:
        """Names a call of which may run a tf.function or a restored function: the cheap test
        before any binding is resolved (most calls are of neither)."""
        if self._names is None:
            context = self.context
            names: set[str] = set()
            for bound in context.tracing.shape_tracing_bindings.values():
                names |= bound
            for scope in context.scopes.values():
                for name, values in scope.assignments.items():
                    if any(isinstance(v, cst.Call) and context.facts_of(DataShapeFacts).restored_loader(v)
                           for v in values):
                        names.add(name)
            self._names = names
        return self._names

    def visit_Call(self, node: cst.Call) -> None:
        context = self.context
        self._callers.observe(node)
        if context.in_traced_function:
            return  # a call traced into another graph is traced with it, not per Python call
        func = node.func
        if isinstance(func, cst.Name):
            if func.value not in self._callable_names():
                return
        elif not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"):
            return  # f(x), self.f(x) only
        data = context.facts_of(DataShapeFacts)
        restored = None
        target = context.tracing.tf_function_target(node.func, shapes=True)
        if target is None:
            restored = data.restored_callee(node.func)
            if restored is None:
                return
        loader = {"tensorflow_hub.load": "hub.load"}.get(restored or "", "tf.saved_model.load")
        callee = (f"{code_of(node.func)}() is a function restored by {loader}(), called" if restored
                  else f"{code_of(node.func)}() is a tf.function called")
        fix = _RESTORED_FIX if restored else _FIX
        parts: list[cst.BaseExpression] = []
        for arg in node.args:
            if arg.star:
                continue
            value = arg.value
            if isinstance(value, (cst.List, cst.Tuple)):
                parts.extend(e.value for e in value.elements)
            else:
                parts.append(value)
        if context.open_loops:
            self._in_loop(node, parts, callee, fix, restored is not None)
        elif target is None or context.function is None or target[0] is not context.function.node:
            # a tf.function defined in the function that calls it is new on every call: TFM105's
            self._per_request(node, parts, callee, fix)

    def _in_loop(self, node: cst.Call, parts: list, callee: str, fix: str, restored: bool) -> None:
        context = self.context
        running = context.loops_running(node)
        data = context.facts_of(DataShapeFacts)
        for part in parts:
            found = context.tracing.varying_shape(part)
            inferred, per_item = restored, False
            if found is None:
                found = data.picked_size(part)
                inferred = True  # the sizes in the sequence may repeat
            if found is None:
                origin = data.source(part)
                if origin is None or not isinstance(origin[0], cst.Call):
                    continue
                loop = next((lp for lp in reversed(running) if data.varies_in(origin[0], lp)), None)
                if loop is None:
                    continue
                found = (loop, f"{origin[1]} per iteration")
                per_item = True
            loop, why = found
            if not any(loop is open_loop for open_loop in running):
                continue
            count = context.trip_count(loop.iter) if isinstance(loop, cst.For) else None
            if count is not None and count < self.settings["min_distinct_shapes"]:
                continue
            message = (f"{callee} with {code_of(part)}, {why}: one trace and one kept concrete function "
                       f"per shape; {fix}")
            repetition = repetition_at(context, node)
            if per_item and repetition.kind == UNKNOWN and repetition.unsized_loop:
                # each iteration reads an item of data (tokenizes it, reads the image): a loop over data
                repetition = Repetition(PER_ITEM, basis=f"{repetition.basis}, read per iteration", known=False)
            self.report(node, message, repetition=_inferred(repetition) if inferred or per_item else None)
            return

    def _per_request(self, node: cst.Call, parts: list, callee: str, fix: str) -> None:
        """The caller's input, or data read from it, passed on with the shape it came with, in a
        def that runs per request: one trace per request shape (batch size, length, image size)."""
        context = self.context
        frame = context.function
        if frame is None or not isinstance(frame.node, cst.FunctionDef):
            return
        data = context.facts_of(DataShapeFacts)
        for part in parts:
            origin = data.source(part)
            if origin is None:
                continue
            why = "the caller's input, passed on as it came" if isinstance(origin[0], cst.Name) else origin[1]
            message = (f"{callee} with {code_of(part)}, {why}, whose shape is the request's: one trace "
                       f"and one kept concrete function per distinct shape; {fix}")
            self._per_call.append((node, frame.node, message, evidence_at(context, node)))
            return

    def leave_Module(self, node: cst.Module) -> None:
        keras = self.context.keras
        for call, definition, message, evidence in self._per_call:
            repetition = evidence.repetition
            if repetition.kind != PER_REQUEST:
                repetition = self._callers.repetition_of_def(definition, keras.is_model_build)
            if repetition is None or repetition.kind != PER_REQUEST or not repetition.known:
                # an entry point of a class not known to hold a model (a PPO wrapper's step(),
                # a frame interpolator's __call__) is too weak a sign that its input varies
                continue
            if evidence.repetition.kind != PER_REQUEST \
                    and self._callers.repetition_of_def(definition, keras.is_model_build, entry_points=False) is None:
                # Only the entry point's name says it runs per input, and nothing says its input's
                # shape varies: an agent's act(obs) or a network's __call__ gets one shape (one
                # observation, a fixed batch) from callers out of sight.
                repetition = name_only(repetition, "its callers' shapes")
            self.findings.append((call, message, dataclasses.replace(evidence, repetition=_inferred(repetition))))
