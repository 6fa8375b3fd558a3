"""TFM102 tensor-list-append-in-traced-loop: tensors appended to a Python list in a loop of a traced
function."""

from __future__ import annotations

import libcst as cst

from tf_memlint.evidence import ONCE, Repetition
from tf_memlint.facts.tracing import TRACED_SCOPE, UNROLL_OPTION
from tf_memlint.gate import LOOP, TRACED, Inside
from tf_memlint.syntax import Kind, makes_list
from tf_memlint.rule import Rule, register


@register
class TensorListAppendInTracedLoop(Rule):
    """Appending to a Python list inside a loop of a traced function.

    Bad::

        @tf.function
        def f(x, n):
            out = []
            for i in tf.range(n):
                out.append(x * i)   # graph loop: InaccessibleTensorError, or one element kept
            return tf.stack(out)

    Good::

        @tf.function
        def f(x, n):
            out = tf.TensorArray(tf.float32, size=n)
            for i in tf.range(n):
                out = out.write(i, x * tf.cast(i, tf.float32))
            return out.stack()
    """

    code = "TFM102"
    once_confidence = "high"
    name = "tensor-list-append-in-traced-loop"
    summary = "tensors appended to a Python list in a loop of a traced function"
    triggers = TRACED_SCOPE
    # an `.append(...)` in a loop of a traced function: of the same frame (frame.loops), so a loop
    # around a nested def or lambda does not count
    structure = Inside((TRACED, LOOP), {".append"})
    options = UNROLL_OPTION

    def visit_Call(self, node: cst.Call) -> None:
        context = self.context
        frame = context.function
        if frame is None or not frame.traced or not frame.loops:
            return
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "append"
                and isinstance(func.value, cst.Name) and len(node.args) == 1):
            return
        if not self._new_list(frame.scope.only_value(func.value.value)):
            return  # only a list this function creates; outer containers are TFM103's
        if context.value_kind(node.args[0].value) in (Kind.PY_INT, Kind.PY_NUMBER, Kind.PY_CONTAINER) \
                or isinstance(node.args[0].value, (cst.SimpleString, cst.FormattedString)):
            return
        for loop in reversed(frame.loops):
            kind, count = context.tracing.loop_kind(loop)
            if kind == "graph":
                # Wrong on the first call whatever the loop's length: read off the code.
                self.report(node, f"{func.value.value}.append() inside a graph loop keeps only the "
                                  f"last traced value or raises InaccessibleTensorError; use tf.TensorArray",
                            repetition=Repetition(ONCE, basis="a graph loop"))
                return
            if kind == "python" and count >= self.settings["min_unrolled_iterations"]:
                self.report(node, f"{func.value.value}.append() in a loop unrolled {count} times "
                                  f"copies every element into the graph; use tf.TensorArray with tf.range")
                return

    def _new_list(self, value: cst.BaseExpression | None) -> bool:
        """``[]`` or ``list()`` (the builtin, not shadowed by an import): an empty list made here."""
        return makes_list(value) and (isinstance(value, cst.List) or (
            "list" not in self.context.aliases and not self.context.module_scope.binds("list")))
