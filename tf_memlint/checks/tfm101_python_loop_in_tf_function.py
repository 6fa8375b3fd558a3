"""TFM101 python-loop-in-tf-function: a Python loop with a large static bound in a traced function."""

from __future__ import annotations

import libcst as cst

from tf_memlint.facts.tracing import TRACED_SCOPE, UNROLL_OPTION
from tf_memlint.gate import TRACED, Inside
from tf_memlint.syntax import code_of
from tf_memlint.rule import Rule, register


@register
class PythonLoopInTfFunction(Rule):
    """A Python loop with a large static bound inside a traced function.

    Bad::

        @tf.function
        def f(x):
            for i in range(1000):   # unrolled: 1000 copies of the body in the graph
                x = x * 2
            return x

    Good::

        @tf.function
        def f(x):
            for i in tf.range(1000):  # one tf.while_loop
                x = x * 2
            return x
    """

    code = "TFM101"
    once_confidence = "high"
    name = "python-loop-in-tf-function"
    summary = "Python loop with a large static bound in a traced function is unrolled into the graph"
    triggers = TRACED_SCOPE
    structure = Inside(TRACED, {"For", "While"})  # a loop of a traced function
    options = UNROLL_OPTION

    def visit_For(self, node: cst.For) -> None:
        if not self.context.in_traced_function:
            return
        kind, count = self.context.tracing.loop_kind(node)
        if kind == "python" and count >= self.settings["min_unrolled_iterations"]:
            self.report(node, f"Python loop over {code_of(node.iter)} is unrolled into the traced "
                              f"graph ({count} copies of its body); use tf.range")

    def visit_While(self, node: cst.While) -> None:
        if not self.context.in_traced_function:
            return
        kind, count = self.context.tracing.loop_kind(node)
        if kind == "python" and count >= self.settings["min_unrolled_iterations"]:
            self.report(node, f"Python while loop on a Python int is unrolled into the traced graph "
                              f"({count} copies of its body); make the counter a tensor "
                              f"(tf.constant) so it becomes a tf.while_loop")
