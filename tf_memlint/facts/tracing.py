"""What TensorFlow traces into a graph: traced and mapped functions, tf.function bindings and
retracing, and the loops of traced code (unrolled Python loops vs graph loops). TFM1xx, TFM301.

Which bodies are traced is decided from the pre-pass (``g = tf.function(f)`` may come after
``def f``); the core context asks ``is_traced_def`` / ``is_traced_lambda`` / ``is_mapped`` when its
walk enters a function, and records the answer in the frame.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

import libcst as cst

from tf_memlint.facts.keras import KERAS_BASE_CLASSES
from tf_memlint.facts.sessions import TF1_GRAPH_CALLS
from tf_memlint.scopes import AT_POINT
from tf_memlint.syntax import (Kind, argument, contains, dotted_name, function_name, has_input_signature, number_literal,
                               target_names)

if TYPE_CHECKING:
    from tf_memlint.context import TFContext
    from tf_memlint.scopes import Scope

# Below this many iterations an unrolled loop is a few hundred graph nodes: idiomatic, not a
# memory problem (measured: 5 nodes per iteration, +12 MiB RSS at 10 -> +76 MiB at 1000).
MIN_UNROLLED_ITERATIONS = 100
UNROLL_OPTION = {
    "min_unrolled_iterations": (
        MIN_UNROLLED_ITERATIONS,
        "smallest static trip count of a Python loop in a traced function that counts as large",
    ),
}
# Two values of a flag (True/False) mean two traces: by design, not a memory problem. Three or
# more distinct Python numbers from a loop is a family of traces that grows with the work. A few
# hand-written calls with different literals (f(x, 2); f(x, 3)) are not reported: their traces are
# bounded by the code, not the work (all 12 held-out findings of that form in one set were a
# teaching quiz showing retracing on purpose). A loop's trip count is read where the call is
# (AT_POINT): a test's case list bound to a name (`for flag in FLAGS`) has the length it is
# written with, not an unknown one taken as large.
MIN_DISTINCT_VALUES = 3
TF_FUNCTION = "tensorflow.function"
# What runs a function once per element (``is_mapped``): tf.map_fn, and Dataset.map.
MAP_FN = "tensorflow.map_fn"
DATASET_MAP_METHODS = frozenset({"map"})
# Calls whose function arguments TensorFlow traces into a graph.
TRACING_CALLS = frozenset({
    TF_FUNCTION,
    MAP_FN,
    "tensorflow.vectorized_map",
    "tensorflow.scan",
    "tensorflow.foldl",
    "tensorflow.foldr",
    "tensorflow.while_loop",
    "tensorflow.cond",
    "tensorflow.case",
    "tensorflow.switch_case",
    "tensorflow.autograph.experimental.do_not_convert",  # still traced, just not converted
})
# Calls that run their function argument as plain Python, outside the graph.
PYTHON_CALLS = frozenset({
    "tensorflow.py_function",
    "tensorflow.numpy_function",
    "tensorflow.py_func",
})
# tf.data.Dataset methods whose function argument is traced.
DATASET_TRACING_METHODS = frozenset({"map", "filter", "flat_map", "interleave", "reduce", "scan"})
# Canonical names whose calls may make a tf.data.Dataset (is_dataset's own test is narrower).
DATASET_SOURCES = ("tensorflow.data", "tensorflow_datasets")
# Gate triggers (see gate.py) of everything that can make a function traced: the tracing calls,
# the Keras Model/Layer bases, tf.data datasets. A rule that fires only in traced code declares it.
TRACED_SCOPE: frozenset[str] = frozenset(
    TRACING_CALLS | KERAS_BASE_CLASSES
    | {f"{source}&.{method}" for source in DATASET_SOURCES for method in DATASET_TRACING_METHODS}
)
# Keras methods that Keras traces (compiles into a graph) when the model is fit or built.
KERAS_TRACED_METHODS = frozenset({"call", "train_step", "test_step", "predict_step"})
# Methods that change a Python container in place: on a container from outside a traced function,
# they run once per trace (TFM103).
MUTATING_METHODS = frozenset({
    "append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "add",
    "discard", "appendleft", "popleft", "extendleft", "sort", "reverse", "popitem",
})

# Shapes that change from call to call (TFM107). Calls that make a tensor or array of a given
# shape: (position, keyword) of the shape argument.
TF_SHAPED_FACTORIES = {
    "tensorflow.zeros": (0, "shape"), "tensorflow.ones": (0, "shape"), "tensorflow.fill": (0, "dims"),
    "tensorflow.random.normal": (0, "shape"), "tensorflow.random.uniform": (0, "shape"),
    "tensorflow.random.truncated_normal": (0, "shape"),
}
NUMPY_SHAPED = {
    "zeros": (0, "shape"), "ones": (0, "shape"), "empty": (0, "shape"), "full": (0, "shape"),
    "random.random": (0, "size"), "random.random_sample": (0, "size"),
    "random.standard_normal": (0, "size"), "random.normal": (2, "size"), "random.uniform": (2, "size"),
}
NUMPY_DIMS_AS_ARGUMENTS = frozenset({"random.rand", "random.randn"})  # np.random.rand(i, 8)
RANGES = frozenset({"tensorflow.range", "numpy.arange"})
# Calls that turn a Python list into one tensor/array whose shape follows the list's length.
LIST_CONVERTERS = frozenset({
    "tensorflow.constant", "tensorflow.convert_to_tensor", "tensorflow.stack", "tensorflow.concat",
    "numpy.array", "numpy.asarray", "numpy.stack", "numpy.concatenate",
})
# ``v = tf.concat([v, piece], axis)``: v grows by one piece per iteration.
GROWING_CONCATS = frozenset({
    "tensorflow.concat", "numpy.concatenate", "numpy.append", "numpy.vstack", "numpy.hstack",
    "numpy.row_stack", "numpy.column_stack",
})
# Converters whose result has the shape of their argument (an array or tensor passed in).
_SHAPE_KEEPING_CONVERTERS = frozenset({"tensorflow.constant", "tensorflow.convert_to_tensor",
                                       "numpy.array", "numpy.asarray"})
_ELEMENTWISE = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Power)
_LIST_SHRINKING = frozenset({"pop", "remove", "clear", "popleft"})
_LIST_GROWING = frozenset({"append", "extend", "insert"})


def relaxes_shapes(call: cst.BaseExpression) -> bool:
    """``tf.function(..., reduce_retracing=...)`` (or its old name ``experimental_relax_shapes``)
    not literally False, or ``tf.function(f, <input_signature>)`` given positionally: one trace
    serves many shapes (measured: 2 traces for 40 prefix lengths with reduce_retracing=True)."""
    if not isinstance(call, cst.Call):
        return False
    for position, arg in enumerate(call.args):
        if arg.keyword is None:
            if position == 1 and not (isinstance(arg.value, cst.Name) and arg.value.value == "None"):
                return True  # tf.function(f, [tf.TensorSpec(...)])
            continue
        if arg.keyword.value in ("reduce_retracing", "experimental_relax_shapes") \
                and not (isinstance(arg.value, cst.Name) and arg.value.value in ("False", "None")):
            return True
    return False


class TracingFacts:
    def __init__(self, context: TFContext, calls: list[tuple[cst.Call, Scope]]) -> None:
        self.context = context
        self._eager_maps: set[int] = set()
        # tf.map_fn called in eager TF2 code runs its function eagerly, once per element, in
        # sequence: nothing is traced or embedded in a graph. Two passes: the bodies
        # traced without map_fn first, then a map_fn counts only where its caller is traced.
        traced = self._find_traced_functions([(c, s) for c, s in calls
                                              if context.call_name(c) != MAP_FN])
        tf1 = any(context.call_name(c) in TF1_GRAPH_CALLS for c, _s in calls)  # map_fn is a graph op there
        for call, scope in calls:
            if context.call_name(call) == MAP_FN and not tf1 \
                    and not self._traced_scope(scope, traced[0], traced[1]):
                self._eager_maps.add(id(call))
        calls = [(c, s) for c, s in calls if id(c) not in self._eager_maps]
        (self.traced_function_names, self.traced_lambdas,
         self.python_function_names, self.python_lambdas) = self._find_traced_functions(calls)
        self.mapped_function_names, self.mapped_lambdas = self._find_mapped_functions(calls)
        # {scope node: names every binding of which is a tf.function without input_signature}
        self.tf_function_bindings = self._find_tf_function_bindings()
        # The same, less those that relax shapes (reduce_retracing=True): one trace per shape.
        self.shape_tracing_bindings = self._find_tf_function_bindings(shapes=True)
        self.decorated_traced_names = {node.name.value for node in context.scopes
                                       if isinstance(node, cst.FunctionDef) and self.tf_function_decorator(node) is not None}

    # Which bodies are traced (asked by the core when its walk enters one) ----------------------
    def is_traced_def(self, node: cst.FunctionDef) -> bool:
        context = self.context
        name = node.name.value
        if name in self.python_function_names:
            return False
        if self.tf_function_decorator(node) is not None:
            return True
        if name in self.traced_function_names:
            return True
        if context.frames and context.frames[-1].traced:
            return True  # a def nested in a traced function is traced when it is called
        owner = context.enclosing_class
        return (name in KERAS_TRACED_METHODS and owner is not None
                and owner.name.value in context.keras.layer_classes
                and (not context.frames or context.frames[-1].node is not node))

    def is_traced_lambda(self, node: cst.Lambda) -> bool:
        if node in self.python_lambdas:
            return False
        frames = self.context.frames
        return node in self.traced_lambdas or bool(frames and frames[-1].traced)

    def is_mapped(self, node: cst.CSTNode) -> bool:
        """A function run once per element by ``tf.map_fn`` or ``Dataset.map``."""
        if isinstance(node, cst.Lambda):
            return node in self.mapped_lambdas
        return isinstance(node, cst.FunctionDef) and node.name.value in self.mapped_function_names

    @staticmethod
    def _function_arguments(call: cst.Call) -> Iterator[cst.BaseExpression]:
        for arg in call.args:
            value = arg.value
            if isinstance(value, (cst.List, cst.Tuple)):  # tf.switch_case(i, [f, g])
                yield from (e.value for e in value.elements)
            elif isinstance(value, cst.Dict):  # tf.switch_case(i, {0: f, 1: g})
                yield from (e.value for e in value.elements if isinstance(e, cst.DictElement))
            else:
                yield value

    def _traced_scope(self, scope, traced_names: set[str], traced_lambdas: set) -> bool:
        """``scope`` (or a function around it) is traced: decorated, passed to a tracing call,
        a Keras-traced method."""
        while scope is not None:
            node = scope.node
            if isinstance(node, cst.FunctionDef) and (
                    self.tf_function_decorator(node) is not None or node.name.value in traced_names
                    or node.name.value in KERAS_TRACED_METHODS):
                return True
            if isinstance(node, cst.Lambda) and node in traced_lambdas:
                return True
            scope = scope.parent
        return False

    def is_eager_map(self, call: cst.CSTNode) -> bool:
        """A ``tf.map_fn(...)`` call made in eager code: its function runs eagerly."""
        return id(call) in self._eager_maps

    def _dataset_method_call(self, call: cst.Call, methods: frozenset[str]) -> bool:
        """``ds.map(...)`` (a method in ``methods``) on a known dataset."""
        return (isinstance(call.func, cst.Attribute) and call.func.attr.value in methods
                and self.context.is_dataset(call.func.value))

    def _find_traced_functions(self, calls):
        traced_names: set[str] = set()
        traced_lambdas: set[cst.Lambda] = set()
        python_names: set[str] = set()
        python_lambdas: set[cst.Lambda] = set()
        for call, _scope in calls:
            name = self.context.call_name(call)
            if name in TRACING_CALLS:
                names, lambdas = traced_names, traced_lambdas
            elif name in PYTHON_CALLS:
                names, lambdas = python_names, python_lambdas
            elif name is None and self._dataset_method_call(call, DATASET_TRACING_METHODS):
                names, lambdas = traced_names, traced_lambdas
            else:
                continue
            for value in self._function_arguments(call):
                if isinstance(value, cst.Lambda):
                    lambdas.add(value)
                elif isinstance(value, cst.Name):
                    names.add(value.value)
                elif isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name) \
                        and value.value.value == "self":  # tf.function(self._step)
                    names.add(value.attr.value)
        return traced_names, traced_lambdas, python_names, python_lambdas

    def _find_mapped_functions(self, calls) -> tuple[set[str], set[cst.Lambda]]:
        """Functions run once per element: given to ``tf.map_fn`` or ``Dataset.map``.

        ``ds.map(lambda x, y: (augment(x), y))`` maps ``augment`` too: a lambda's direct callees
        (plain names or ``self.method``) run once per element as well.
        """
        names: set[str] = set()
        lambdas: set[cst.Lambda] = set()
        for call, _scope in calls:
            name = self.context.call_name(call)
            if name == MAP_FN:
                keyword = "fn"
            elif name is None and self._dataset_method_call(call, DATASET_MAP_METHODS):
                keyword = "map_func"
            else:
                continue
            fn = argument(call, 0, keyword)
            if isinstance(fn, cst.Lambda):
                lambdas.add(fn)
                body = fn.body
                parts = [e.value for e in body.elements] if isinstance(body, (cst.Tuple, cst.List)) else [body]
                for part in parts:
                    if isinstance(part, cst.Call):
                        callee = function_name(part.func)
                        if callee is not None:
                            names.add(callee)
            elif fn is not None:
                callee = function_name(fn)
                if callee is not None:
                    names.add(callee)
        return names - self.python_function_names, lambdas - self.python_lambdas

    # tf.function bindings and retracing (TFM104, TFM105) ---------------------------------------
    def tf_function_decorator(self, node: cst.FunctionDef) -> cst.BaseExpression | None:
        """The ``@tf.function`` / ``@tf.function(...)`` decorator of ``node``, if any."""
        for decorator in node.decorators:
            target = decorator.decorator
            func = target.func if isinstance(target, cst.Call) else target
            if self.context.qualified_name(func) == TF_FUNCTION:
                return target
        return None

    def is_tf_function_call(self, node: cst.CSTNode) -> bool:
        """``tf.function(f, ...)`` or ``tf.function(...)(f)``: a call that creates a tf.function."""
        if not isinstance(node, cst.Call):
            return False
        call_name = self.context.call_name
        if call_name(node) == TF_FUNCTION:
            return argument(node, 0, "func") is not None
        # tf.function(jit_compile=True)(f) creates; tf.function(f)(x) creates and then calls.
        return (isinstance(node.func, cst.Call) and call_name(node.func) == TF_FUNCTION
                and argument(node.func, 0, "func") is None)

    def _find_tf_function_bindings(self, shapes: bool = False) -> dict[cst.CSTNode, set[str]]:
        """Those are the functions that trace once per distinct Python argument value; with
        ``shapes``, those that also trace once per distinct tensor shape."""
        scopes = self.context.scopes
        counts: dict[cst.CSTNode, dict[str, int]] = {}
        for node, scope in scopes.items():
            if isinstance(node, cst.FunctionDef) and scope.parent is not None:
                decorator = self.tf_function_decorator(node)
                if decorator is not None and not has_input_signature(decorator) \
                        and not (shapes and relaxes_shapes(decorator)):
                    names = counts.setdefault(scope.parent.node, {})
                    names[node.name.value] = names.get(node.name.value, 0) + 1
            for name, values in scope.assignments.items():
                for value in values:
                    if value is None or not self.is_tf_function_call(value):
                        continue
                    if has_input_signature(value) or (
                            isinstance(value.func, cst.Call) and has_input_signature(value.func)):
                        continue
                    if shapes and (relaxes_shapes(value) or (
                            isinstance(value.func, cst.Call) and relaxes_shapes(value.func))):
                        continue
                    names = counts.setdefault(node, {})
                    names[name] = names.get(name, 0) + 1
        bindings: dict[cst.CSTNode, set[str]] = {}
        for node, names in counts.items():
            scope = scopes[node]
            bindings[node] = {name for name, count in names.items()
                              if name not in scope.params and count == len(scope.assignments.get(name, ()))}
        return bindings

    def tf_function_target(self, func: cst.BaseExpression, shapes: bool = False) -> tuple[cst.CSTNode, str] | None:
        """(scope node, name) when calling ``func`` calls a known tf.function that retraces on a
        new Python value: a decorated def or ``g = tf.function(f)``, or ``self.step`` for a
        decorated method of the enclosing class. With ``shapes``: one that also retraces on a
        new tensor shape (no ``reduce_retracing=True`` / ``experimental_relax_shapes=True``)."""
        context = self.context
        bindings = self.shape_tracing_bindings if shapes else self.tf_function_bindings
        if isinstance(func, cst.Name):
            found = context.binding(func.value)
            if found is not None and func.value in bindings.get(found.scope.node, ()):
                return found.scope.node, func.value
            return None
        if (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                and func.value.value == "self" and context.enclosing_class is not None):
            cls = context.enclosing_class
            if func.attr.value in bindings.get(cls, ()):
                return cls, func.attr.value
        return None

    def is_traced_callable(self, expr: cst.BaseExpression) -> bool:
        """A name for a ``tf.function``: a decorated def, or ``f = tf.function(g)`` at this point."""
        if not isinstance(expr, cst.Name):
            return False
        if expr.value in self.decorated_traced_names:
            return True
        value = self.context.value_of(expr, AT_POINT)
        return value is not None and self.context.call_name(value) == TF_FUNCTION

    def loop_number_targets(self, loop: cst.For) -> set[str]:
        """Names a Python ``for`` binds to a new Python number on every iteration: the target of
        ``range(...)`` or of a list/tuple of number literals, the index of ``enumerate``."""
        context = self.context
        iterable, target = loop.iter, loop.target
        if isinstance(iterable, cst.Name):
            value = context.value_of(iterable)
            if isinstance(value, (cst.List, cst.Tuple)):
                iterable = value
        if self._progress_range(iterable):
            return {target.value} if isinstance(target, cst.Name) else set()
        if isinstance(iterable, cst.Call) and dotted_name(iterable.func) == "range" \
                and "range" not in context.aliases:
            if context.in_traced_function and self.loop_kind(loop)[0] != "python":
                return set()  # range(tensor) in a traced function: a graph loop over tensors
            return {target.value} if isinstance(target, cst.Name) else set()
        if isinstance(iterable, cst.Call) and dotted_name(iterable.func) == "enumerate" \
                and not context.in_traced_function:
            if isinstance(target, (cst.Tuple, cst.List)) and target.elements \
                    and isinstance(target.elements[0].value, cst.Name):
                return {target.elements[0].value.value}
            return set()
        if isinstance(iterable, (cst.List, cst.Tuple)) and iterable.elements and all(
                number_literal(e.value) for e in iterable.elements):
            return {target.value} if isinstance(target, cst.Name) else set()
        return set()

    def _progress_range(self, iterable: cst.BaseExpression) -> bool:
        """A range behind a progress bar: ``trange(n)``, ``tqdm(range(n))`` (tqdm imported).
        Its counter is a Python int like range's, and is never a tensor, traced or not."""
        if not isinstance(iterable, cst.Call):
            return False
        name = self.context.imported_name(iterable.func)
        if name is None or not name.startswith("tqdm"):
            return False
        if name.rsplit(".", 1)[-1] == "trange":
            return True
        inner = argument(iterable, 0, "iterable")
        return (name.rsplit(".", 1)[-1] == "tqdm" and isinstance(inner, cst.Call)
                and dotted_name(inner.func) == "range" and "range" not in self.context.aliases)

    def varying_python_number(self, expr: cst.BaseExpression, _depth: int = 0) -> cst.For | cst.While | None:
        """The open loop in which ``expr`` is a Python number with a new value on every iteration
        (a loop variable over ``range``, an int counter ``i += 1`` bumped in the loop), else None."""
        context = self.context
        if _depth > 4:
            return None
        if isinstance(expr, cst.Name):
            for loop in reversed(context.open_loops):
                if isinstance(loop, cst.For) and expr.value in self.loop_number_targets(loop):
                    return loop
            scope = context.current_scope()
            if scope.binds(expr.value) and expr.value not in scope.declared_global:
                values = scope.all_values(expr.value)
                steps = scope.augmented.get(expr.value, [])
                if values and steps and all(context.int_value(v) is not None for v in values):
                    for loop in reversed(context.open_loops):
                        if any(contains(loop, step) for step in steps):
                            return loop
            return None
        if isinstance(expr, cst.BinaryOperation):
            left = self.varying_python_number(expr.left, _depth + 1)
            right = self.varying_python_number(expr.right, _depth + 1)
            if left is not None and (right is not None or number_literal(expr.right)
                                     or context.int_value(expr.right) is not None):
                return left
            if right is not None and (number_literal(expr.left) or context.int_value(expr.left) is not None):
                return right
            return None
        if isinstance(expr, cst.UnaryOperation):
            return self.varying_python_number(expr.expression, _depth + 1)
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) \
                and expr.func.value in ("float", "int", "bool", "round", "abs") and len(expr.args) == 1:
            return self.varying_python_number(expr.args[0].value, _depth + 1)
        return None

    # Shapes that change from call to call (TFM107) -------------------------------------------
    def varying_size(self, expr: cst.BaseExpression) -> cst.For | cst.While | None:
        """The open loop in which ``expr`` is a size with a new value on every iteration: a
        ``varying_python_number`` over ``range``/``enumerate`` or a counter. Not ``i % k`` (k
        values at most), nor the variable of a loop over a literal list of sizes: a fixed set of
        buckets written in the code, as many traces as the list is long, on purpose."""
        for node in [expr, *self.context.nodes_in(expr)]:
            if isinstance(node, cst.BinaryOperation) and isinstance(
                    node.operator, (cst.Modulo, cst.BitAnd, cst.RightShift)):
                return None
        loop = self.varying_python_number(expr)
        if isinstance(loop, cst.For):
            iterable = loop.iter
            if isinstance(iterable, cst.Name):
                iterable = self.context.value_of(iterable) or iterable
            if isinstance(iterable, (cst.List, cst.Tuple)):
                return None
        return loop

    def _bound_in(self, loop: cst.For | cst.While) -> set[str]:
        """Names (re)bound anywhere in ``loop``, its header included."""
        names: set[str] = set()
        for node in [loop, *self.context.nodes_in(loop)]:
            if isinstance(node, cst.Assign):
                for target in node.targets:
                    names.update(target_names(target.target))
            elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.NamedExpr)):
                names.update(target_names(node.target))
            elif isinstance(node, (cst.For, cst.CompFor)):
                names.update(target_names(node.target))
            elif isinstance(node, cst.WithItem) and node.asname is not None:
                names.update(target_names(node.asname.name))
        return names

    def _invariant(self, expr: cst.BaseExpression | None, loop: cst.For | cst.While) -> bool:
        """``expr`` has the same value on every iteration of ``loop``: absent, or made only of
        literals and names that the loop never rebinds."""
        if expr is None:
            return True
        bound = self._bound_in(loop)
        return not any(isinstance(n, cst.Name) and n.value in bound for n in [expr, *self.context.nodes_in(expr)])

    def _one_moving_bound(self, low, high, step=None) -> cst.For | cst.While | None:
        """The loop in which exactly one of two bounds moves while the other and the step stay
        put: ``[:i]``, ``[i:]``, ``[0:i + 1]``, ``range(i)``. Both moving (``[i:i + bs]``, a
        fixed-size window or batch) is a fixed length, at most one shorter last batch."""
        moving = [(b, self.varying_size(b)) for b in (low, high) if b is not None]
        loops = [loop for _, loop in moving if loop is not None]
        if len(loops) != 1:
            return None
        loop = loops[0]
        others = [b for b, found in moving if found is None]
        if all(self._invariant(b, loop) for b in others) and self._invariant(step, loop):
            return loop
        return None

    def _growing_list(self, name: str) -> cst.For | cst.While | None:
        """The innermost open loop in which the Python list ``name`` (bound before it to a list
        display, comprehension or ``list(...)``) grows: appended, extended or ``+=`` in the loop, and
        never rebound, popped, removed from or cleared there (a reset list or a sliding window)."""
        return self._accumulator(name, list_only=True)

    def _growing_array(self, name: str) -> cst.For | cst.While | None:
        """The innermost open loop that grows ``name`` by concatenating onto it
        (``v = tf.concat([v, piece], axis)``, ``np.append(v, x)``) and never rebinds it otherwise."""
        return self._accumulator(name, list_only=False)

    def _accumulator(self, name: str, list_only: bool) -> cst.For | cst.While | None:
        context = self.context
        scope = context.current_scope()
        if not scope.binds(name) or name in scope.declared_global or name in scope.declared_nonlocal:
            return None
        for loop in reversed(context.open_loops):
            grows = False
            for node in context.nodes_in(loop):
                verdict = self._accumulator_step(node, name, list_only)
                if verdict is False:
                    return None  # rebound or shrunk in this loop (and so in every loop around it)
                grows = grows or bool(verdict)
            if isinstance(loop, cst.For) and name in target_names(loop.target):
                return None
            if not grows:
                continue
            before = [v for v in scope.assignments.get(name, []) if v is None or not contains(loop, v)]
            if name in scope.params or not before:
                return None
            if list_only and not all(v is not None and self._is_list_value(v) for v in before):
                return None
            return loop
        return None

    def _is_list_value(self, value: cst.BaseExpression) -> bool:
        if isinstance(value, (cst.List, cst.ListComp)):
            return True
        if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Multiply):
            return isinstance(value.left, cst.List)  # [pad] * k
        return isinstance(value, cst.Call) and dotted_name(value.func) == "list" and "list" not in self.context.aliases

    def _accumulator_step(self, node: cst.CSTNode, name: str, list_only: bool) -> bool | None:
        """What ``node`` does to the accumulator ``name``: True grows it, False rebinds or
        shrinks it, None leaves it alone."""
        def named(expr) -> bool:
            return isinstance(expr, cst.Name) and expr.value == name

        if isinstance(node, cst.Assign):
            for target in node.targets:
                if name in target_names(target.target) and not named(target.target):
                    return False  # unpacked into: unknown
                if named(target.target):
                    return self._grows_onto(node.value, name, list_only)
                if isinstance(target.target, cst.Subscript) and named(target.target.value) and any(
                        isinstance(e.slice, cst.Slice) for e in target.target.slice):
                    return False  # lst[:] = ...
            return None
        if isinstance(node, cst.AugAssign) and named(node.target):
            return isinstance(node.operator, cst.AddAssign) and list_only
        if isinstance(node, (cst.AnnAssign, cst.NamedExpr)) and named(node.target):
            return False
        if isinstance(node, cst.WithItem) and node.asname is not None and name in target_names(node.asname.name):
            return False
        if isinstance(node, (cst.For, cst.CompFor)) and name in target_names(node.target):
            return False
        if isinstance(node, cst.Del):
            return False if any(isinstance(n, cst.Name) and n.value == name
                                for n in [node.target, *self.context.nodes_in(node.target)]) else None
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and named(node.func.value):
            method = node.func.attr.value
            if method in _LIST_SHRINKING:
                return False
            if method in _LIST_GROWING:
                return True if list_only else False
        return None

    def _grows_onto(self, value: cst.BaseExpression, name: str, list_only: bool) -> bool:
        """``name = <value>`` in the loop grows it: ``lst = lst + [x]`` for a list,
        ``v = tf.concat([v, x], 0)`` / ``v = np.append(v, x)`` for an array."""
        if list_only:
            return (isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add)
                    and isinstance(value.left, cst.Name) and value.left.value == name
                    and isinstance(value.right, (cst.List, cst.ListComp)))
        if not isinstance(value, cst.Call) or not value.args:
            return False
        called = self.context.call_name(value) or self.context.numpy_name(value.func)
        if called not in GROWING_CONCATS:
            return False
        first = value.args[0].value
        parts = [e.value for e in first.elements] if isinstance(first, (cst.List, cst.Tuple)) else [first]
        return len(parts) >= (1 if called == "numpy.append" else 2) and any(
            isinstance(p, cst.Name) and p.value == name for p in parts)

    def varying_shape(self, expr: cst.BaseExpression, _depth: int = 0) -> tuple[cst.For | cst.While, str] | None:
        """(loop, why) when ``expr`` is a tensor, array or Python list whose shape is different
        on every iteration of an open Python loop, decided from the code alone:

        * a slice with exactly one moving bound: ``x[:i]``, ``x[:, :t]``, ``seq[0:i + 1]``, ``x[i:]``;
        * a tensor/array made with a moving dimension: ``tf.zeros([i, d])``, ``np.ones((b, i))``,
          ``tf.range(i)``;
        * a Python list that only grows in the loop, passed as is or through ``tf.constant``,
          ``tf.convert_to_tensor``, ``np.array``, ``tf.stack`` ... (``[lst]`` too);
        * an array grown by concatenating onto itself (``v = tf.concat([v, x], 1)``);
        * a name bound to one of these in the loop.
        """
        context = self.context
        if _depth > 6:
            return None
        if isinstance(expr, cst.Subscript):
            for element in expr.slice:
                part = element.slice
                if isinstance(part, cst.Slice):
                    loop = self._one_moving_bound(part.lower, part.upper, part.step)
                    if loop is not None:
                        return loop, "a slice whose length changes every iteration"
            return None
        if isinstance(expr, cst.Name):
            loop = self._growing_list(expr.value)
            if loop is not None:
                return loop, "a Python list that grows every iteration"
            loop = self._growing_array(expr.value)
            if loop is not None:
                return loop, "a tensor concatenated onto itself every iteration"
            found = context.binding(expr.value, AT_POINT)
            if found is None or found.unpacked or found.value is None or found.value is expr:
                return None
            inner = self.varying_shape(found.value, _depth + 1)
            if inner is not None and contains(inner[0], found.value):
                return inner  # bound in the loop, anew on every iteration
            return None
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, _ELEMENTWISE):
            # np.random.rand(i) * scale + offset: broadcasting keeps the varying dimension
            return self.varying_shape(expr.left, _depth + 1) or self.varying_shape(expr.right, _depth + 1)
        if not isinstance(expr, cst.Call):
            return None
        name = context.call_name(expr)
        numpy = context.numpy_name(expr.func)
        short = numpy[len("numpy."):] if numpy is not None else None
        if name in LIST_CONVERTERS or numpy in LIST_CONVERTERS:
            source = argument(expr, 0, "value")
            if isinstance(source, (cst.List, cst.Tuple)) and len(source.elements) == 1:
                source = source.elements[0].value  # tf.constant([tokens]): a batch of one
            if isinstance(source, cst.Name):
                loop = self._growing_list(source.value)
                if loop is not None:
                    return loop, f"made from the list {source.value}, which grows every iteration"
            if source is not None and (name in _SHAPE_KEEPING_CONVERTERS or numpy in _SHAPE_KEEPING_CONVERTERS):
                return self.varying_shape(source, _depth + 1)  # tf.constant(np.random.rand(i))
            return None
        if name in RANGES or numpy in RANGES:
            bounds = [a.value for a in expr.args if a.keyword is None]
            if any(a.keyword is not None and a.keyword.value not in ("dtype", "name") for a in expr.args):
                return None
            if len(bounds) == 1:
                loop = self._one_moving_bound(None, bounds[0])
            elif len(bounds) in (2, 3):
                loop = self._one_moving_bound(bounds[0], bounds[1], bounds[2] if len(bounds) == 3 else None)
            else:
                loop = None
            return (loop, "a range whose length changes every iteration") if loop is not None else None
        if short in NUMPY_DIMS_AS_ARGUMENTS:
            dims = [a.value for a in expr.args if a.keyword is None]
        else:
            slot = TF_SHAPED_FACTORIES.get(name) if name is not None else NUMPY_SHAPED.get(short)
            if slot is None:
                return None
            shape = argument(expr, *slot)
            if shape is None:
                return None
            dims = [e.value for e in shape.elements] if isinstance(shape, (cst.List, cst.Tuple)) else [shape]
        for dim in dims:
            loop = self.varying_size(dim)
            if loop is not None:
                return loop, "a shape with a dimension that changes every iteration"
        return None

    # Loops in traced code (TFM101, TFM102) -----------------------------------------------------
    def is_python_int_counter(self, expr: cst.BaseExpression) -> bool:
        """A local name only ever bound to known Python ints (``i = 0`` ... ``i += 1``)."""
        function = self.context.function
        if not isinstance(expr, cst.Name) or function is None:
            return False
        values = function.scope.all_values(expr.value)
        return values is not None and all(self.context.int_value(v) is not None for v in values)

    def loop_kind(self, loop: cst.For | cst.While) -> tuple[str, int | None]:
        """("graph", None) for a loop AutoGraph turns into a tf.while_loop; ("python", n) for a
        Python loop known to run n times (unrolled when traced); ("unknown", None) otherwise."""
        context = self.context
        if isinstance(loop, cst.For):
            if self.is_tensor_iteration(loop.iter):
                return "graph", None
            count = context.trip_count(loop.iter)
            return ("python", count) if count is not None else ("unknown", None)
        comparison = loop.test
        if isinstance(comparison, cst.Comparison) and len(comparison.comparisons) == 1:
            left, right = comparison.left, comparison.comparisons[0].comparator
            if Kind.TENSOR in (context.value_kind(left), context.value_kind(right)):
                return "graph", None
            operator = comparison.comparisons[0].operator
            if self.is_python_int_counter(left) and isinstance(operator, (cst.LessThan, cst.LessThanEqual)):
                scope = context.function.scope  # type: ignore[union-attr]
                bound = context.int_value(right)
                first = context.int_value(scope.assignments[left.value][0])  # type: ignore[attr-defined]
                steps = scope.augmented.get(left.value, [])  # type: ignore[attr-defined]
                step = (context.int_value(steps[0].value)
                        if len(steps) == 1 and isinstance(steps[0].operator, cst.AddAssign) else None)
                if bound is not None and first is not None and step is not None and step > 0:
                    span = bound - first + isinstance(operator, cst.LessThanEqual)
                    return "python", max(0, -(-span // step))
        return "unknown", None

    def is_tensor_iteration(self, iterable: cst.BaseExpression) -> bool:
        """A ``for`` that AutoGraph turns into a graph loop: over a tensor, tf.range or a dataset."""
        value_kind = self.context.value_kind
        if isinstance(iterable, cst.Call) and dotted_name(iterable.func) == "range":
            return any(value_kind(a.value) is Kind.TENSOR for a in iterable.args)
        return value_kind(iterable) in (Kind.TENSOR, Kind.DATASET)
