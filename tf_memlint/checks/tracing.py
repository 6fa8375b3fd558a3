"""TFM1xx: graphs built by tf.function (and every other function TensorFlow traces)."""

from __future__ import annotations

import libcst as cst

from tf_memlint.context import Kind, code_of
from tf_memlint.rule import Rule, register

# Below this many iterations an unrolled loop is a few hundred graph nodes: idiomatic, not a
# memory problem (measured: 5 nodes per iteration, +12 MiB RSS at 10 -> +76 MiB at 1000).
MIN_UNROLLED_ITERATIONS = 100
_UNROLL_OPTION = {
    "min_unrolled_iterations": (
        MIN_UNROLLED_ITERATIONS,
        "smallest static trip count of a Python loop in a traced function that counts as large",
    ),
}
_MUTATING_METHODS = frozenset({
    "append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "add",
    "discard", "appendleft", "popleft", "extendleft", "sort", "reverse", "popitem",
})


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
    name = "python-loop-in-tf-function"
    summary = "Python loop with a large static bound in a traced function is unrolled into the graph"
    options = _UNROLL_OPTION

    def visit_For(self, node: cst.For) -> None:
        if not self.context.in_traced_function:
            return
        kind, count = self.context.loop_kind(node)
        if kind == "python" and count >= self.settings["min_unrolled_iterations"]:
            self.report(node, f"Python loop over {code_of(node.iter)} is unrolled into the traced "
                              f"graph ({count} copies of its body); use tf.range")

    def visit_While(self, node: cst.While) -> None:
        if not self.context.in_traced_function:
            return
        kind, count = self.context.loop_kind(node)
        if kind == "python" and count >= self.settings["min_unrolled_iterations"]:
            self.report(node, f"Python while loop on a Python int is unrolled into the traced graph "
                              f"({count} copies of its body); make the counter a tensor "
                              f"(tf.constant) so it becomes a tf.while_loop")


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
    name = "tensor-list-append-in-traced-loop"
    summary = "tensors appended to a Python list in a loop of a traced function"
    options = _UNROLL_OPTION

    def visit_Call(self, node: cst.Call) -> None:
        context = self.context
        frame = context.function
        if frame is None or not frame.traced or not frame.loops:
            return
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "append"
                and isinstance(func.value, cst.Name) and len(node.args) == 1):
            return
        if not isinstance(frame.scope.only_value(func.value.value), cst.List):
            return  # only a list this function creates; outer containers are TFM103's
        if context.value_kind(node.args[0].value) in (Kind.PY_INT, Kind.PY_NUMBER, Kind.PY_CONTAINER) \
                or isinstance(node.args[0].value, (cst.SimpleString, cst.FormattedString)):
            return
        for loop in reversed(frame.loops):
            kind, count = context.loop_kind(loop)
            if kind == "graph":
                self.report(node, f"{func.value.value}.append() inside a graph loop keeps only the "
                                  f"last traced value or raises InaccessibleTensorError; use tf.TensorArray")
                return
            if kind == "python" and count >= self.settings["min_unrolled_iterations"]:
                self.report(node, f"{func.value.value}.append() in a loop unrolled {count} times "
                                  f"copies every element into the graph; use tf.TensorArray with tf.range")
                return


@register
class PythonStateInTracedFunction(Rule):
    """Writing Python state that lives outside a traced function.

    Bad::

        counter = {"calls": 0}

        @tf.function
        def step(x):
            counter["calls"] += 1   # runs once per trace, not once per call
            return x + 1

    Good::

        calls = tf.Variable(0)

        @tf.function
        def step(x):
            calls.assign_add(1)
            return x + 1
    """

    code = "TFM103"
    name = "python-state-in-traced-function"
    summary = "global/nonlocal writes or outer Python containers mutated inside a traced function"

    def visit_Global(self, node: cst.Global) -> None:
        self._declaration(node, "global")

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self._declaration(node, "nonlocal")

    def _declaration(self, node: cst.Global | cst.Nonlocal, keyword: str) -> None:
        frame = self.context.function
        if frame is None or not frame.traced:
            return
        written = [n.name.value for n in node.names if n.name.value in frame.scope.assignments]
        if written:
            self.report(node, f"{keyword} {', '.join(written)} written in a traced function runs once "
                              f"per trace, not once per call; keep the state in a tf.Variable")

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _MUTATING_METHODS:
            self._mutation(node, func.value, f".{func.attr.value}()")

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Subscript):
            self._mutation(node, node.target.value, "item update")

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Subscript):
                self._mutation(node, target.target.value, "item assignment")
                return

    def _mutation(self, node: cst.CSTNode, container: cst.BaseExpression, what: str) -> None:
        frame = self.context.function
        if frame is None or not frame.traced or not isinstance(container, cst.Name):
            return
        name = container.value
        if frame.scope.binds(name):
            return  # a local container: its mutations are part of this trace only
        found = self.context.lookup(name)
        if found is None or found[1] is None or self.context.value_kind(found[1]) is not Kind.PY_CONTAINER:
            return
        where = "module-level" if found[0] is self.context.module_scope else "closure"
        self.report(node, f"{what} on the {where} container {name} in a traced function runs once per "
                          f"trace, not once per call; use a tf.Variable or return the value")
