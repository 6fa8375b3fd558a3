"""What TensorFlow traces into a graph: traced and mapped functions, tf.function bindings and
retracing, and the loops of traced code (unrolled Python loops vs graph loops). TFM1xx, TFM301.

Which bodies are traced is decided from the pre-pass (``g = tf.function(f)`` may come after
``def f``); the core context asks ``is_traced_def`` / ``is_traced_lambda`` / ``is_mapped`` when its
walk enters a function, and records the answer in the frame.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

import libcst as cst

from tf_memlint.scopes import AT_POINT
from tf_memlint.syntax import Kind, argument, contains, dotted_name, function_name, has_input_signature, number_literal

if TYPE_CHECKING:
    from tf_memlint.context import TFContext
    from tf_memlint.scopes import Scope

TF_FUNCTION = "tensorflow.function"
# Calls whose function arguments TensorFlow traces into a graph.
TRACING_CALLS = frozenset({
    TF_FUNCTION,
    "tensorflow.map_fn",
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
# Calls that say a file builds TF1 graphs (as facts.sessions.TF1_GRAPH_CALLS): map_fn there is a graph op.
_TF1_GRAPH_HINTS = frozenset({"tensorflow.Session", "tensorflow.InteractiveSession", "tensorflow.placeholder",
                              "tensorflow.disable_eager_execution", "tensorflow.disable_v2_behavior"})
# Keras methods that Keras traces (compiles into a graph) when the model is fit or built.
KERAS_TRACED_METHODS = frozenset({"call", "train_step", "test_step", "predict_step"})


class TracingFacts:
    def __init__(self, context: TFContext, calls: list[tuple[cst.Call, Scope]]) -> None:
        self.context = context
        self._eager_maps: set[int] = set()
        # tf.map_fn called in eager TF2 code runs its function eagerly, once per element, in
        # sequence: nothing is traced or embedded in a graph (issue 9). Two passes: the bodies
        # traced without map_fn first, then a map_fn counts only where its caller is traced.
        traced = self._find_traced_functions([(c, s) for c, s in calls
                                              if context.call_name(c) != "tensorflow.map_fn"])
        tf1 = any(context.call_name(c) in _TF1_GRAPH_HINTS for c, _s in calls)
        for call, scope in calls:
            if context.call_name(call) == "tensorflow.map_fn" and not tf1 \
                    and not self._traced_scope(scope, traced[0], traced[1]):
                self._eager_maps.add(id(call))
        calls = [(c, s) for c, s in calls if id(c) not in self._eager_maps]
        (self.traced_function_names, self.traced_lambdas,
         self.python_function_names, self.python_lambdas) = self._find_traced_functions(calls)
        self.mapped_function_names, self.mapped_lambdas = self._find_mapped_functions(calls)
        # {scope node: names every binding of which is a tf.function without input_signature}
        self.tf_function_bindings = self._find_tf_function_bindings()
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
            if name == "tensorflow.map_fn":
                keyword = "fn"
            elif name is None and self._dataset_method_call(call, frozenset({"map"})):
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

    def _find_tf_function_bindings(self) -> dict[cst.CSTNode, set[str]]:
        """Those are the functions that trace once per distinct Python argument value."""
        scopes = self.context.scopes
        counts: dict[cst.CSTNode, dict[str, int]] = {}
        for node, scope in scopes.items():
            if isinstance(node, cst.FunctionDef) and scope.parent is not None:
                decorator = self.tf_function_decorator(node)
                if decorator is not None and not has_input_signature(decorator):
                    names = counts.setdefault(scope.parent.node, {})
                    names[node.name.value] = names.get(node.name.value, 0) + 1
            for name, values in scope.assignments.items():
                for value in values:
                    if value is None or not self.is_tf_function_call(value):
                        continue
                    if has_input_signature(value) or (
                            isinstance(value.func, cst.Call) and has_input_signature(value.func)):
                        continue
                    names = counts.setdefault(node, {})
                    names[name] = names.get(name, 0) + 1
        bindings: dict[cst.CSTNode, set[str]] = {}
        for node, names in counts.items():
            scope = scopes[node]
            bindings[node] = {name for name, count in names.items()
                              if name not in scope.params and count == len(scope.assignments.get(name, ()))}
        return bindings

    def tf_function_target(self, func: cst.BaseExpression) -> tuple[cst.CSTNode, str] | None:
        """(scope node, name) when calling ``func`` calls a known tf.function that retraces on a
        new Python value: a decorated def or ``g = tf.function(f)``, or ``self.step`` for a
        decorated method of the enclosing class."""
        context = self.context
        if isinstance(func, cst.Name):
            found = context.binding(func.value)
            if found is not None and func.value in self.tf_function_bindings.get(found.scope.node, ()):
                return found.scope.node, func.value
            return None
        if (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                and func.value.value == "self" and context.enclosing_class is not None):
            cls = context.enclosing_class
            if func.attr.value in self.tf_function_bindings.get(cls, ()):
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
