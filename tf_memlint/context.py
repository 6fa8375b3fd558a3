"""The TensorFlow context: everything a rule needs to know about TensorFlow, computed once per file.

Two phases share one LibCST tree:

* ``collect_facts`` walks the module once before the rules run and records what a rule cannot
  learn on the way down: import aliases, which functions TensorFlow traces (``g =
  tf.function(f)`` may come after ``def f``), Keras subclasses, names bound to datasets, and
  the assignments of every scope.
* ``TFContext`` is then kept up to date by the engine during the single rule traversal: the
  stack of enclosing functions (traced or not) and the loops around the current node.

Rules ask questions (``in_traced_function``, ``trip_count``, ``value_kind``) instead of matching
TensorFlow spellings themselves, so every rule understands every import style at once. The facts
about sessions, training loops and Keras models live in ``flow.py`` (a mixin of TFContext);
small syntax helpers shared with the rules in ``syntax.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Iterator

import libcst as cst

from tf_memlint.flow import (  # noqa: F401  (re-exported: the gate derives triggers from them)
    KERAS_MODEL_BUILDERS,
    SESSION_CLASSES,
    FlowFacts,
)
from tf_memlint.names import canonical
from tf_memlint.syntax import Kind, _target_names, code_of, dotted_name, int_literal  # noqa: F401
from tf_memlint.walk import walk

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
# Calls that say a file builds TF1 graphs (graph mode, not eager): constants there are graph nodes.
TF1_GRAPH_CALLS = frozenset({
    "tensorflow.Session", "tensorflow.InteractiveSession", "tensorflow.placeholder",
    "tensorflow.disable_eager_execution", "tensorflow.disable_v2_behavior",
    "tensorflow.train.MonitoredTrainingSession",
})
# NumPy functions whose result size is set by their shape/size arguments (a parameter `n` makes
# it data-sized), and those that read an array from a file.
NUMPY_SHAPED_FACTORIES = frozenset({
    "zeros", "ones", "empty", "full", "rand", "randn", "random", "random_sample", "standard_normal",
    "normal", "uniform", "randint", "arange", "linspace", "eye", "identity",
})
NUMPY_FILE_READERS = frozenset({"load", "loadtxt", "genfromtxt", "fromfile", "frombuffer", "memmap"})
# ndarray methods that return an array of the same number of elements.
NDARRAY_SAME_SIZE_METHODS = frozenset({
    "astype", "copy", "flatten", "ravel", "squeeze", "transpose", "reshape", "view",
})
# Bytes per element for dtype spellings (the last dotted component, or a string literal).
DTYPE_ITEMSIZE = {
    "bool": 1, "bool_": 1, "int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "float16": 2,
    "half": 2, "bfloat16": 2, "int32": 4, "uint32": 4, "float32": 4, "single": 4, "int64": 8,
    "uint64": 8, "float64": 8, "double": 8, "float": 8, "int": 8, "complex64": 8,
    "complex128": 16,
}

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


def _argument(call: cst.Call, position: int, keyword: str) -> cst.BaseExpression | None:
    """The argument at ``position`` (positional) or named ``keyword``, else None."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if any(a.star for a in call.args if a.keyword is None):
        return None
    return positional[position].value if position < len(positional) else None


def _function_name(expr: cst.BaseExpression) -> str | None:
    """``f`` for ``f`` and for ``self.f``; None otherwise."""
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        return expr.attr.value
    return None


def _has_input_signature(decorator: cst.BaseExpression) -> bool:
    if not isinstance(decorator, cst.Call):
        return False
    return any(a.keyword is not None and a.keyword.value == "input_signature"
               and not (isinstance(a.value, cst.Name) and a.value.value == "None") for a in decorator.args)


def _number_literal(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        expr = expr.expression
    return isinstance(expr, (cst.Integer, cst.Float)) or (
        isinstance(expr, cst.Name) and expr.value in ("True", "False"))


def _dtype_itemsize(expr: cst.BaseExpression) -> int | None:
    if isinstance(expr, cst.SimpleString):
        return DTYPE_ITEMSIZE.get(expr.raw_value)
    dotted = dotted_name(expr)
    return None if dotted is None else DTYPE_ITEMSIZE.get(dotted.rsplit(".", 1)[-1])


class _Finder(cst.CSTVisitor):
    def __init__(self, target: cst.CSTNode) -> None:
        self.target = target
        self.found = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if node is self.target:
            self.found = True
        return not self.found


def _contains(root: cst.CSTNode, target: cst.CSTNode) -> bool:
    finder = _Finder(target)
    walk(root, finder)
    return finder.found


_BINDING_NODES = frozenset({cst.Assign, cst.WithItem, cst.For, cst.AugAssign})


class TFContext(FlowFacts):
    """The shared TensorFlow analysis of one module. Built once; updated by the engine's walk."""

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        facts = _FactCollector(module)
        walk(module, facts)
        self.aliases = facts.aliases
        self.scopes = facts.scopes
        self.module_scope = self.scopes[module]
        self.dataset_names = self._find_dataset_names()
        self.keras_classes = self.subclasses_of(facts.classes, KERAS_BASE_CLASSES)
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
        self._init_flow_facts(facts.classes)

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

    def subclasses_of(self, classes: list[cst.ClassDef], bases: Iterable[str]) -> set[str]:
        """Names of the classes of this module that derive from one of ``bases`` (canonical
        names), directly or through another class of the module: class Block(Layer); class
        Net(Block) are both Keras layers."""
        bases = frozenset(bases)
        found: set[str] = set()
        changed = True
        while changed:
            changed = False
            for cls in classes:
                if cls.name.value in found:
                    continue
                for base in cls.bases:
                    if (self.qualified_name(base.value) in bases
                            or (isinstance(base.value, cst.Name) and base.value.value in found)):
                        found.add(cls.name.value)
                        changed = True
                        break
        return found

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
    # enter/leave run for every node of the walk: they test ``type(node)`` by identity, because
    # isinstance against LibCST's ABC-based node classes costs a metaclass call each time.
    def enter(self, node: cst.CSTNode) -> None:
        kind = type(node)
        if kind is cst.FunctionDef:
            self._push_frame(node, self._is_traced_def(node))  # type: ignore[arg-type]
        elif kind is cst.Lambda:
            self._push_frame(node, self._is_traced_lambda(node))  # type: ignore[arg-type]
        elif kind is cst.ClassDef:
            self._class_stack.append(node)  # type: ignore[arg-type]
            self._scope_stack.append(self.scopes[node])
        elif kind is cst.For or kind is cst.While:
            self.open_loops.append(node)  # type: ignore[arg-type]
        if kind in _BINDING_NODES:
            self._record_binding(node)

    def leave(self, node: cst.CSTNode) -> None:
        kind = type(node)
        if kind is cst.FunctionDef or kind is cst.Lambda:
            self.frames.pop()
            self._scope_stack.pop()
        elif kind is cst.ClassDef:
            self._class_stack.pop()
            self._scope_stack.pop()
        elif kind is cst.For or kind is cst.While:
            self.open_loops.pop()

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

    def _range_length(self, call: cst.Call, int_of=None) -> int | None:
        int_of = int_of or self.int_value
        bounds = [int_of(a.value) for a in call.args if a.keyword is None]
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

    # Facts for TFM104-TFM106 and TFM301 ------------------------------------------------------
    def _find_mapped_functions(self, calls) -> tuple[set[str], set[cst.Lambda]]:
        """Functions run once per element: given to ``tf.map_fn`` or ``Dataset.map``.

        ``ds.map(lambda x, y: (augment(x), y))`` maps ``augment`` too: a lambda's direct callees
        (plain names or ``self.method``) run once per element as well.
        """
        names: set[str] = set()
        lambdas: set[cst.Lambda] = set()
        for call, _scope in calls:
            name = self.call_name(call)
            if name == "tensorflow.map_fn":
                keyword = "fn"
            elif (name is None and isinstance(call.func, cst.Attribute) and call.func.attr.value == "map"
                  and self.is_dataset(call.func.value)):
                keyword = "map_func"
            else:
                continue
            fn = _argument(call, 0, keyword)
            if isinstance(fn, cst.Lambda):
                lambdas.add(fn)
                body = fn.body
                parts = ([e.value for e in body.elements] if isinstance(body, (cst.Tuple, cst.List))
                         else [body])
                for part in parts:
                    if isinstance(part, cst.Call):
                        callee = _function_name(part.func)
                        if callee is not None:
                            names.add(callee)
            elif fn is not None:
                callee = _function_name(fn)
                if callee is not None:
                    names.add(callee)
        return names - self.python_function_names, lambdas - self.python_lambdas

    def _is_mapped(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Lambda):
            return node in self.mapped_lambdas
        return isinstance(node, cst.FunctionDef) and node.name.value in self.mapped_function_names

    @property
    def in_mapped_function(self) -> bool:
        """True inside a function that ``tf.map_fn``/``Dataset.map`` runs once per element (or a
        def/lambda nested in one): what it builds is alive once per parallel iteration."""
        for frame in reversed(self.frames):
            if self._is_mapped(frame.node):
                return True
            if not frame.traced:
                return False
        return False

    def tf_function_decorator(self, node: cst.FunctionDef) -> cst.BaseExpression | None:
        """The ``@tf.function`` / ``@tf.function(...)`` decorator of ``node``, if any."""
        for decorator in node.decorators:
            target = decorator.decorator
            func = target.func if isinstance(target, cst.Call) else target
            if self.qualified_name(func) == "tensorflow.function":
                return target
        return None

    def is_tf_function_call(self, node: cst.CSTNode) -> bool:
        """``tf.function(f, ...)`` or ``tf.function(...)(f)``: a call that creates a tf.function."""
        if not isinstance(node, cst.Call):
            return False
        if self.call_name(node) == "tensorflow.function":
            return _argument(node, 0, "func") is not None
        # tf.function(jit_compile=True)(f) creates; tf.function(f)(x) creates and then calls.
        return (isinstance(node.func, cst.Call) and self.call_name(node.func) == "tensorflow.function"
                and _argument(node.func, 0, "func") is None)

    def _find_tf_function_bindings(self) -> dict[cst.CSTNode, set[str]]:
        """{scope node: names every binding of which is a tf.function without input_signature}.

        Those are the functions that trace once per distinct Python argument value.
        """
        counts: dict[cst.CSTNode, dict[str, int]] = {}
        for node, scope in self.scopes.items():
            if isinstance(node, cst.FunctionDef) and scope.parent is not None:
                decorator = self.tf_function_decorator(node)
                if decorator is not None and not _has_input_signature(decorator):
                    names = counts.setdefault(scope.parent.node, {})
                    names[node.name.value] = names.get(node.name.value, 0) + 1
            for name, values in scope.assignments.items():
                for value in values:
                    if value is None or not self.is_tf_function_call(value):
                        continue
                    if _has_input_signature(value) or (
                            isinstance(value.func, cst.Call) and _has_input_signature(value.func)):
                        continue
                    names = counts.setdefault(node, {})
                    names[name] = names.get(name, 0) + 1
        bindings: dict[cst.CSTNode, set[str]] = {}
        for node, names in counts.items():
            scope = self.scopes[node]
            bindings[node] = {name for name, count in names.items()
                              if name not in scope.params and count == len(scope.assignments.get(name, ()))}
        return bindings

    def tf_function_target(self, func: cst.BaseExpression) -> tuple[cst.CSTNode, str] | None:
        """(scope node, name) when calling ``func`` calls a known tf.function that retraces on a
        new Python value: a decorated def or ``g = tf.function(f)``, or ``self.step`` for a
        decorated method of the enclosing class."""
        if isinstance(func, cst.Name):
            found = self.lookup(func.value)
            if found is not None and func.value in self.tf_function_bindings.get(found[0].node, ()):
                return found[0].node, func.value
            return None
        if (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                and func.value.value == "self" and self.enclosing_class is not None):
            cls = self.enclosing_class
            if func.attr.value in self.tf_function_bindings.get(cls, ()):
                return cls, func.attr.value
        return None

    @property
    def open_loops(self) -> list[cst.For | cst.While]:
        """The loops around the current node in the current function (or at module level)."""
        return self.frames[-1].loops if self.frames else self.module_loops

    def current_scope(self) -> Scope:
        return self.frames[-1].scope if self.frames else self.module_scope

    def loop_number_targets(self, loop: cst.For) -> set[str]:
        """Names a Python ``for`` binds to a new Python number on every iteration: the target of
        ``range(...)`` or of a list/tuple of number literals, the index of ``enumerate``."""
        iterable, target = loop.iter, loop.target
        if isinstance(iterable, cst.Name):
            found = self.lookup(iterable.value)
            if found is not None and isinstance(found[1], (cst.List, cst.Tuple)):
                iterable = found[1]
        if isinstance(iterable, cst.Call) and dotted_name(iterable.func) == "range" \
                and "range" not in self.aliases:
            if self.in_traced_function and self.loop_kind(loop)[0] != "python":
                return set()  # range(tensor) in a traced function: a graph loop over tensors
            return {target.value} if isinstance(target, cst.Name) else set()
        if isinstance(iterable, cst.Call) and dotted_name(iterable.func) == "enumerate" \
                and not self.in_traced_function:
            if isinstance(target, (cst.Tuple, cst.List)) and target.elements \
                    and isinstance(target.elements[0].value, cst.Name):
                return {target.elements[0].value.value}
            return set()
        if isinstance(iterable, (cst.List, cst.Tuple)) and iterable.elements and all(
                _number_literal(e.value) for e in iterable.elements):
            return {target.value} if isinstance(target, cst.Name) else set()
        return set()

    def varying_python_number(self, expr: cst.BaseExpression, _depth: int = 0) -> cst.For | cst.While | None:
        """The open loop in which ``expr`` is a Python number with a new value on every iteration
        (a loop variable over ``range``, an int counter ``i += 1`` bumped in the loop), else None."""
        if _depth > 4:
            return None
        if isinstance(expr, cst.Name):
            for loop in reversed(self.open_loops):
                if isinstance(loop, cst.For) and expr.value in self.loop_number_targets(loop):
                    return loop
            scope = self.current_scope()
            if scope.binds(expr.value) and expr.value not in scope.declared_global:
                values = scope.all_values(expr.value)
                steps = scope.augmented.get(expr.value, [])
                if values and steps and all(self.int_value(v) is not None for v in values):
                    for loop in reversed(self.open_loops):
                        if any(_contains(loop, step) for step in steps):
                            return loop
            return None
        if isinstance(expr, cst.BinaryOperation):
            left = self.varying_python_number(expr.left, _depth + 1)
            right = self.varying_python_number(expr.right, _depth + 1)
            if left is not None and (right is not None or _number_literal(expr.right)
                                     or self.int_value(expr.right) is not None):
                return left
            if right is not None and (_number_literal(expr.left) or self.int_value(expr.left) is not None):
                return right
            return None
        if isinstance(expr, cst.UnaryOperation):
            return self.varying_python_number(expr.expression, _depth + 1)
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) \
                and expr.func.value in ("float", "int", "bool", "round", "abs") and len(expr.args) == 1:
            return self.varying_python_number(expr.args[0].value, _depth + 1)
        return None

    def is_ndarray(self, expr: cst.BaseExpression, _depth: int = 0) -> bool:
        """True when ``expr`` is known to be a NumPy array: a NumPy factory call, a name bound to
        one, or ``.astype()``/``.reshape()``/arithmetic with a number on one."""
        if _depth > 8:
            return False
        if self.is_numpy_call(expr):
            return True
        if isinstance(expr, cst.Name):
            found = self.lookup(expr.value)
            return found is not None and found[1] is not None and self.is_ndarray(found[1], _depth + 1)
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
                and expr.func.attr.value in NDARRAY_SAME_SIZE_METHODS:
            return self.is_ndarray(expr.func.value, _depth + 1)
        if isinstance(expr, cst.Attribute) and expr.attr.value == "T":
            return self.is_ndarray(expr.value, _depth + 1)
        if isinstance(expr, cst.BinaryOperation):
            left, right = expr.left, expr.right
            if self.is_ndarray(left, _depth + 1):
                return self.is_ndarray(right, _depth + 1) or _number_literal(right) \
                    or self.value_kind(right) in (Kind.PY_INT, Kind.PY_NUMBER)
            if self.is_ndarray(right, _depth + 1):
                return _number_literal(left) or self.value_kind(left) in (Kind.PY_INT, Kind.PY_NUMBER)
        return False

    def ndarray_nbytes(self, expr: cst.BaseExpression) -> int | None:
        """Bytes of a NumPy array expression when its size is known statically, else None
        (the element type defaults to NumPy's 8-byte float64/int64 unless a dtype says otherwise)."""
        elements = self._ndarray_elements(expr, 0)
        return None if elements is None else elements * self._ndarray_itemsize(expr, 0)

    def _shape_elements(self, shape: cst.BaseExpression | None) -> int | None:
        if shape is None:
            return None
        if isinstance(shape, (cst.Tuple, cst.List)):
            total = 1
            for element in shape.elements:
                value = self._size_value(element.value)
                if value is None:
                    return None
                total *= value
            return total
        if isinstance(shape, cst.Name) and shape.value == "None":
            return 1
        return self._size_value(shape)

    def _size_value(self, expr: cst.BaseExpression) -> int | None:
        """An int, or an integral float literal such as ``1e4`` (NumPy accepts both in old code)."""
        if isinstance(expr, cst.Float):
            try:
                value = float(expr.value.replace("_", ""))
            except ValueError:
                return None
            return int(value) if value.is_integer() else None
        return self.int_value(expr)

    def _ndarray_elements(self, expr: cst.BaseExpression, depth: int) -> int | None:
        if depth > 8:
            return None
        if isinstance(expr, cst.Name):
            found = self.lookup(expr.value)
            return None if found is None or found[1] is None else self._ndarray_elements(found[1], depth + 1)
        if isinstance(expr, cst.Attribute) and expr.attr.value == "T":
            return self._ndarray_elements(expr.value, depth + 1)
        if isinstance(expr, cst.BinaryOperation):
            sides = [s for s in (expr.left, expr.right) if self.is_ndarray(s)]
            sizes = [self._ndarray_elements(s, depth + 1) for s in sides]
            return None if not sizes or None in sizes else max(sizes)  # type: ignore[type-var]
        if not isinstance(expr, cst.Call):
            return None
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in NDARRAY_SAME_SIZE_METHODS \
                and not self.is_numpy_call(expr):
            return self._ndarray_elements(expr.func.value, depth + 1)
        name = self.numpy_name(expr.func)
        if name is None:
            return None
        kind = name.rsplit(".", 1)[-1]
        positional = [a.value for a in expr.args if a.keyword is None and not a.star]
        if kind in ("zeros", "ones", "empty", "full"):
            return self._shape_elements(_argument(expr, 0, "shape"))
        if kind in ("rand", "randn"):
            if any(a.star for a in expr.args):
                return None
            return self._shape_elements(cst.Tuple([cst.Element(v) for v in positional]))
        if kind in ("random", "standard_normal", "random_sample"):
            return self._shape_elements(_argument(expr, 0, "size"))
        if kind in ("normal", "uniform", "randint"):
            return self._shape_elements(_argument(expr, 2, "size"))
        if kind == "arange":
            return self._range_length(expr)
        if kind == "linspace":
            num = _argument(expr, 2, "num")
            return 50 if num is None else self.int_value(num)
        if kind == "eye":
            n = self.int_value(positional[0]) if positional else None
            m = _argument(expr, 1, "M")
            m_value = n if m is None or (isinstance(m, cst.Name) and m.value == "None") else self.int_value(m)
            return None if n is None or m_value is None else n * m_value
        if kind == "identity":
            n = self.int_value(positional[0]) if positional else None
            return None if n is None else n * n
        if kind in ("array", "asarray") and positional:
            return self._literal_elements(positional[0], depth + 1)
        if kind in ("zeros_like", "ones_like", "full_like", "empty_like", "reshape") and positional:
            return self._ndarray_elements(positional[0], depth + 1)
        if kind in ("concatenate", "stack", "vstack", "hstack") and positional \
                and isinstance(positional[0], (cst.List, cst.Tuple)):
            sizes = [self._ndarray_elements(e.value, depth + 1) for e in positional[0].elements]
            return None if None in sizes else sum(sizes)  # type: ignore[arg-type]
        return None

    def _literal_elements(self, expr: cst.BaseExpression, depth: int) -> int | None:
        """Elements of ``np.array(<expr>)``: nested list/tuple literals of numbers and names."""
        if isinstance(expr, (cst.List, cst.Tuple)):
            total = 0
            for element in expr.elements:
                if isinstance(element, cst.StarredElement):
                    return None
                size = self._literal_elements(element.value, depth + 1)
                if size is None:
                    return None
                total += size
            return total
        if isinstance(expr, (cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp)):
            return None
        # Any other leaf is one scalar (a number, `sigma ** 2`, `vocab.index(w)`), unless it is
        # itself a NumPy array.
        return self._ndarray_elements(expr, depth + 1) if self.is_ndarray(expr) else 1

    def ndarray_origin(self, expr: cst.BaseExpression, _depth: int = 0) -> str | None:
        """The NumPy function an array expression comes from (``linspace`` for
        ``np.linspace(0, 1, n).astype(np.float32) * 2``), following names, same-size methods and
        arithmetic; None when it is not known to be a NumPy array."""
        if _depth > 8:
            return None
        if isinstance(expr, cst.Name):
            found = self.lookup(expr.value)
            return None if found is None or found[1] is None else self.ndarray_origin(found[1], _depth + 1)
        if isinstance(expr, cst.Attribute) and expr.attr.value == "T":
            return self.ndarray_origin(expr.value, _depth + 1)
        if isinstance(expr, cst.BinaryOperation):
            for side in (expr.left, expr.right):
                if self.is_ndarray(side):
                    return self.ndarray_origin(side, _depth + 1)
            return None
        if not isinstance(expr, cst.Call):
            return None
        if self.is_numpy_call(expr):
            return (self.numpy_name(expr.func) or "").rsplit(".", 1)[-1]
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in NDARRAY_SAME_SIZE_METHODS:
            return self.ndarray_origin(expr.func.value, _depth + 1)
        return None

    def _ndarray_itemsize(self, expr: cst.BaseExpression, depth: int) -> int:
        if depth > 8:
            return 8
        if isinstance(expr, cst.Name):
            found = self.lookup(expr.value)
            return 8 if found is None or found[1] is None else self._ndarray_itemsize(found[1], depth + 1)
        if not isinstance(expr, cst.Call):
            return 8
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "astype" and expr.args:
            return _dtype_itemsize(expr.args[0].value) or 8
        for arg in expr.args:
            if arg.keyword is not None and arg.keyword.value == "dtype":
                return _dtype_itemsize(arg.value) or 8
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in NDARRAY_SAME_SIZE_METHODS:
            return self._ndarray_itemsize(expr.func.value, depth + 1)
        return 8

    def _find_tf1_graph_building(self, calls) -> bool:
        """True for a file that builds TF1 graphs (sessions, placeholders, eager turned off) and
        never turns eager execution on: its module-level TF calls add nodes to a graph."""
        names = {self.call_name(call) for call, _scope in calls}
        return bool(names & TF1_GRAPH_CALLS) and "tensorflow.enable_eager_execution" not in names
