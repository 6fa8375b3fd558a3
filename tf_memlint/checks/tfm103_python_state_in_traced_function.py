"""TFM103 python-state-in-traced-function: Python state outside a traced function written inside it."""

from __future__ import annotations

import re

import libcst as cst

from tf_memlint.evidence import ONCE, Repetition
from tf_memlint.facts.tracing import MUTATING_METHODS, TRACED_SCOPE
from tf_memlint.gate import OUTER_MUTATION, TRACED, Inside
from tf_memlint.syntax import Kind, code_of
from tf_memlint.rule import Rule, register
from tf_memlint.walk import walk


def _is_none_test(test: cst.BaseExpression, name: str) -> bool:
    """``name is None``: the guard of the lazy creation idiom."""
    return (isinstance(test, cst.Comparison) and isinstance(test.left, cst.Name) and test.left.value == name
            and len(test.comparisons) == 1 and isinstance(test.comparisons[0].operator, cst.Is)
            and isinstance(test.comparisons[0].comparator, cst.Name)
            and test.comparisons[0].comparator.value == "None")


def _only_created_once(function: cst.CSTNode, name: str) -> bool:
    """Every write of ``name`` sits under ``if name is None:``: the documented way to create a
    tf.Variable or generator on the first trace only (later traces see it already set)."""
    guarded: set[int] = set()

    class Guards(cst.CSTVisitor):
        def visit_If(self, node: cst.If) -> None:
            if _is_none_test(node.test, name):
                class Inner(cst.CSTVisitor):
                    def visit_Assign(self, inner: cst.Assign) -> None:
                        guarded.add(id(inner))
                walk(node.body, Inner())

    writes = _writes_of(function, name)
    if writes:
        walk(function, Guards())
    return bool(writes) and all(id(w) in guarded for w in writes)


def _writes_of(function: cst.CSTNode, name: str) -> list[cst.Assign | cst.AugAssign]:
    """Every ``name = ...`` and ``name op= ...`` in ``function``, in source order."""
    writes: list[cst.Assign | cst.AugAssign] = []

    class Writes(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            if any(isinstance(t.target, cst.Name) and t.target.value == name for t in node.targets):
                writes.append(node)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            if isinstance(node.target, cst.Name) and node.target.value == name:
                writes.append(node)

    walk(function, Writes())
    return writes


# A deliberate trace counter names traces (103-A: tensorflow/docs random_numbers `num_traces`,
# trace counters in tests on unseen code); only the name tells it from a per-call counter.
_TRACE_NAME = re.compile(r"trac(e|es|ed|ing)(?![a-z])|trace_?count|num_?trac", re.IGNORECASE).search


def _trace_counter(function: cst.CSTNode, name: str) -> bool:
    """Every write of the global ``name`` is ``name += ...`` and the name says it counts traces."""
    if not _TRACE_NAME(name):
        return False
    writes = _writes_of(function, name)
    return bool(writes) and all(isinstance(w, cst.AugAssign) and isinstance(w.operator, cst.AddAssign)
                                for w in writes)


def _names_container(expr: cst.BaseExpression, name: str) -> bool:
    return isinstance(expr, cst.Name) and expr.value == name


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
    once_confidence = "medium"
    name = "python-state-in-traced-function"
    summary = "global/nonlocal writes or outer Python containers mutated inside a traced function"
    triggers = TRACED_SCOPE
    # global/nonlocal in a traced function, or a mutation there of a name its function does not
    # bind (_mutation: a local container is the trace's own)
    structure = Inside(TRACED, {"Global", "Nonlocal"}) | Inside(TRACED, {OUTER_MUTATION})

    def __init__(self, context, settings) -> None:
        super().__init__(context, settings)
        self._ifs: list[cst.If] = []
        self._init_scopes = 0
        self._with_init: list[bool] = []

    def visit_If(self, node: cst.If) -> None:
        self._ifs.append(node)

    def leave_If(self, original_node: cst.If) -> None:
        self._ifs.pop()

    def visit_With(self, node: cst.With) -> None:
        lifted = any(self.context.call_name(item.item) == "tensorflow.init_scope" for item in node.items)
        self._with_init.append(lifted)
        self._init_scopes += lifted

    def leave_With(self, original_node: cst.With) -> None:
        self._init_scopes -= self._with_init.pop()

    def _deliberate(self, frame) -> bool:
        """Trace-time side effects written on purpose: inside ``with tf.init_scope():`` (lifted out
        of the graph: registration), or in a function traced once through a single
        ``f.get_concrete_function(...)`` and never called."""
        if self._init_scopes:
            return True
        node = frame.node
        if not isinstance(node, cst.FunctionDef):
            return False
        uses = [n for n in self.context.nodes_in(self.context.module, into_functions=True)
                if isinstance(n, cst.Attribute) and isinstance(n.value, cst.Name)
                and n.value.value == node.name.value]
        names = [n for n in self.context.nodes_in(self.context.module, into_functions=True)
                 if isinstance(n, cst.Name) and n.value == node.name.value and n is not node.name]
        return len(uses) == 1 and uses[0].attr.value == "get_concrete_function" and len(names) == 1

    def _slot_guarded(self, name: str) -> bool:
        """Create-on-first-trace with a container slot: the write sits under ``if slot[0] is None:``,
        ``if not slot:``, ``if not slot[0]:``, ``if len(slot) == 0:`` on the same container."""
        for test in (i.test for i in self._ifs):
            if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
                test = test.expression
                if isinstance(test, cst.Subscript):
                    test = test.value  # `if not slot[0]:`, as `if slot[0] is None:`
                if _names_container(test, name):
                    return True
            if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
                op, right = test.comparisons[0].operator, test.comparisons[0].comparator
                left = test.left
                if isinstance(op, cst.Is) and isinstance(right, cst.Name) and right.value == "None" \
                        and isinstance(left, cst.Subscript) and _names_container(left.value, name):
                    return True
                if isinstance(op, cst.Equal) and isinstance(left, cst.Call) and code_of(left.func) == "len" \
                        and left.args and _names_container(left.args[0].value, name):
                    return True
        return False

    def visit_Global(self, node: cst.Global) -> None:
        self._declaration(node, "global")

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self._declaration(node, "nonlocal")

    def _declaration(self, node: cst.Global | cst.Nonlocal, keyword: str) -> None:
        frame = self.context.function
        if frame is None or not frame.traced:
            return
        written = [n.name.value for n in node.names if n.name.value in frame.scope.assignments
                   and not _only_created_once(frame.node, n.name.value)
                   and not _trace_counter(frame.node, n.name.value)]
        if written and not self._deliberate(frame):
            self.report(node, f"{keyword} {', '.join(written)} written in a traced function runs once "
                              f"per trace, not once per call; keep the state in a tf.Variable")

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in MUTATING_METHODS:
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
        found = self.context.binding(name)
        if found is None or found.value is None or self.context.value_kind(found.value) is not Kind.PY_CONTAINER:
            return
        if any(outer.traced and outer.scope is found.scope for outer in self.context.frames[:-1]):
            # Made in an enclosing traced function (a tf.cond branch appending to its caller's
            # list): a new container per trace, so its mutations are part of that trace only.
            return
        if self._slot_guarded(name) or self._deliberate(frame):
            return
        if isinstance(node, cst.AugAssign) and isinstance(node.operator, cst.AddAssign) \
                and (_TRACE_NAME(name) or _TRACE_NAME(code_of(node.target))):
            return  # counters["traces"] += 1: a deliberate trace counter
        if what == ".append()" and _TRACE_NAME(name):
            return  # traces.append(x.dtype): a test recording each trace, on purpose
        where = "module-level" if found.scope is self.context.module_scope else "closure"
        # Read back in the same traced function, the container's value is frozen into the graph
        # at trace time: every call computes with it, which is wrong on the second call already.
        read_back = _reads(self.context, frame.node, name, node)
        self.report(node, f"{what} on the {where} container {name} in a traced function runs once per "
                          f"trace, not once per call; use a tf.Variable or return the value",
                    repetition=Repetition(ONCE, basis=f"{name} is read back: frozen at trace time") if read_back else None,
                    once_confidence="high" if read_back else None)


def _reads(context, function: cst.CSTNode, name: str, mutation: cst.CSTNode) -> bool:
    """``name`` is read in ``function`` outside the statement that mutates it."""
    inside = {id(n) for n in context.nodes_in(mutation)}
    return any(type(n) is cst.Name and n.value == name and id(n) not in inside and n is not mutation
               for n in context.nodes_in(function))
