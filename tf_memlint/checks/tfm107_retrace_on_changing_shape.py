"""TFM107 retrace-on-changing-shape: a tf.function called in a loop with a tensor whose shape changes."""

from __future__ import annotations

import libcst as cst

from tf_memlint.facts.tracing import MIN_DISTINCT_VALUES, TRACED_SCOPE
from tf_memlint.gate import LOOP, TF_FUNCTION_CALL, Inside
from tf_memlint.syntax import code_of
from tf_memlint.rule import Rule, register


@register
class RetraceOnChangingShape(Rule):
    """A known tf.function called in a Python loop with a tensor whose shape changes every
    iteration.

    Bad::

        @tf.function
        def encode(tokens):
            return tf.reduce_sum(embed(tokens), axis=0)

        for i in range(1, len(ids) + 1):
            encode(ids[:i])          # one new trace (and concrete function) per prefix length

    Good::

        @tf.function(input_signature=[tf.TensorSpec([None], tf.int32)])
        def encode(tokens):          # or @tf.function(reduce_retracing=True)
            return tf.reduce_sum(embed(tokens), axis=0)
    """

    code = "TFM107"
    name = "retrace-on-changing-shape"
    summary = "tf.function called in a loop with a tensor whose shape changes per call retraces every time"
    triggers = TRACED_SCOPE  # calls of a tf.function
    structure = Inside(LOOP, {TF_FUNCTION_CALL})  # in a loop
    options = {
        "min_distinct_shapes": (
            MIN_DISTINCT_VALUES,
            "fewest iterations (a loop's known trip count) that count as retracing on shapes",
        ),
    }

    def visit_Call(self, node: cst.Call) -> None:
        context = self.context
        if context.in_traced_function or not context.open_loops:
            return  # a call traced into another graph is traced with it, not per Python call
        if context.tracing.tf_function_target(node.func, shapes=True) is None:
            return
        running = context.loops_running(node)
        for arg in node.args:
            if arg.star:
                continue
            value = arg.value
            for part in (e.value for e in value.elements) if isinstance(value, (cst.List, cst.Tuple)) else [value]:
                found = context.tracing.varying_shape(part)
                if found is None:
                    continue
                loop, why = found
                if not any(loop is open_loop for open_loop in running):
                    continue
                count = context.trip_count(loop.iter) if isinstance(loop, cst.For) else None
                if count is not None and count < self.settings["min_distinct_shapes"]:
                    continue
                self.report(node, f"{code_of(node.func)}() is a tf.function called with {code_of(part)}, "
                                  f"{why}: one trace and one kept concrete function per shape; give it an "
                                  f"input_signature with None for that dimension, or reduce_retracing=True")
                return
