"""TFM101 python-loop-in-tf-function: a Python loop with a large static bound in a traced function,
or a Python loop whose body is a whole model call or a training step."""

from __future__ import annotations

import libcst as cst

from tf_memlint.evidence import COUNT, SMALL, UNKNOWN, Repetition
from tf_memlint.facts.tracing import TRACED_SCOPE, UNROLL_OPTION
from tf_memlint.gate import COUNTED_LOOP, TRACED, Inside
from tf_memlint.syntax import code_of, dotted_name
from tf_memlint.rule import Rule, register

# A Keras model call unrolls into at least 13 graph nodes (measured: a two-Dense MLP, 841 nodes at
# 64 iterations) against the 3 of the claim's measured body: a quarter of the bound makes a graph
# as large as the plain loop's threshold does.
HEAVY_BODY_DIVISOR = 4


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
    # a loop of a traced function whose count may be known: every path reads loop_kind's count,
    # or a `range(...)` bound from the caller
    structure = Inside(TRACED, {COUNTED_LOOP})
    options = UNROLL_OPTION

    def __init__(self, context, settings) -> None:
        super().__init__(context, settings)
        self._reported_loops: set[int] = set()

    def visit_For(self, node: cst.For) -> None:
        context = self.context
        if not context.in_traced_function:
            return
        kind, count = context.tracing.loop_kind(node)
        least = self.settings["min_unrolled_iterations"]
        if kind == "python" and count >= least:
            self._reported_loops.add(id(node))
            self.report(node, f"Python loop over {code_of(node.iter)} is unrolled into the traced "
                              f"graph ({count} copies of its body); use tf.range")
            return
        if any(id(loop) in self._reported_loops for loop in context.function.loops):
            return  # an outer loop is reported: its copies hold this one's
        if kind == "python" and count >= least // HEAVY_BODY_DIVISOR:
            if context.keras.loop_is_training(node):
                # A training step (a forward pass, its gradients and the update) per iteration:
                # decidably heavier than a model call, at a count read off the code.
                self._report_training_loop(node, f"the whole training loop is unrolled, {count} copies of the "
                                                 f"step in the graph", Repetition(COUNT, count, code_of(node.iter)))
                return
            model = self._model_called_in(node)
            if model is not None:
                self._reported_loops.add(id(node))
                self.report(node, f"Python loop over {code_of(node.iter)} calls the model {model} in a traced "
                                  f"function: {count} copies of the model's ops are unrolled into the graph; "
                                  f"batch the calls (one call on stacked inputs) or loop with tf.range and a "
                                  f"tf.TensorArray",
                            repetition=Repetition(UNKNOWN, basis="a model call per unrolled iteration: its size is "
                                                                 "the model's", known=False))
                return
        if kind == "unknown" and self._bound_from_caller(node) and context.keras.loop_is_training(node):
            self._report_training_loop(node, "with a Python int bound the whole training loop is unrolled, one "
                                             "copy of the step per iteration, traced again for every new bound",
                                       self._bound_at_call_sites(node, least // HEAVY_BODY_DIVISOR))

    def _report_training_loop(self, node: cst.For, unrolled: str, repetition: Repetition) -> None:
        """A Python loop that takes a training step per iteration in a traced function."""
        self._reported_loops.add(id(node))
        name = self.context.function.node.name.value
        self.report(node, f"Python loop over {code_of(node.iter)} takes a training step in the traced function "
                          f"{name}(): {unrolled}; decorate only the step with @tf.function and loop in Python "
                          f"outside it", repetition=repetition)

    def visit_While(self, node: cst.While) -> None:
        if not self.context.in_traced_function:
            return
        kind, count = self.context.tracing.loop_kind(node)
        if kind == "python" and count >= self.settings["min_unrolled_iterations"]:
            self._reported_loops.add(id(node))
            self.report(node, f"Python while loop on a Python int is unrolled into the traced graph "
                              f"({count} copies of its body); make the counter a tensor "
                              f"(tf.constant) so it becomes a tf.while_loop")

    def _model_called_in(self, loop: cst.For) -> str | None:
        """The Keras model (a name or ``self.attr`` bound to one) that the loop body calls."""
        keras = self.context.keras
        for call in self.context.calls_in(loop.body):
            func = call.func
            if isinstance(func, (cst.Name, cst.Attribute)) and keras.is_model(func):
                return code_of(func)
        return None

    def _bound_from_caller(self, loop: cst.For) -> bool:
        """``range(epochs)``, ``range(x.shape[0] // batch_size)``: a ``range`` whose bound comes from
        the traced function's own parameters (or a static shape), so its caller decides whether
        it is a Python int. A bound read from ``self`` (``range(self.n_critic)``, a handful of
        critic updates per step) is a setting of the object, not the work."""
        iterable = loop.iter
        if not (isinstance(iterable, cst.Call) and dotted_name(iterable.func) == "range") \
                or "range" in self.context.aliases:
            return False
        scope = self.context.function.scope
        params = scope.params - {"self", "cls"}

        def from_caller(expr: cst.BaseExpression, depth: int) -> bool:
            for name in [expr, *self.context.nodes_in(expr)]:
                if not isinstance(name, cst.Name):
                    continue
                if name.value in params:
                    return True
                value = scope.only_value(name.value)
                if depth < 2 and value is not None and from_caller(value, depth + 1):
                    return True
            return False

        return any(from_caller(arg.value, 0) for arg in iterable.args)

    def _bound_at_call_sites(self, loop: cst.For, least: int) -> Repetition:
        """How many times this module's calls of the traced function run ``range(<param>)``: the
        Python ints they pass (``train(model, ds, EPOCHS)`` with ``EPOCHS = 2``). A few copies of
        the step are a small graph; none of the calls seen, the caller is out of sight."""
        unseen = Repetition(UNKNOWN, basis="unrolled when the caller passes a Python int", known=False)
        bound = loop.iter.args[0].value if len(loop.iter.args) == 1 else None  # type: ignore[attr-defined]
        definition = self.context.function.node
        if not isinstance(bound, cst.Name) or self.context.enclosing_class is not None:
            return unseen
        positional = [p.name.value for p in definition.params.params]
        values = []
        for site, _loops, _caller in self.context.functions.call_sites(definition):
            if not isinstance(site, cst.Call):
                return unseen
            passed = next((a.value for a in site.args if a.keyword is not None and a.keyword.value == bound.value),
                          None)
            if passed is None and bound.value in positional:
                index = positional.index(bound.value)
                plain = [a for a in site.args if a.keyword is None and not a.star]
                passed = plain[index].value if index < len(plain) else None
            value = self.context.int_value(passed) if passed is not None else None
            if value is None:
                return unseen
            values.append((value, self.context.functions.line_of(site)))
        if not values:
            return unseen
        count, line = max(values)
        basis = f"range({bound.value}) with {bound.value}={count} at the call at line {line}"
        if count < least:
            return Repetition(SMALL, count, basis, known=False)
        return Repetition(COUNT, count, basis)
