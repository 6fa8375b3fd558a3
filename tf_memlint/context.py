"""The TensorFlow context: everything a rule needs to know about TensorFlow, computed once per file.

Two phases share one LibCST tree:

* ``collect_facts`` walks the module once before the rules run and records what a rule cannot
  learn on the way down: import aliases, which functions TensorFlow traces (``g =
  tf.function(f)`` may come after ``def f``), Keras subclasses, names bound to datasets, and
  the assignments of every scope.
* ``TFContext`` is then kept up to date by the engine during the single rule traversal: the
  stack of enclosing functions (traced or not) and the loops around the current node.

Rules ask questions (``in_traced_function``, ``trip_count``, ``value_kind``) instead of matching
TensorFlow spellings themselves, so every rule understands every import style at once.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Iterator

import libcst as cst

from tf_memlint.names import canonical

_EMPTY_MODULE = cst.Module(body=[])

# Calls whose function arguments TensorFlow traces into a graph.
TRACING_CALLS = frozenset({
    "tensorflow.function",
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
# tf.data.Dataset methods that return another dataset (so chains keep their kind).
DATASET_METHODS = frozenset({
    "map", "filter", "flat_map", "interleave", "batch", "padded_batch", "shuffle", "repeat",
    "prefetch", "cache", "take", "skip", "zip", "concatenate", "unbatch", "rebatch", "shard",
    "with_options", "apply", "enumerate", "window", "scan", "ragged_batch", "bucket_by_sequence_length",
    "map_with_legacy_function", "prefetch_to_device", "ignore_errors", "take_while",
})
# Keras methods that Keras traces (compiles into a graph) when the model is fit or built.
KERAS_TRACED_METHODS = frozenset({"call", "train_step", "test_step", "predict_step"})
KERAS_BASE_CLASSES = frozenset({"keras.Model", "keras.layers.Layer", "keras.Sequential"})
# NumPy functions that build an array (not reductions that return a scalar).
NUMPY_ARRAY_FACTORIES = frozenset({
    "array", "asarray", "zeros", "ones", "empty", "full", "arange", "linspace", "eye", "identity",
    "zeros_like", "ones_like", "full_like", "empty_like", "load", "fromfile", "frombuffer",
    "loadtxt", "genfromtxt", "rand", "randn", "random", "normal", "uniform", "randint",
    "standard_normal", "concatenate", "stack", "vstack", "hstack", "tile", "repeat", "reshape",
    "meshgrid", "outer", "dot", "matmul",
})


class Kind(enum.Enum):
    """What a value is known to be. UNKNOWN means: the code cannot tell, so rules stay silent."""

    PY_INT = "Python int"
    PY_NUMBER = "Python number"
    PY_CONTAINER = "Python container"
    NDARRAY = "NumPy array"
    TENSOR = "tensor"
    DATASET = "tf.data.Dataset"
    UNKNOWN = "unknown"


@dataclass
class Scope:
    """Names bound in one module, class, function or lambda body."""

    node: cst.CSTNode
    parent: "Scope | None"
    params: set[str] = field(default_factory=set)
    assignments: dict[str, list[cst.BaseExpression | None]] = field(default_factory=dict)
    declared_global: set[str] = field(default_factory=set)
    declared_nonlocal: set[str] = field(default_factory=set)
    augmented: dict[str, list[cst.AugAssign]] = field(default_factory=dict)

    def bind(self, name: str, value: cst.BaseExpression | None) -> None:
        self.assignments.setdefault(name, []).append(value)

    def binds(self, name: str) -> bool:
        return name in self.params or name in self.assignments

    def all_values(self, name: str) -> list[cst.BaseExpression] | None:
        """Every value bound to ``name`` here (operands for ``+=``), or None if one is opaque."""
        values = self.assignments.get(name)
        if name in self.params or not values or any(v is None for v in values):
            return None
        return values  # type: ignore[return-value]

    def only_value(self, name: str) -> cst.BaseExpression | None:
        """The value of ``name`` when it is bound exactly once, by a plain assignment."""
        values = self.assignments.get(name)
        if name in self.params or not values or len(values) != 1:
            return None
        return values[0]


@dataclass
class Frame:
    """A function (or lambda) being traversed, with the loops open inside it."""

    node: cst.CSTNode
    scope: Scope
    traced: bool
    loops: list[cst.For | cst.While] = field(default_factory=list)


def dotted_name(expr: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts: list[str] = []
    while isinstance(expr, cst.Attribute):
        parts.append(expr.attr.value)
        expr = expr.value
    if not isinstance(expr, cst.Name):
        return None
    parts.append(expr.value)
    return ".".join(reversed(parts))


def code_of(node: cst.CSTNode) -> str:
    return _EMPTY_MODULE.code_for_node(node)


def int_literal(expr: cst.BaseExpression) -> int | None:
    if isinstance(expr, cst.Integer):
        try:
            return int(expr.value.replace("_", ""), 0)
        except ValueError:  # e.g. "0777": a Python 2 leftover that still parses
            return None
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        inner = int_literal(expr.expression)
        return None if inner is None else -inner
    return None


def _target_names(target: cst.BaseExpression) -> Iterator[str]:
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _target_names(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _target_names(target.value)


class _FactCollector(cst.CSTVisitor):
    """The pre-pass: imports, scopes and the raw material for traced-function detection."""

    def __init__(self, module: cst.Module) -> None:
        self.aliases: dict[str, str] = {}
        self.scopes: dict[cst.CSTNode, Scope] = {}
        self._stack = [self._new_scope(module, None)]
        self.calls: list[tuple[cst.Call, Scope]] = []
        self.classes: list[cst.ClassDef] = []

    def _new_scope(self, node: cst.CSTNode, parent: Scope | None) -> Scope:
        scope = Scope(node, parent)
        self.scopes[node] = scope
        return scope

    @property
    def scope(self) -> Scope:
        return self._stack[-1]

    # Imports -----------------------------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            module = dotted_name(alias.name)
            if module is None:
                continue
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.aliases[alias.asname.name.value] = module
                self.scope.bind(alias.asname.name.value, None)
            else:
                top = module.split(".")[0]
                self.aliases[top] = top
                self.scope.bind(top, None)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        module = dotted_name(node.module)
        if module is None:
            return
        for alias in node.names:
            name = dotted_name(alias.name)
            if name is None:
                continue
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.aliases[local] = f"{module}.{name}"
            self.scope.bind(local, None)

    # Scopes ------------------------------------------------------------------------------
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scope.bind(node.name.value, None)
        scope = self._new_scope(node, self.scope)
        scope.params.update(p.name.value for p in _all_params(node.params))
        self._stack.append(scope)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._stack.pop()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        scope = self._new_scope(node, self.scope)
        scope.params.update(p.name.value for p in _all_params(node.params))
        self._stack.append(scope)

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self._stack.pop()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.scope.bind(node.name.value, None)
        self.classes.append(node)
        self._stack.append(self._new_scope(node, self.scope))

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._stack.pop()

    def visit_Global(self, node: cst.Global) -> None:
        self.scope.declared_global.update(n.name.value for n in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.scope.declared_nonlocal.update(n.name.value for n in node.names)

    # Bindings ----------------------------------------------------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            single = isinstance(target.target, cst.Name)
            for name in _target_names(target.target):
                self.scope.bind(name, node.value if single else None)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if isinstance(node.target, cst.Name):
            self.scope.bind(node.target.value, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name):  # keep the operand: `i += 1` keeps i a Python int
            self.scope.bind(node.target.value, node.value)
            self.scope.augmented.setdefault(node.target.value, []).append(node)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        if isinstance(node.target, cst.Name):
            self.scope.bind(node.target.value, None)

    def visit_For(self, node: cst.For) -> None:
        for name in _target_names(node.target):
            self.scope.bind(name, None)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            for name in _target_names(node.asname.name):
                self.scope.bind(name, None)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        for name in _target_names(node.target):
            self.scope.bind(name, None)

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append((node, self.scope))


def _all_params(params: cst.Parameters) -> Iterator[cst.Param]:
    yield from params.posonly_params
    yield from params.params
    yield from params.kwonly_params
    if isinstance(params.star_arg, cst.Param):
        yield params.star_arg
    if params.star_kwarg is not None:
        yield params.star_kwarg


class TFContext:
    """The shared TensorFlow analysis of one module. Built once; updated by the engine's walk."""

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        facts = _FactCollector(module)
        module.visit(facts)
        self.aliases = facts.aliases
        self.scopes = facts.scopes
        self.module_scope = self.scopes[module]
        self.dataset_names = self._find_dataset_names()
        self.keras_classes = self._find_keras_classes(facts.classes)
        (self.traced_function_names, self.traced_lambdas,
         self.python_function_names, self.python_lambdas) = self._find_traced_functions(facts.calls)
        self.mapped_function_names, self.mapped_lambdas = self._find_mapped_functions(facts.calls)
        self.tf_function_bindings = self._find_tf_function_bindings()
        self.builds_tf1_graph = self._find_tf1_graph_building(facts.calls)
        self.module_loops: list[cst.For | cst.While] = []  # loops open at module level
        # Walk-time state, maintained by enter()/leave().
        self.frames: list[Frame] = []
        self._class_stack: list[cst.ClassDef] = []
        self._scope_stack: list[Scope] = [self.module_scope]

    # Names ---------------------------------------------------------------------------------
    def qualified_name(self, expr: cst.BaseExpression) -> str | None:
        """The canonical TensorFlow/Keras name ``expr`` refers to, or None."""
        dotted = dotted_name(expr)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        module = self.aliases.get(head)
        if module is None:
            return None
        return canonical(f"{module}.{rest}" if rest else module)

    def call_name(self, node: cst.CSTNode) -> str | None:
        return self.qualified_name(node.func) if isinstance(node, cst.Call) else None

    def is_tf_call(self, node: cst.CSTNode) -> bool:
        name = self.call_name(node)
        return name is not None and name.startswith("tensorflow.")

    # Datasets, Keras classes, traced functions (pre-pass results) -----------------------------
    def is_dataset(self, expr: cst.BaseExpression) -> bool:
        """True when ``expr`` is known to be a ``tf.data.Dataset``."""
        while True:
            if isinstance(expr, cst.Name):
                return expr.value in self.dataset_names
            if not isinstance(expr, cst.Call):
                return False
            name = self.qualified_name(expr.func)
            if name is not None:
                return name.startswith(("tensorflow.data.", "tensorflow_datasets.load"))
            if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in DATASET_METHODS:
                expr = expr.func.value
                continue
            return False

    def _find_dataset_names(self) -> set[str]:
        self.dataset_names: set[str] = set()
        candidates = [(name, value) for scope in self.scopes.values()
                      for name, values in scope.assignments.items()
                      for value in values if value is not None]
        changed = True
        while changed:  # ds = tf.data...; ds = ds.map(...): reach a fixed point
            changed = False
            for name, value in candidates:
                if name not in self.dataset_names and self.is_dataset(value):
                    self.dataset_names.add(name)
                    changed = True
        return self.dataset_names

    def _find_keras_classes(self, classes: list[cst.ClassDef]) -> set[str]:
        keras_classes: set[str] = set()
        changed = True
        while changed:  # class Block(Layer); class Net(Block): both are Keras layers
            changed = False
            for cls in classes:
                if cls.name.value in keras_classes:
                    continue
                for base in cls.bases:
                    if (self.qualified_name(base.value) in KERAS_BASE_CLASSES
                            or (isinstance(base.value, cst.Name) and base.value.value in keras_classes)):
                        keras_classes.add(cls.name.value)
                        changed = True
                        break
        return keras_classes

    def _function_arguments(self, call: cst.Call) -> Iterator[cst.BaseExpression]:
        for arg in call.args:
            value = arg.value
            if isinstance(value, (cst.List, cst.Tuple)):  # tf.switch_case(i, [f, g])
                yield from (e.value for e in value.elements)
            elif isinstance(value, cst.Dict):  # tf.switch_case(i, {0: f, 1: g})
                yield from (e.value for e in value.elements if isinstance(e, cst.DictElement))
            else:
                yield value

    def _find_traced_functions(self, calls):
        traced_names: set[str] = set()
        traced_lambdas: set[cst.Lambda] = set()
        python_names: set[str] = set()
        python_lambdas: set[cst.Lambda] = set()
        for call, _scope in calls:
            name = self.call_name(call)
            if name in TRACING_CALLS:
                names, lambdas = traced_names, traced_lambdas
            elif name in PYTHON_CALLS:
                names, lambdas = python_names, python_lambdas
            elif (name is None and isinstance(call.func, cst.Attribute)
                  and call.func.attr.value in DATASET_TRACING_METHODS
                  and self.is_dataset(call.func.value)):
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

    def _is_traced_def(self, node: cst.FunctionDef) -> bool:
        name = node.name.value
        if name in self.python_function_names:
            return False
        for decorator in node.decorators:
            target = decorator.decorator
            if isinstance(target, cst.Call):
                target = target.func
            if self.qualified_name(target) == "tensorflow.function":
                return True
        if name in self.traced_function_names:
            return True
        if self.frames and self.frames[-1].traced:
            return True  # a def nested in a traced function is traced when it is called
        return (name in KERAS_TRACED_METHODS and bool(self._class_stack)
                and self._class_stack[-1].name.value in self.keras_classes
                and (not self.frames or self.frames[-1].node is not node))

    def _is_traced_lambda(self, node: cst.Lambda) -> bool:
        if node in self.python_lambdas:
            return False
        return node in self.traced_lambdas or bool(self.frames and self.frames[-1].traced)

    # Walk-time state -----------------------------------------------------------------------
    def enter(self, node: cst.CSTNode) -> None:
        if isinstance(node, cst.FunctionDef):
            traced = self._is_traced_def(node)
            self._push_frame(node, traced)
        elif isinstance(node, cst.Lambda):
            self._push_frame(node, self._is_traced_lambda(node))
        elif isinstance(node, cst.ClassDef):
            self._class_stack.append(node)
            self._scope_stack.append(self.scopes[node])
        elif isinstance(node, (cst.For, cst.While)) and self.frames:
            self.frames[-1].loops.append(node)
        elif isinstance(node, (cst.For, cst.While)):
            self.module_loops.append(node)

    def leave(self, node: cst.CSTNode) -> None:
        if isinstance(node, (cst.FunctionDef, cst.Lambda)):
            self.frames.pop()
            self._scope_stack.pop()
        elif isinstance(node, cst.ClassDef):
            self._class_stack.pop()
            self._scope_stack.pop()
        elif isinstance(node, (cst.For, cst.While)) and self.frames:
            self.frames[-1].loops.pop()
        elif isinstance(node, (cst.For, cst.While)):
            self.module_loops.pop()

    def _push_frame(self, node: cst.CSTNode, traced: bool) -> None:
        scope = self.scopes[node]
        self.frames.append(Frame(node, scope, traced))
        self._scope_stack.append(scope)

    @property
    def function(self) -> Frame | None:
        return self.frames[-1] if self.frames else None

    @property
    def in_traced_function(self) -> bool:
        return bool(self.frames) and self.frames[-1].traced

    @property
    def enclosing_class(self) -> cst.ClassDef | None:
        return self._class_stack[-1] if self._class_stack else None

    # Values --------------------------------------------------------------------------------
    def lookup(self, name: str) -> tuple[Scope, cst.BaseExpression | None] | None:
        """The innermost function/module scope that binds ``name``, and its single value if any.

        Class bodies are skipped, as Python skips them when resolving names inside methods.
        """
        for scope in reversed(self._scope_stack):
            if isinstance(scope.node, cst.ClassDef) and scope is not self._scope_stack[-1]:
                continue
            if name in scope.declared_global:
                scope = self.module_scope
            if scope.binds(name):
                return scope, scope.only_value(name)
        return None

    def int_value(self, expr: cst.BaseExpression, _depth: int = 0) -> int | None:
        """The value of an integer expression when it is known statically (literals, constants)."""
        if _depth > 8:
            return None
        literal = int_literal(expr)
        if literal is not None:
            return literal
        if isinstance(expr, cst.Name):
            found = self.lookup(expr.value)
            if found is None or found[1] is None:
                return None
            return self.int_value(found[1], _depth + 1)
        if isinstance(expr, cst.BinaryOperation):
            left = self.int_value(expr.left, _depth + 1)
            right = self.int_value(expr.right, _depth + 1)
            if left is None or right is None:
                return None
            op = expr.operator
            if isinstance(op, cst.Add):
                return left + right
            if isinstance(op, cst.Subtract):
                return left - right
            if isinstance(op, cst.Multiply):
                return left * right
            if isinstance(op, cst.FloorDivide) and right:
                return left // right
            if isinstance(op, cst.Power) and 0 <= right <= 64:
                return left ** right
        return None

    def value_kind(self, expr: cst.BaseExpression, _depth: int = 0) -> Kind:
        """What ``expr`` is known to be; UNKNOWN when the code cannot tell."""
        if _depth > 8:
            return Kind.UNKNOWN
        if self.int_value(expr) is not None:
            return Kind.PY_INT
        if isinstance(expr, (cst.Float, cst.Imaginary)):
            return Kind.PY_NUMBER
        if isinstance(expr, (cst.List, cst.Tuple, cst.Dict, cst.Set,
                             cst.ListComp, cst.DictComp, cst.SetComp)):
            return Kind.PY_CONTAINER
        if isinstance(expr, cst.Name):
            if expr.value in ("True", "False"):
                return Kind.PY_INT
            found = self.lookup(expr.value)
            if found is None or found[1] is None:
                return Kind.UNKNOWN
            return self.value_kind(found[1], _depth + 1)
        if isinstance(expr, cst.Subscript):
            # tf.shape(x)[0] and friends: indexing a tensor gives a tensor.
            return Kind.TENSOR if self.value_kind(expr.value, _depth + 1) is Kind.TENSOR else Kind.UNKNOWN
        if isinstance(expr, cst.BinaryOperation):
            kinds = {self.value_kind(expr.left, _depth + 1), self.value_kind(expr.right, _depth + 1)}
            if Kind.TENSOR in kinds:
                return Kind.TENSOR
            return Kind.UNKNOWN
        if isinstance(expr, cst.Call):
            func = dotted_name(expr.func)
            if func in ("len", "int"):
                return Kind.PY_INT
            if func in ("list", "dict", "set", "collections.defaultdict", "defaultdict",
                        "collections.OrderedDict", "OrderedDict", "collections.deque", "deque"):
                return Kind.PY_CONTAINER
            if self.is_numpy_call(expr):
                return Kind.NDARRAY
            if self.is_dataset(expr):
                return Kind.DATASET
            name = self.call_name(expr)
            if name is not None and name.startswith("tensorflow.") and name.split(".")[1] not in (
                    "function", "data", "keras", "py_function", "numpy_function", "compat",
                    "GradientTape", "Session", "InteractiveSession", "Graph", "Variable", "Module",
                    "TensorArray", "TensorSpec", "config", "io", "summary", "train", "saved_model",
                    "distribute", "device", "name_scope", "print", "debugging"):
                return Kind.TENSOR
        return Kind.UNKNOWN

    def numpy_name(self, expr: cst.BaseExpression) -> str | None:
        """``numpy.zeros`` for ``np.zeros`` (any alias), else None."""
        dotted = dotted_name(expr)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        module = self.aliases.get(head)
        if module is None or not (module == "numpy" or module.startswith("numpy.")):
            return None
        return f"{module}.{rest}" if rest else module

    def is_numpy_call(self, expr: cst.BaseExpression) -> bool:
        """``np.zeros(...)``, ``numpy.random.rand(...)``: a call that returns a NumPy array."""
        if not isinstance(expr, cst.Call):
            return False
        name = self.numpy_name(expr.func)
        return name is not None and name.rsplit(".", 1)[-1] in NUMPY_ARRAY_FACTORIES

    def trip_count(self, iterable: cst.BaseExpression) -> int | None:
        """How many times a Python ``for`` over ``iterable`` runs, when it is known statically."""
        if isinstance(iterable, (cst.List, cst.Tuple)):
            if any(isinstance(e, cst.StarredElement) for e in iterable.elements):
                return None
            return len(iterable.elements)
        if isinstance(iterable, cst.Name):
            found = self.lookup(iterable.value)
            if found is not None and found[1] is not None and self.is_numpy_call(found[1]):
                return self._numpy_length(found[1])
            return None
        if not isinstance(iterable, cst.Call):
            return None
        func = dotted_name(iterable.func)
        if func == "range" and "range" not in self.aliases:
            return self._range_length(iterable)
        if func in ("enumerate", "reversed", "list", "tuple") and len(iterable.args) == 1:
            return self.trip_count(iterable.args[0].value)
        if self.is_numpy_call(iterable):
            return self._numpy_length(iterable)
        return None

    def _range_length(self, call: cst.Call) -> int | None:
        bounds = [self.int_value(a.value) for a in call.args if a.keyword is None]
        if not 1 <= len(bounds) <= 3 or None in bounds:
            return None
        start, stop, step = (0, bounds[0], 1) if len(bounds) == 1 else (bounds + [1])[:3]
        if step == 0:
            return None
        return max(0, -(-(stop - start) // step))

    def _numpy_length(self, call: cst.Call) -> int | None:
        """First dimension of ``np.zeros((1000, 3))`` / ``np.ones(1000)`` / ``np.arange(1000)``."""
        kind = (self.numpy_name(call.func) or "").rsplit(".", 1)[-1]
        if kind == "arange":
            return self._range_length(call)
        if kind not in ("zeros", "ones", "empty", "full") or not call.args:
            return None
        shape = call.args[0].value
        if isinstance(shape, (cst.Tuple, cst.List)) and shape.elements:
            shape = shape.elements[0].value
        return self.int_value(shape)

    def is_python_int_counter(self, expr: cst.BaseExpression) -> bool:
        """A local name only ever bound to known Python ints (``i = 0`` ... ``i += 1``)."""
        if not isinstance(expr, cst.Name) or self.function is None:
            return False
        values = self.function.scope.all_values(expr.value)
        return values is not None and all(self.int_value(v) is not None for v in values)

    def loop_kind(self, loop: cst.For | cst.While) -> tuple[str, int | None]:
        """("graph", None) for a loop AutoGraph turns into a tf.while_loop; ("python", n) for a
        Python loop known to run n times (unrolled when traced); ("unknown", None) otherwise."""
        if isinstance(loop, cst.For):
            if self.is_tensor_iteration(loop.iter):
                return "graph", None
            count = self.trip_count(loop.iter)
            return ("python", count) if count is not None else ("unknown", None)
        comparison = loop.test
        if isinstance(comparison, cst.Comparison) and len(comparison.comparisons) == 1:
            left, right = comparison.left, comparison.comparisons[0].comparator
            if Kind.TENSOR in (self.value_kind(left), self.value_kind(right)):
                return "graph", None
            operator = comparison.comparisons[0].operator
            if self.is_python_int_counter(left) and isinstance(operator, (cst.LessThan, cst.LessThanEqual)):
                scope = self.function.scope  # type: ignore[union-attr]
                bound = self.int_value(right)
                first = self.int_value(scope.assignments[left.value][0])
                steps = scope.augmented.get(left.value, [])
                step = (self.int_value(steps[0].value)
                        if len(steps) == 1 and isinstance(steps[0].operator, cst.AddAssign) else None)
                if bound is not None and first is not None and step is not None and step > 0:
                    span = bound - first + isinstance(operator, cst.LessThanEqual)
                    return "python", max(0, -(-span // step))
        return "unknown", None

    def is_tensor_iteration(self, iterable: cst.BaseExpression) -> bool:
        """A ``for`` that AutoGraph turns into a graph loop: over a tensor, tf.range or a dataset."""
        if isinstance(iterable, cst.Call) and dotted_name(iterable.func) == "range":
            return any(self.value_kind(a.value) is Kind.TENSOR for a in iterable.args)
        return self.value_kind(iterable) in (Kind.TENSOR, Kind.DATASET)
