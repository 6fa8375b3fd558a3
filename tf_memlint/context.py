"""The core context: what every rule may ask about one module, whatever TensorFlow API it is about.

In the spirit of ruff's semantic model, the core knows Python, not TensorFlow's APIs:

* names: import aliases and the canonical TF/Keras name of an expression (``qualified_name``);
* scopes (``tf_memlint.scopes``, collected once before the rules run);
* the walk position, kept current by the engine's traversal (``enter``/``leave``, see rule.py
  for the order): the enclosing functions (``frames``, each traced or not, mapped or not), the
  loops open around the node, the enclosing class;
* value resolution in exactly two modes (``Resolution``): the *static* binding of a name (the
  one value its scope ever binds to it) and the binding *at this point* of the walk (the value
  last bound before the current node, so a notebook that rebinds ``model`` from a scikit-learn
  estimator to a Keras model is judged at each use);
* value kinds (``value_kind``, ``int_value``) and trip counts (``trip_count``).

Domain knowledge lives in one fact module per domain (``tf_memlint.facts``), each owning its
caches, reached from here: ``context.arrays`` (NumPy sizes), ``context.splits`` (whole dataset
splits), ``context.sessions`` (TF1 sessions and graphs), ``context.keras`` (Keras models,
training loops, eager tensors), ``context.tracing`` (which functions TensorFlow traces,
tf.function bindings, retracing) and ``context.functions`` (what a function of this module does,
followed through its calls). The fact modules depend on this core, never on each other's
internals, and the core never on a rule.
"""

from __future__ import annotations

from typing import Any, ClassVar, Iterable, TypeVar

import libcst as cst

from tf_memlint.facts.arrays import NUMPY_ARRAY_FACTORIES, ArrayFacts
from tf_memlint.facts.events import repetition
from tf_memlint.facts.functions import FunctionFacts
from tf_memlint.facts.keras import KerasFacts
from tf_memlint.facts.sessions import SessionFacts
from tf_memlint.facts.splits import SplitFacts
from tf_memlint.facts.tracing import TracingFacts
from tf_memlint.names import canonical
from tf_memlint.scopes import AT_POINT, STATIC, Binding, Frame, Resolution, Scope, collect  # noqa: F401
from tf_memlint.syntax import (COUNT_KEEPING_CALLS, TQDM_RANGES, Kind, dotted_name, int_literal,
                               is_self_attribute, is_variable_listing, subclasses, target_names)
from tf_memlint.walk import children

_Facts = TypeVar("_Facts")

# tf.data.Dataset methods that return another dataset (so chains keep their kind).
DATASET_METHODS = frozenset({
    "map", "filter", "flat_map", "interleave", "batch", "padded_batch", "shuffle", "repeat",
    "prefetch", "cache", "take", "skip", "zip", "concatenate", "unbatch", "rebatch", "shard",
    "with_options", "apply", "enumerate", "window", "scan", "ragged_batch", "bucket_by_sequence_length",
    "map_with_legacy_function", "prefetch_to_device", "ignore_errors", "take_while",
})
# Results of tf.* calls in these namespaces are not tensors.
_NOT_TENSOR_NAMESPACES = frozenset({
    "function", "data", "keras", "py_function", "numpy_function", "compat", "GradientTape", "Session",
    "InteractiveSession", "Graph", "Variable", "Module", "TensorArray", "TensorSpec", "config", "io",
    "summary", "train", "saved_model", "distribute", "device", "name_scope", "print", "debugging",
})
_CONTAINER_CALLS = frozenset({"list", "dict", "set", "collections.defaultdict", "defaultdict",
                              "collections.OrderedDict", "OrderedDict", "collections.deque", "deque"})
_OWN_SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef)  # their bodies run at another time
_BINDING_NODES = frozenset({cst.Assign, cst.WithItem, cst.For, cst.AugAssign})


class TFContext:
    """The shared analysis of one module. Built once; kept current by the engine's walk."""

    def __init__(self, module: cst.Module) -> None:
        names = collect(module)
        self._qualified: dict[int, tuple[cst.BaseExpression, str | None]] = {}
        self.module = module
        self.walked = names.walked
        self.aliases = names.aliases
        self.scopes = names.scopes
        self.module_scope = self.scopes[module]
        self.dataset_names = self._find_dataset_names()
        # Walk position, maintained by enter()/leave().
        self.frames: list[Frame] = []
        self.module_loops: list[cst.For | cst.While] = []  # loops open at module level
        self._class_stack: list[cst.ClassDef] = []
        # Index in module.body of the top-level statement being walked (set by the engine's walk).
        self.statement: int | None = None
        self._scope_stack: list[Scope] = [self.module_scope]
        self._latest: dict[tuple[int, str], tuple[cst.BaseExpression | None, bool]] = {}
        self._latest_attr: dict[tuple[int, str], cst.BaseExpression | None] = {}
        self._nodes: dict[tuple[int, bool], list[cst.CSTNode]] = {}
        # Fact modules, one per domain.
        self.functions = FunctionFacts(self, names.calls)
        self.project: dict | None = None  # the command's project table (project.py), else None
        # The module's text and stdlib tree, when the engine has them: lines for messages
        # (FunctionFacts.line_of) are then generated for one top-level statement, not the module.
        self.source: bytes | str | None = None
        self.tree: Any = None
        self.notebook = False  # the code cells of a notebook, whose kernel lives on (engine)
        self.keras = KerasFacts(self, names.classes, names.calls)
        self.tracing = TracingFacts(self, names.calls)
        self.sessions = SessionFacts(self, names.calls)
        self.arrays = ArrayFacts(self)
        self.splits = SplitFacts(self, names.calls)
        self.on_demand: dict[type, Any] = {}  # fact modules only some rules use (facts_of)
        # What the engine knows of the file, for the evidence of a finding (evidence.py).
        self.path: str | None = None
        self.test_file = False  # the file is test code by its path (ignores.is_test_path)
        self.test_file_configured = False  # ...by the test-paths the user configured

    def facts_of(self, kind: type[_Facts]) -> _Facts:
        """The ``kind`` fact module of this linted module (``PipelineFacts``, ``ProcessFacts``),
        built on first use and kept: domains only some rules need, so the core does not build
        them for every file."""
        facts = self.on_demand.get(kind)
        if facts is None:
            facts = self.on_demand[kind] = kind(self)
        return facts

    # Names ---------------------------------------------------------------------------------
    def imported_name(self, expr: cst.BaseExpression) -> str | None:
        """The full import path ``expr`` names through the import aliases, as imported (not
        canonical): ``multiprocessing.Pool`` for ``mp.Pool``, ``tensorflow.Session`` for
        ``tf.Session``, ``google.colab.files.upload`` for ``files.upload``; None if not imported."""
        dotted = dotted_name(expr)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        module = self.aliases.get(head)
        if module is None:
            return None
        return f"{module}.{rest}" if rest else module

    def qualified_name(self, expr: cst.BaseExpression) -> str | None:
        """The canonical TensorFlow/Keras name ``expr`` refers to, or None. Asked several times
        of most calls of the module (each fact module, then the rules), so kept per node; the
        node is kept with its answer, so its id cannot be reused by another node meanwhile."""
        known = self._qualified.get(id(expr))
        if known is not None and known[0] is expr:
            return known[1]
        name = self.imported_name(expr)
        found = None if name is None else canonical(name)
        self._qualified[id(expr)] = (expr, found)
        return found

    def call_name(self, node: cst.CSTNode) -> str | None:
        return self.qualified_name(node.func) if isinstance(node, cst.Call) else None

    def numpy_name(self, expr: cst.BaseExpression) -> str | None:
        """``numpy.zeros`` for ``np.zeros`` (any alias), else None."""
        name = self.imported_name(expr)
        return name if name is not None and (name == "numpy" or name.startswith("numpy.")) else None

    def is_numpy_call(self, expr: cst.BaseExpression) -> bool:
        """``np.zeros(...)``, ``numpy.random.rand(...)``: a call that returns a NumPy array."""
        if not isinstance(expr, cst.Call):
            return False
        name = self.numpy_name(expr.func)
        return name is not None and name.rsplit(".", 1)[-1] in NUMPY_ARRAY_FACTORIES

    def subclasses_of(self, classes: list[cst.ClassDef], bases: Iterable[str]) -> set[str]:
        """Names of the classes of this module that derive from one of ``bases`` (canonical
        names), directly or through another class of the module: class Block(Layer); class
        Net(Block) are both Keras layers."""
        bases = frozenset(bases)
        return subclasses(classes, lambda base: self.qualified_name(base) in bases)

    # Datasets ------------------------------------------------------------------------------
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

    # Walk position -------------------------------------------------------------------------
    # enter/leave test ``type(node)`` by identity, because isinstance against LibCST's ABC-based
    # node classes costs a metaclass call each time. They act on the node types in ENTERED and
    # LEFT only, and the engine's walk calls them for those types only (tests/test_context.py
    # checks that every other type leaves the context as it was).
    ENTERED: ClassVar[frozenset[type]] = frozenset({cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.For,
                                                    cst.While}) | _BINDING_NODES
    LEFT: ClassVar[frozenset[type]] = frozenset({cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.For, cst.While})

    def enter(self, node: cst.CSTNode) -> None:
        kind = type(node)
        if kind is cst.FunctionDef:
            self._push_frame(node, self.tracing.is_traced_def(node))  # type: ignore[arg-type]
        elif kind is cst.Lambda:
            self._push_frame(node, self.tracing.is_traced_lambda(node))  # type: ignore[arg-type]
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
        cls = scope.parent.node if scope.parent is not None else None
        repeated = repetition(self, node, cls if isinstance(cls, cst.ClassDef) else None)
        self.frames.append(Frame(node, scope, traced, self.tracing.is_mapped(node), repeated=repeated))
        self._scope_stack.append(scope)

    @property
    def function(self) -> Frame | None:
        return self.frames[-1] if self.frames else None

    @property
    def in_traced_function(self) -> bool:
        return bool(self.frames) and self.frames[-1].traced

    @property
    def in_mapped_function(self) -> bool:
        """True inside a function that ``tf.map_fn``/``Dataset.map`` runs once per element (or a
        def/lambda nested in one): what it builds is alive once per parallel iteration."""
        for frame in reversed(self.frames):
            if frame.mapped:
                return True
            if not frame.traced:
                return False
        return False

    @property
    def repeated_scope(self) -> str | None:
        """"request" / "batch" / "epoch" / "trial" when the current function runs once per such event
        (a web handler, a Keras callback hook: facts/events.py) and the node is not in a loop
        of its own; None elsewhere."""
        return self.frames[-1].repeated if self.frames and not self.frames[-1].loops else None

    @property
    def enclosing_class(self) -> cst.ClassDef | None:
        return self._class_stack[-1] if self._class_stack else None

    @property
    def open_loops(self) -> list[cst.For | cst.While]:
        """The loops around the current node in the current function (or at module level)."""
        return self.frames[-1].loops if self.frames else self.module_loops

    def current_scope(self) -> Scope:
        return self.frames[-1].scope if self.frames else self.module_scope

    def loops_running(self, node: cst.CSTNode) -> list[cst.For | cst.While]:
        """The open loops that run ``node`` once per iteration: the iterable of a ``for`` is
        evaluated once, before its loop starts."""
        loops = self.open_loops
        if loops and isinstance(loops[-1], cst.For):
            header = loops[-1].iter
            if node is header or any(node is n for n in self.nodes_in(header)):
                return loops[:-1]
        return loops

    def nodes_in(self, node: cst.CSTNode, into_functions: bool = False) -> list[cst.CSTNode]:
        """Every node under ``node`` in source order; nested defs, lambdas and classes are skipped
        unless ``into_functions`` (their bodies run at another time). Cached per node; read off
        the recorded walk (``Walked.below``), or walked for a node outside this module's tree."""
        key = (id(node), into_functions)
        cached = self._nodes.get(key)
        if cached is None:
            skip = () if into_functions else _OWN_SCOPES
            cached = self.walked.below(node, skip)
            if cached is None:
                cached = []
                stack = list(reversed(children(node)))
                while stack:
                    child = stack.pop()
                    if not isinstance(child, skip):
                        cached.append(child)
                        stack.extend(reversed(children(child)))
            self._nodes[key] = cached
        return cached

    def calls_in(self, node: cst.CSTNode) -> list[cst.Call]:
        call = cst.Call
        return [n for n in self.nodes_in(node) if type(n) is call]

    # Value resolution ----------------------------------------------------------------------
    def binding(self, name: str, mode: Resolution = STATIC) -> Binding | None:
        """How ``name`` is bound here (see ``Resolution``); None when no enclosing scope binds it.
        Class bodies are skipped, as Python skips them when resolving names inside methods."""
        for scope in reversed(self._scope_stack):
            if isinstance(scope.node, cst.ClassDef) and scope is not self._scope_stack[-1]:
                continue
            if name in scope.declared_global:
                scope = self.module_scope
            if scope.binds(name):
                if mode is STATIC:
                    return Binding(scope, scope.only_value(name))
                latest = self._latest.get((id(scope), name))
                return Binding(scope, None) if latest is None else Binding(scope, *latest)
        return None

    def value_of(self, expr: cst.BaseExpression, mode: Resolution = STATIC) -> cst.BaseExpression | None:
        """The value ``expr`` stands for: for a name, its bound value (None when unknown or
        unpacked); at this point, also ``self.attr`` (the value last assigned to it in the
        enclosing class). Any other expression is its own value."""
        if isinstance(expr, cst.Name):
            found = self.binding(expr.value, mode)
            return None if found is None or found.unpacked else found.value
        if mode is AT_POINT and self._class_stack and is_self_attribute(expr):
            return self._latest_attr.get((id(self._class_stack[-1]), expr.attr.value))  # type: ignore[attr-defined]
        return expr

    def _record_binding(self, node: cst.CSTNode) -> None:
        scope = self._scope_stack[-1]
        if isinstance(node, cst.Assign):
            for target in node.targets:
                self._bind_target(scope, target.target, node.value)
        elif isinstance(node, cst.AugAssign):
            self._bind_target(scope, node.target, None)
        elif isinstance(node, cst.WithItem):
            if node.asname is not None:
                self._bind_target(scope, node.asname.name, node.item)
        elif isinstance(node, cst.For):
            self._bind_target(scope, node.target, None)

    def _bind_target(self, scope: Scope, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        if isinstance(target, cst.Name):
            self._latest[(id(scope), target.value)] = (value, False)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for name in target_names(target):  # `loss, logits = step(x)`: unpacked from value
                self._latest[(id(scope), name)] = (value, True)
        elif is_self_attribute(target) and self._class_stack:
            self._latest_attr[(id(self._class_stack[-1]), target.attr.value)] = value  # type: ignore[attr-defined]

    # Value kinds ---------------------------------------------------------------------------
    def int_value(self, expr: cst.BaseExpression, mode: Resolution = STATIC, _depth: int = 0) -> int | None:
        """The value of an integer expression when it is known: literals and arithmetic on
        names bound statically to known ints; AT_POINT also follows a name that the static
        binding cannot resolve to the value bound at this point (``k = 4`` ... ``k = 4``)."""
        if mode is AT_POINT:
            value = self.int_value(expr)
            if value is not None or _depth > 4:
                return value
            if isinstance(expr, cst.Name):
                found = self.binding(expr.value, AT_POINT)
                if found is not None and not found.unpacked and found.value is not None:
                    return self.int_value(found.value, AT_POINT, _depth + 1)
            return None
        if _depth > 8:
            return None
        literal = int_literal(expr)
        if literal is not None:
            return literal
        if isinstance(expr, cst.Name):
            value = self.value_of(expr)
            return None if value is None else self.int_value(value, STATIC, _depth + 1)
        if isinstance(expr, cst.BinaryOperation):
            left = self.int_value(expr.left, STATIC, _depth + 1)
            right = self.int_value(expr.right, STATIC, _depth + 1)
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
        """What ``expr`` is known to be (names: static binding); UNKNOWN when the code cannot tell."""
        if _depth > 8:
            return Kind.UNKNOWN
        if self.int_value(expr) is not None:
            return Kind.PY_INT
        if isinstance(expr, (cst.Float, cst.Imaginary)):
            return Kind.PY_NUMBER
        if isinstance(expr, (cst.List, cst.Tuple, cst.Dict, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp)):
            return Kind.PY_CONTAINER
        if isinstance(expr, cst.Name):
            if expr.value in ("True", "False"):
                return Kind.PY_INT
            value = self.value_of(expr)
            return Kind.UNKNOWN if value is None else self.value_kind(value, _depth + 1)
        if isinstance(expr, cst.Subscript):
            # tf.shape(x)[0] and friends: indexing a tensor gives a tensor.
            return Kind.TENSOR if self.value_kind(expr.value, _depth + 1) is Kind.TENSOR else Kind.UNKNOWN
        if isinstance(expr, cst.BinaryOperation):
            kinds = {self.value_kind(expr.left, _depth + 1), self.value_kind(expr.right, _depth + 1)}
            return Kind.TENSOR if Kind.TENSOR in kinds else Kind.UNKNOWN
        if isinstance(expr, cst.Call):
            func = dotted_name(expr.func)
            if func in ("len", "int"):
                return Kind.PY_INT
            if func in _CONTAINER_CALLS:
                return Kind.PY_CONTAINER
            if self.is_numpy_call(expr):
                return Kind.NDARRAY
            if self.is_dataset(expr):
                return Kind.DATASET
            name = self.call_name(expr)
            if is_variable_listing(name):
                return Kind.PY_CONTAINER
            if name is not None and name.startswith("tensorflow.") \
                    and name.split(".")[1] not in _NOT_TENSOR_NAMESPACES:
                return Kind.TENSOR
        return Kind.UNKNOWN

    # Trip counts ---------------------------------------------------------------------------
    def iterations(self, loops: "list[cst.For | cst.While]", fallback=None) -> int | None:
        """How many times the body of the nested ``loops`` runs in all: the product of their trip
        counts at this point, None when one is unknown. ``fallback(loop)`` is asked for a loop
        whose count the context does not know (a rule's own knowledge, e.g. sklearn splitters)."""
        total = 1
        for loop in loops:
            count = self.trip_count(loop, AT_POINT)
            if count is None and fallback is not None:
                count = fallback(loop)
            if count is None:
                return None
            total *= count
        return total

    def trip_count(self, loop: cst.For | cst.While | cst.BaseExpression,
                   mode: Resolution = STATIC) -> int | None:
        """How many times a Python ``for`` (given as the loop or its iterable) runs, when that is
        known; None for a ``while``. STATIC resolves names by their static binding; AT_POINT
        also reads a name's list/tuple value and the ``range``/``take`` bounds at this point."""
        if isinstance(loop, cst.While):
            return None
        iterable = loop.iter if isinstance(loop, cst.For) else loop
        if mode is AT_POINT:
            if isinstance(iterable, cst.Call) and dotted_name(iterable.func) in ("enumerate", "zip") \
                    and iterable.args:
                known = [c for c in (self.trip_count(a.value, AT_POINT) for a in iterable.args) if c is not None]
                return min(known) if known else None
            if isinstance(iterable, cst.Name):
                value = self.value_of(iterable, AT_POINT)
                if isinstance(value, (cst.List, cst.Tuple, cst.Set)):
                    return self.trip_count(value)
            if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) \
                    and iterable.func.attr.value == "take" and len(iterable.args) == 1:
                return self.int_value(iterable.args[0].value, AT_POINT)  # dataset.take(1)
            if isinstance(iterable, cst.Call) and dotted_name(iterable.func) == "range" \
                    and "range" not in self.aliases:
                return self.range_length(iterable, AT_POINT)
            return self.trip_count(iterable)
        if isinstance(iterable, (cst.List, cst.Tuple, cst.Set)):
            # a set literal runs at most once per element written (equal ones collapse)
            if any(isinstance(e, cst.StarredElement) for e in iterable.elements):
                return None
            return len(iterable.elements)
        if isinstance(iterable, cst.Name):
            value = self.value_of(iterable)
            return self._numpy_length(value) if value is not None and self.is_numpy_call(value) else None
        if not isinstance(iterable, cst.Call):
            return None
        func = dotted_name(iterable.func)
        if func == "range" and "range" not in self.aliases:
            return self.range_length(iterable)
        if self.imported_name(iterable.func) in TQDM_RANGES:
            return self.range_length(iterable)  # range behind a progress bar, same arguments
        if func in COUNT_KEEPING_CALLS and len(iterable.args) == 1:
            return self.trip_count(iterable.args[0].value)
        if self.is_numpy_call(iterable):
            return self._numpy_length(iterable)
        return None

    def range_length(self, call: cst.Call, mode: Resolution = STATIC) -> int | None:
        """Length of ``range(...)`` (or ``np.arange(...)``) with known integer bounds."""
        bounds = [self.int_value(a.value, mode) for a in call.args if a.keyword is None]
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
            return self.range_length(call)
        if kind not in ("zeros", "ones", "empty", "full") or not call.args:
            return None
        shape = call.args[0].value
        if isinstance(shape, (cst.Tuple, cst.List)) and shape.elements:
            shape = shape.elements[0].value
        return self.int_value(shape)
