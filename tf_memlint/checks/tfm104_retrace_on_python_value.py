"""TFM104 retrace-on-python-value: a tf.function called with a Python number that changes per call."""

from __future__ import annotations

import libcst as cst

from tf_memlint.facts.tracing import MIN_DISTINCT_VALUES, TRACED_SCOPE
from tf_memlint.gate import LOOP, TF_FUNCTION_CALL, Inside
from tf_memlint.scopes import AT_POINT
from tf_memlint.syntax import code_of
from tf_memlint.rule import Rule, register


@register
class RetraceOnPythonValue(Rule):
    """A known tf.function called with a Python number that changes from call to call.

    Bad::

        @tf.function
        def scaled(x, factor):
            return x * factor

        for step in range(1000):
            scaled(x, step)          # one new trace (and concrete function) per value

    Good::

        for step in range(1000):
            scaled(x, tf.constant(step, tf.float32))   # one trace for every call
    """

    code = "TFM104"
    name = "retrace-on-python-value"
    summary = "tf.function called with a Python number that changes per call retraces every time"
    triggers = TRACED_SCOPE  # calls of a tf.function
    structure = Inside(LOOP, {TF_FUNCTION_CALL})  # in a loop: a number that changes per iteration
    options = {
        "min_distinct_values": (
            MIN_DISTINCT_VALUES,
            "fewest distinct Python values (a loop's known trip count) that count as retracing",
        ),
    }

    def visit_Call(self, node: cst.Call) -> None:
        target = self.context.tracing.tf_function_target(node.func)
        if target is None:
            return
        threshold = self.settings["min_distinct_values"]
        for arg in node.args:
            if arg.star:
                return
            loop = self.context.tracing.varying_python_number(arg.value)
            if isinstance(loop, cst.While) and self.context.in_traced_function:
                loop = None  # a while loop of a traced caller is a graph loop: its counter is a tensor
            if loop is not None:
                count = self.context.trip_count(loop.iter, AT_POINT) if isinstance(loop, cst.For) else None
                if count is None or count >= threshold:
                    self.report(node, f"{code_of(node.func)}() is a tf.function called with the Python "
                                      f"number {code_of(arg.value)}, which changes every iteration: one "
                                      f"trace per value; pass tf.constant({code_of(arg.value)}) instead")
                    return
