"""TFM111 training-loop-traced: a Python loop of training steps inside a traced function."""

from __future__ import annotations

import libcst as cst

from tf_memlint.context import TRACED_SCOPE
from tf_memlint.gate import TRACED, Inside
from tf_memlint.rule import Rule, register
from tf_memlint.syntax import code_of, dotted_name

# Calls that make a loop iteration a training step: gradients taken or applied.
_STEP_METHODS = frozenset({"gradient", "apply_gradients", "minimize"})


@register
class TrainingLoopTraced(Rule):
    """A Python ``for``/``while`` inside a traced function whose body takes training steps
    (``tape.gradient``, ``optimizer.apply_gradients``, ``minimize``, directly or in a function
    of this module it calls): the whole loop is unrolled, one copy of the forward and backward
    graph per step.

    Bad::

        @tf.function
        def fit(model, x, y, epochs, n_batches):
            for epoch in range(epochs):
                for b in range(n_batches):
                    train_batch(model, x[b], y[b])   # GradientTape + apply_gradients

    Good::

        @tf.function
        def train_batch(model, x, y):               # trace one step
            ...

        for epoch in range(epochs):
            for b in range(n_batches):
                train_batch(model, x[b], y[b])
    """

    code = "TFM111"
    name = "training-loop-traced"
    summary = "a Python loop of training steps inside a tf.function is unrolled: one graph copy per step"
    triggers = TRACED_SCOPE
    structure = Inside(TRACED, {"For", "While"})
    once_confidence = "medium"
    options = {
        "min_traced_steps": (10, "fewest training steps (a loop's known trip count) worth reporting when unrolled"),
    }

    def __init__(self, context, settings) -> None:
        super().__init__(context, settings)
        self._reported: set[int] = set()

    def visit_For(self, node: cst.For) -> None:
        self._check(node)

    def visit_While(self, node: cst.While) -> None:
        self._check(node)

    def _check(self, loop: cst.For | cst.While) -> None:
        context = self.context
        frame = context.function
        if frame is None or not frame.traced:
            return
        if any(id(outer) in self._reported for outer in frame.loops):
            return  # the outermost unrolled loop of steps says it for the loops inside it
        if isinstance(loop, cst.For) and not (isinstance(loop.iter, cst.Call) and dotted_name(loop.iter.func) == "range"
                                              and "range" not in context.aliases):
            return  # over a dataset, a tensor or a list of unknown kind: not known to be unrolled
        kind, count = context.tracing.loop_kind(loop)
        if kind == "graph" or (count is not None and count < self.settings["min_traced_steps"]):
            return
        if isinstance(loop, cst.While) and kind != "python":
            return  # a while on a condition the code does not show: AutoGraph may make it a graph loop
        step = self._training_step(loop)
        if step is None:
            return
        self._reported.add(id(loop))
        header = code_of(loop.iter) if isinstance(loop, cst.For) else code_of(loop.test)
        self.report(loop, f"Python loop over {header} takes a training step ({step}) inside a traced function: "
                          f"unrolled, one copy of the forward and backward graph per step; trace the step "
                          f"(@tf.function on it) and loop in Python, or loop over tf.range / a dataset")

    def _training_step(self, loop: cst.CSTNode, _depth: int = 0) -> str | None:
        """The call that makes an iteration a training step, followed one level into the
        functions of this module the loop calls."""
        context = self.context
        for node in context.nodes_in(loop):
            if not isinstance(node, cst.Call):
                continue
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value in _STEP_METHODS and node.args:
                return code_of(func)
            if _depth == 0 and isinstance(func, cst.Name):
                definition = context.functions.definition(func.value)
                if definition is not None and self._training_step(definition.body, 1) is not None:
                    return f"{func.value}()"
        return None
