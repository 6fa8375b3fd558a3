"""TFM1xx: graphs built by tf.function (and every other function TensorFlow traces)."""

from __future__ import annotations

import re

import libcst as cst

from tf_memlint.context import TRACED_SCOPE
from tf_memlint.facts.arrays import NUMPY_FILE_READERS, NUMPY_SHAPED_FACTORIES
from tf_memlint.facts.sessions import TF1_GRAPH_CALLS
from tf_memlint.gate import (ANYWHERE, ITEM_WRITE, LOOP, NUMPY_ARRAY, NUMPY_NAME, TF_FUNCTION_CALL, TRACED,
                             Inside)
from tf_memlint.scopes import AT_POINT
from tf_memlint.syntax import Kind, code_of, target_names
from tf_memlint.rule import Rule, register
from tf_memlint.walk import walk

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
    triggers = TRACED_SCOPE
    structure = Inside(TRACED, {"For", "While"})  # a loop of a traced function
    options = _UNROLL_OPTION

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
    triggers = TRACED_SCOPE
    structure = Inside(TRACED, {"For", "While"})  # a loop of a traced function
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
            kind, count = context.tracing.loop_kind(loop)
            if kind == "graph":
                self.report(node, f"{func.value.value}.append() inside a graph loop keeps only the "
                                  f"last traced value or raises InaccessibleTensorError; use tf.TensorArray")
                return
            if kind == "python" and count >= self.settings["min_unrolled_iterations"]:
                self.report(node, f"{func.value.value}.append() in a loop unrolled {count} times "
                                  f"copies every element into the graph; use tf.TensorArray with tf.range")
                return


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
    # Opt-in since round 5: 0 of 5 findings worth acting on in the fresh held-out sets
    # (rules/TFM103.md): deliberate trace-time flags and per-call containers of library code.
    default_enabled = False
    name = "python-state-in-traced-function"
    summary = "global/nonlocal writes or outer Python containers mutated inside a traced function"
    triggers = TRACED_SCOPE
    # global/nonlocal, a mutating method, an item write, in a traced function
    structure = Inside(TRACED, {"Global", "Nonlocal", ITEM_WRITE} | {"." + m for m in _MUTATING_METHODS})

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
        found = self.context.binding(name)
        if found is None or found.value is None or self.context.value_kind(found.value) is not Kind.PY_CONTAINER:
            return
        if self._slot_guarded(name) or self._deliberate(frame):
            return
        if isinstance(node, cst.AugAssign) and isinstance(node.operator, cst.AddAssign) \
                and (_TRACE_NAME(name) or _TRACE_NAME(code_of(node.target))):
            return  # counters["traces"] += 1: a deliberate trace counter
        if what == ".append()" and _TRACE_NAME(name):
            return  # traces.append(x.dtype): a test recording each trace, on purpose
        where = "module-level" if found.scope is self.context.module_scope else "closure"
        self.report(node, f"{what} on the {where} container {name} in a traced function runs once per "
                          f"trace, not once per call; use a tf.Variable or return the value")


# --- TFM104-TFM106 -------------------------------------------------------------------------------

# Two values of a flag (True/False) mean two traces: by design, not a memory problem. Three or
# more distinct Python numbers from a loop is a family of traces that grows with the work. A few
# hand-written calls with different literals (f(x, 2); f(x, 3)) are not reported: their traces are
# bounded by the code, not the work (all 12 held-out findings of that form, in heldout3, were a
# teaching quiz showing retracing on purpose). A loop's trip count is read where the call is
# (AT_POINT): a test's case list bound to a name (`for flag in FLAGS`) has the length it is
# written with, not an unknown one taken as large.
MIN_DISTINCT_VALUES = 3


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
    # Opt-in: its one held-out finding was not worth acting on (rules/TFM107.md).
    default_enabled = False
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


@register
class TfFunctionCreatedInLoop(Rule):
    """``tf.function(...)`` or a ``@tf.function`` def inside a loop body.

    Bad::

        for batch in batches:
            step = tf.function(normalise)    # a new function, traced again, every iteration
            out = step(batch)

    Good::

        step = tf.function(normalise)        # created (and traced) once
        for batch in batches:
            out = step(batch)
    """

    code = "TFM105"

    # Opt-in: 0 of 1 findings worth acting on in the held-out corpus (rules/TFM105.md).

    default_enabled = False
    name = "tf-function-created-in-loop"
    summary = "tf.function created inside a loop is traced again on every iteration"
    triggers = TRACED_SCOPE  # tf.function in a loop

    def __init__(self, context, settings) -> None:
        super().__init__(context, settings)
        self._decorators: set[int] = set()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        decorator = self.context.tracing.tf_function_decorator(node)
        if decorator is None:
            return
        self._decorators.add(id(decorator))
        frames = self.context.frames  # the def's own frame is already pushed
        loops = frames[-2].loops if len(frames) > 1 else self.context.module_loops
        if not loops:
            return
        own = self.context.scopes[node]
        varying = {name for name in _names_bound_in(loops) if not own.binds(name)} - {node.name.value}
        if _mentions(node.body, varying):
            return  # closes over a value of this iteration: a different function each time
        self.report(node.name, f"@tf.function def {node.name.value} inside a loop creates a new "
                               f"function that is traced again on every iteration; define it once "
                               f"before the loop and pass what changes as tensor arguments")

    def visit_Call(self, node: cst.Call) -> None:
        loops = self.context.open_loops
        if loops and self.context.tracing.is_tf_function_call(node.func):
            # tf.function(f)(jd, ...) with a value bound in the loop: if that value is a Python
            # object (a model, a distribution), it retraces even when hoisted; nothing to gain.
            if any(_mentions(arg.value, _names_bound_in(loops)) for arg in node.args):
                self._decorators.add(id(node.func))
        if id(node) in self._decorators or not self.context.tracing.is_tf_function_call(node):
            return
        if not loops:
            return
        wrapped = node.args[0].value if node.args else None
        if wrapped is not None and _mentions(wrapped, _names_bound_in(loops)):
            return  # a different function every iteration (tf.function(model.call) for each model)
        self.report(node, "tf.function(...) inside a loop creates a new function that is traced again "
                          "on every iteration; create it once before the loop")


def _names_bound_in(loops: list[cst.For | cst.While]) -> set[str]:
    names: set[str] = set()

    class Binder(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                names.update(target_names(target.target))

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            names.update(target_names(node.target))

        def visit_For(self, node: cst.For) -> None:
            names.update(target_names(node.target))

        def visit_WithItem(self, node: cst.WithItem) -> None:
            if node.asname is not None:
                names.update(target_names(node.asname.name))

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            names.add(node.name.value)
            return False

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

    for loop in loops:
        walk(loop, Binder())
    return names


def _mentions(expr: cst.BaseExpression, names: set[str]) -> bool:
    found = False

    class Finder(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            nonlocal found
            found = found or node.value in names

        def visit_Attribute(self, node: cst.Attribute) -> bool:
            walk(node.value, self)  # the attribute name itself is not a variable
            return False

    walk(expr, Finder())
    return found


# A 40 MB array gave a 40-80 MB GraphDef (measured); 1 MB is where an embedded copy starts to be
# a noticeable share of a graph. Arrays of known smaller size (np.array([1, 2, 3])) are harmless.
MIN_ARRAY_BYTES = 1_000_000
_METADATA_ATTRIBUTES = frozenset({"shape", "dtype", "ndim", "size", "nbytes", "itemsize"})
_EMBEDDING_CALLS = frozenset({"tensorflow.constant", "tensorflow.data.Dataset.from_tensor_slices"})


@register
class LargeConstantInGraph(Rule):
    """A NumPy array embedded in a graph as a constant.

    Bad::

        table = np.load("table.npy")

        @tf.function
        def lookup(idx):
            return tf.gather(table, idx)   # the whole array is copied into the GraphDef

    Good::

        table = tf.Variable(np.load("table.npy"), trainable=False)   # or pass it as an argument

        @tf.function
        def lookup(idx):
            return tf.gather(table, idx)
    """

    code = "TFM106"
    # Opt-in since round 5: 0 of 5 findings worth acting on in the fresh held-out sets
    # (rules/TFM106.md): test constants embedded once, an array of unknown size in dead code.
    default_enabled = False
    name = "large-constant-in-graph"
    summary = "NumPy array captured by or converted inside a traced function is embedded in the graph"
    triggers = TRACED_SCOPE | TF1_GRAPH_CALLS  # traced code, or a TF1 graph
    # a NumPy array (facts/arrays.py) in traced code, or embedded in a TF1 graph
    structure = Inside(TRACED, {NUMPY_NAME, NUMPY_ARRAY}) | (
        Inside(ANYWHERE, TF1_GRAPH_CALLS) & Inside(ANYWHERE, _EMBEDDING_CALLS) & Inside(ANYWHERE, {NUMPY_ARRAY}))
    options = {
        "min_array_bytes": (
            MIN_ARRAY_BYTES,
            "smallest statically known NumPy array size (bytes) worth reporting",
        ),
    }

    def __init__(self, context, settings) -> None:
        super().__init__(context, settings)
        self._skip: set[int] = set()
        self._reported: set[tuple[int, str]] = set()

    def _large(self, expr: cst.BaseExpression, captured: bool) -> bool:
        """Known size: at least min_array_bytes. Unknown size: an array read from a file, or an
        array sized by a parameter (``np.linspace(0, 1, n)``) that a traced function captures.
        Silent on ``np.array(<a list built at run time>)``, ``np.dot(a, b)`` and other derived
        arrays, and on ``tf.constant(np.random.rand(n))``: in real code mostly small."""
        nbytes = self.context.arrays.nbytes(expr)
        if nbytes is not None:
            return nbytes >= self.settings["min_array_bytes"]
        origin = self.context.arrays.origin(expr)
        return origin in NUMPY_FILE_READERS or (captured and origin in NUMPY_SHAPED_FACTORIES)

    def _size_text(self, expr: cst.BaseExpression) -> str:
        nbytes = self.context.arrays.nbytes(expr)
        return f" ({nbytes / 1e6:.1f} MB)" if nbytes is not None else ""

    # Names that are not uses of a captured array's values.
    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._skip.add(id(node.attr))
        if node.attr.value in _METADATA_ATTRIBUTES:
            self._skip.add(id(node.value))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._skip.add(id(node.keyword))

    def visit_Subscript(self, node: cst.Subscript) -> None:
        self._skip.add(id(node.value))  # an element or slice, usually small

    def visit_Param(self, node: cst.Param) -> None:
        if node.default is not None:  # evaluated outside the trace; an argument, not a capture
            self._skip.add(id(node.default))

    def visit_Call(self, node: cst.Call) -> None:
        context = self.context
        if isinstance(node.func, cst.Name) and node.func.value in ("len", "isinstance", "type") and node.args:
            self._skip.add(id(node.args[0].value))
            return
        name = context.call_name(node)
        if name not in _EMBEDDING_CALLS or not node.args:
            return
        if not (context.in_traced_function or context.sessions.builds_tf1_graph):
            return
        value = node.args[0].value
        arrays = [e.value for e in value.elements] if isinstance(value, (cst.Tuple, cst.List)) \
            and name.endswith("from_tensor_slices") else [value]
        if isinstance(value, cst.Dict) and name.endswith("from_tensor_slices"):
            arrays = [e.value for e in value.elements if isinstance(e, cst.DictElement)]
        for array in arrays:
            if context.arrays.is_ndarray(array) and self._large(array, captured=False):
                where = "a traced function" if context.in_traced_function else "a TF1 graph"
                self.report(node, f"{code_of(node.func)}() of the NumPy array {code_of(array)}{self._size_text(array)} "
                                  f"in {where} embeds the array in the GraphDef; feed it as an argument, "
                                  f"a tf.Variable or a placeholder instead")
                for element in arrays:
                    self._skip.add(id(element))
                    if isinstance(element, cst.Name) and context.function is not None:
                        self._reported.add((id(context.function.node), element.value))
                return

    def visit_Name(self, node: cst.Name) -> None:
        context = self.context
        if id(node) in self._skip or not context.in_traced_function:
            return
        frame = context.function
        key = (id(frame.node), node.value)
        if key in self._reported:
            return
        found = context.binding(node.value)
        if found is None or found.value is None:
            return
        scope = found.scope
        owner = next((f for f in context.frames if f.scope is scope), None)
        if scope is frame.scope or (owner is not None and owner.traced):
            return  # bound inside the graph being traced: not a capture from Python
        if scope is not context.module_scope and owner is None:
            return  # a class body
        if not context.arrays.is_ndarray(found.value) or not self._large(found.value, captured=True):
            return
        self._reported.add(key)
        self.report(node, f"the NumPy array {node.value}{self._size_text(found.value)} captured by a traced "
                          f"function is embedded in its GraphDef as a constant; pass it as an argument "
                          f"or keep it in a tf.Variable")
