"""Whole dataset splits: arrays known to hold an entire train/test split (TFM407).

An array is a whole split when it comes from a loader whose splits are known and large, through
tuple unpacking and derivations that keep every sample:

* ``(x_train, y_train), (x_test, y_test) = keras.datasets.mnist.load_data()`` (any spelling,
  ``mnist = tf.keras.datasets.mnist; mnist.load_data()`` too), for the datasets of
  ``KERAS_DATASET_SPLITS``;
* ``mnist.test.images`` / ``.labels`` of ``mnist = input_data.read_data_sets(...)`` (TF1's
  tutorial reader, any module spelling: copies of ``input_data.py`` were common);
* then ``x / 255.0``, ``(x - mean) / std``, ``.astype(...)``, ``.reshape(-1, ...)`` /
  ``.reshape(len(x), ...)``, ``x[..., None]``, ``x[:, :, :, np.newaxis]``, ``np.expand_dims(x, -1)``,
  ``tf.cast``/``tf.convert_to_tensor``, ``to_categorical``, ``pad_sequences``, ``x /= 255``...

Anything else is not known to be a whole split: a slice (``x_test[:100]``), one sample
(``x_test[0]``), a dataset, a parameter, the result of an unknown function.

Names resolve *before a node*: the last binding of the name in its scope that precedes the node
in the source (the walk-order view of ``AT_POINT``), applied again inside the value found, at the
position of its own assignment, so ``x_test = x_test / 255.0`` refers to the array loaded above
it. A name bound by a comprehension around the node, a loop, a ``with``, an import or a
parameter is not known.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Union

import libcst as cst

from tf_memlint.facts.keras import KERAS_APPLICATIONS
from tf_memlint.syntax import argument, int_literal, target_names
from tf_memlint.walk import children, preorder

if TYPE_CHECKING:
    from tf_memlint.context import TFContext
    from tf_memlint.scopes import Scope

# keras.datasets.<name>.load_data() -> ((x_train, y_train), (x_test, y_test)): samples per split.
# Only datasets whose samples are images or sequences: a whole split of boston_housing (404/102
# rows of 13 numbers) or california_housing (rows of 8 numbers) is small, one batch is fine.
KERAS_DATASET_SPLITS = {
    "mnist": ("MNIST", 60000, 10000),
    "fashion_mnist": ("Fashion-MNIST", 60000, 10000),
    "cifar10": ("CIFAR-10", 50000, 10000),
    "cifar100": ("CIFAR-100", 50000, 10000),
    "imdb": ("IMDB", 25000, 25000),
    "reuters": ("Reuters", 8982, 2246),
}
KERAS_DATASETS = "keras.datasets"
LOAD_DATA = "load_data"
# TF1's tutorial reader: input_data.read_data_sets(...).train/.validation/.test.images/.labels.
READ_DATA_SETS = "read_data_sets"
TF1_MNIST_SPLITS = {"train": 55000, "validation": 5000, "test": 10000}
TF1_SPLIT_ARRAYS = frozenset({"images", "labels"})
# A whole split as one batch is worth fixing for a convolutional network: its activations for
# 10,000 images reach hundreds of MiB (measured: 527 MiB for a 19-layer convnet on MNIST's test
# split). For a small dense network they are tens of MiB, about half of it TensorFlow's own copy
# of the fed array: true by the letter, harmless (heldout2: 13 such findings in two repositories;
# the development half: 11 in one). So the module must build a convolution (any TF/Keras
# spelling: tf.nn.conv2d, tf.layers.conv2d, keras.layers.Conv2D, SeparableConv2D...) or a
# keras.applications network.
CONVOLUTION = re.compile(r"^(conv[123]d(_transpose)?|depthwise_conv2d(_native)?|separable_conv[12]d"
                         r"|atrous_conv2d|convolution[123]?d?|(Separable|Depthwise)?Conv(olution)?[123]D"
                         r"(Transpose)?)$").match
# Gate triggers (gate.py) of ``convolutional``: every name CONVOLUTION accepts contains one of
# these words, and an application is a canonical name.
CONVOLUTION_TRIGGERS = frozenset({"~Conv", "~conv", KERAS_APPLICATIONS})
# Gate triggers (gate.py): a module without a split loader has no whole split.
SPLIT_TRIGGERS = frozenset({KERAS_DATASETS, "~" + READ_DATA_SETS})

# Derivations that keep every sample of their (first) operand.
SAMPLE_PRESERVING_METHODS = frozenset({"astype", "copy", "squeeze", "numpy"})
SAMPLE_PRESERVING_NUMPY = frozenset({
    "array", "asarray", "ascontiguousarray", "asfarray", "squeeze", "float16", "float32", "float64",
    "uint8", "int32", "int64",
})
SAMPLE_PRESERVING_TF = frozenset({
    "tensorflow.cast", "tensorflow.convert_to_tensor", "tensorflow.constant", "tensorflow.squeeze",
    "tensorflow.image.resize", "tensorflow.image.grayscale_to_rgb", "tensorflow.one_hot",
    "keras.utils.to_categorical", "keras.utils.normalize", "keras.utils.pad_sequences",
    "keras.preprocessing.sequence.pad_sequences", "keras.ops.convert_to_tensor", "keras.ops.cast",
})
RESHAPES = frozenset({"numpy.reshape", "tensorflow.reshape", "keras.ops.reshape"})
EXPAND_DIMS = frozenset({"numpy.expand_dims", "tensorflow.expand_dims", "keras.ops.expand_dims"})

_MAX_DEPTH = 12
_Path = tuple  # the position inside a loaded structure: (1, 0) is x_test, ("test", "images")


@dataclass(frozen=True)
class Split:
    """A whole split of a known dataset."""

    dataset: str  # "MNIST"
    part: str  # "train", "test", "validation"
    samples: int

    def __str__(self) -> str:
        return f"the whole {self.dataset} {self.part} split ({self.samples:,} samples)"


@dataclass(frozen=True)
class _Origin:
    loader: str  # a key of KERAS_DATASET_SPLITS, or READ_DATA_SETS
    path: _Path

    def split(self) -> Split | None:
        """The split when the path reaches one array of it, else None."""
        if self.loader == READ_DATA_SETS:
            part, array = self.path if len(self.path) == 2 else (None, None)
            if part in TF1_MNIST_SPLITS and array in TF1_SPLIT_ARRAYS:
                return Split("MNIST", part, TF1_MNIST_SPLITS[part])
            return None
        if len(self.path) == 2 and self.path[0] in (0, 1) and self.path[1] in (0, 1):
            label, train, test = KERAS_DATASET_SPLITS[self.loader]
            return Split(label, "test", test) if self.path[0] else Split(label, "train", train)
        return None

    def extended(self, path: _Path) -> _Origin | None:
        """Deeper into the loaded structure (a part, then an array of it); None past an array."""
        full = self.path + path
        return _Origin(self.loader, full) if len(full) <= 2 else None


# One binding of a name in a scope: (position from which it holds, kind, node, path). Kinds:
# "assign" (the node is the value, the name is its part at ``path``), "aug" (the node is an
# ``x op= value`` statement: the previous binding, changed in place) and "opaque" (a loop or
# comprehension target, a with, an import, an except name, a del, an unreadable target).
_Event = tuple[int, str, Union[cst.CSTNode, None], _Path]


class SplitFacts:
    def __init__(self, context: TFContext, calls: list) -> None:
        self.context = context
        self._calls = calls
        self._convolutional: bool | None = None
        self._order: dict[int, int] | None = None
        self._events: dict[int, dict[str, list[_Event]]] = {}
        self._comprehensions: list[tuple[int, int, frozenset[str]]] | None = None
        self._scope_of: dict[int, Scope] | None = None

    # Public --------------------------------------------------------------------------------
    @property
    def convolutional(self) -> bool:
        """The module builds a convolutional network (see ``CONVOLUTION``)."""
        if self._convolutional is None:
            names = (self.context.call_name(call) for call, _ in self._calls)
            self._convolutional = any(name is not None and _is_convolution(name) for name in names)
        return self._convolutional

    def reaches_convolution(self, expr: cst.BaseExpression) -> bool | None:
        """Whether what ``expr`` computes (a fetched tensor, a Keras model) is built from a
        convolution (or a sequence layer: ``SEQUENCE_LAYERS``), read back through every binding,
        made before ``expr``, of the names it is made of, through the defs of this module it calls
        and, for a model, through its ``.add(...)`` layers. None when some name or call cannot be
        read (a parameter, an attribute, another package's function): a module with a student
        Dense network beside a teacher CNN feeds the split to one of them."""
        context = self.context
        adds = self._adds()
        scope, position = self._scope_containing(expr), self._position(expr)
        # (expression, the def whose body it is in, whose own names are read in that body itself)
        stack: list[tuple[cst.CSTNode, Scope | None]] = [(expr, None)]
        seen: set = set()
        unknown = False
        for _ in range(_MAX_DATAFLOW_STEPS):
            if not stack:
                return None if unknown else False
            top, local = stack.pop()
            for node in [top, *context.nodes_in(top)]:
                if isinstance(node, cst.Call):
                    name = context.call_name(node) or context.imported_name(node.func)
                    if name is not None:
                        if _is_convolution(name) or name.rsplit(".", 1)[-1] in SEQUENCE_LAYERS:
                            return True
                        # A TF or Keras layer or op adds what its name says; another package's
                        # function (a model factory of the project) may build anything.
                        unknown = unknown or name.split(".")[0] not in _LAYER_PACKAGES
                        continue
                    definition = _module_def(context, node)
                    if definition is not None and id(definition) not in seen:
                        seen.add(id(definition))
                        stack.append((definition.body, context.scopes.get(definition)))
                    elif definition is None and not isinstance(node.func, cst.Call):
                        unknown = unknown or not _python_builtin(node.func)
                elif isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) \
                        and node.value.value == "self":
                    unknown = True
                elif isinstance(node, cst.Name) and node.value not in seen and node.value not in context.aliases \
                        and not (local is not None and local.binds(node.value)):
                    seen.add(node.value)
                    # Every binding made before the run (``L1 = conv2d(...)``, ``L1 = relu(L1)``...)
                    bindings = self._bindings_before(node.value, scope, position)
                    if bindings is None:
                        continue  # a builtin, or a name of no scope here
                    for _, kind, value, _ in bindings:
                        if kind == "opaque" or value is None:
                            unknown = True
                        else:
                            stack.append((value, None))
                    stack.extend((add, None) for add in adds.get(node.value, ()))
        return None

    def _adds(self) -> dict[str, list[cst.CSTNode]]:
        """The arguments of ``model.add(layer)`` calls of the module, by receiver name."""
        found: dict[str, list[cst.CSTNode]] = {}
        for call, _ in self._calls:
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value == "add" and isinstance(func.value, cst.Name):
                found.setdefault(func.value.value, []).extend(arg.value for arg in call.args)
        return found

    def whole_split(self, expr: cst.BaseExpression) -> Split | None:
        """The whole split ``expr`` holds at this point of the walk, or None when not known."""
        origin = self._trace(expr, self._position(expr), self.context.current_scope(), 0)
        return None if origin is None else origin.split()

    def split_sized(self, expr: cst.BaseExpression) -> Split | None:
        """``expr`` is the number of samples of a whole split: ``len(x_test)``,
        ``x_test.shape[0]``, ``np.shape(x_test)[0]``, or a name bound to one of these."""
        return self._sized(expr, self._position(expr), self.context.current_scope(), 0)

    # Positions -----------------------------------------------------------------------------
    def _position(self, node: cst.CSTNode) -> int:
        if self._order is None:
            # Layout included (the recorded walk leaves it out): _end places a subtree's end at
            # its last node, which may be layout.
            self._order = {id(n): i for i, n in enumerate(preorder(self.context.module))}
        return self._order.get(id(node), -1)

    def _end(self, node: cst.CSTNode) -> int:
        """The position of the last node under ``node`` (preorder: its subtree ends there)."""
        while True:
            below = children(node)
            if not below:
                return self._position(node)
            node = below[-1]

    def _scope_events(self, scope: Scope) -> dict[str, list[_Event]]:
        """Every binding of every name in ``scope``, in source order. A statement binds from its
        end (``x = f(x)`` reads the previous ``x``); a loop, comprehension or ``with`` target from
        the target itself (its body follows it)."""
        events = self._events.get(id(scope))
        if events is None:
            events = {}

            def add(target: cst.BaseExpression, value: cst.BaseExpression, path: _Path, at: int) -> None:
                if isinstance(target, cst.Name):
                    events.setdefault(target.value, []).append((at, "assign", value, path))
                elif isinstance(target, (cst.Tuple, cst.List)) and not any(
                        isinstance(e, cst.StarredElement) for e in target.elements):
                    for index, element in enumerate(target.elements):
                        add(element.value, value, path + (index,), at)
                else:
                    opaque(target, at)

            def opaque(target: cst.CSTNode, at: int) -> None:
                names = [target.value] if isinstance(target, cst.Name) else \
                    list(target_names(target)) if isinstance(target, cst.BaseExpression) else []
                for name in names:
                    events.setdefault(name, []).append((at, "opaque", None, ()))

            for node in self.context.nodes_in(scope.node):
                if isinstance(node, cst.Assign):
                    for target in node.targets:
                        add(target.target, node.value, (), self._end(node))
                elif isinstance(node, (cst.AnnAssign, cst.NamedExpr)):
                    if node.value is None:
                        opaque(node.target, self._end(node))
                    else:
                        add(node.target, node.value, (), self._end(node))
                elif isinstance(node, cst.AugAssign):
                    if isinstance(node.target, cst.Name):
                        events.setdefault(node.target.value, []).append((self._end(node), "aug", node, ()))
                elif isinstance(node, (cst.For, cst.CompFor)):
                    opaque(node.target, self._position(node.target))
                elif isinstance(node, cst.WithItem) and node.asname is not None:
                    opaque(node.asname.name, self._position(node.asname))
                elif isinstance(node, cst.ExceptHandler) and node.name is not None:
                    opaque(node.name.name, self._position(node.name))
                elif isinstance(node, cst.Del):
                    opaque(node.target, self._end(node))
                elif isinstance(node, (cst.Import, cst.ImportFrom)) and isinstance(node.names, (list, tuple)):
                    for alias in node.names:
                        local = alias.asname.name if alias.asname is not None else alias.name
                        while isinstance(local, cst.Attribute):
                            local = local.value
                        opaque(local, self._end(node))
            self._events[id(scope)] = events
        return events

    def _in_comprehension_binding(self, name: str, position: int) -> bool:
        """``position`` is inside a comprehension whose own ``for`` binds ``name``
        (``[model(x_test) for x_test in batches]``: the element comes before its ``for``)."""
        if self._comprehensions is None:
            self._comprehensions = []
            for node in self.context.nodes_in(self.context.module, into_functions=True):
                if isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
                    names: set[str] = set()
                    clause: cst.CompFor | None = node.for_in
                    while clause is not None:
                        names.update(target_names(clause.target))
                        clause = clause.inner_for_in
                    self._comprehensions.append((self._position(node), self._end(node), frozenset(names)))
        return any(start <= position <= end and name in names for start, end, names in self._comprehensions)

    def _scope_containing(self, node: cst.CSTNode) -> Scope:
        """The function (or module) scope whose body holds ``node``."""
        if self._scope_of is None:
            self._scope_of = {}
            for scope in self.context.scopes.values():
                if isinstance(scope.node, cst.ClassDef):
                    continue
                for inner in self.context.nodes_in(scope.node):
                    self._scope_of[id(inner)] = scope
        return self._scope_of.get(id(node), self.context.module_scope)

    def _lookup(self, name: str, scope: Scope, position: int) -> _Event | None:
        """The last binding of ``name`` before ``position``, in the scope Python resolves it in
        from ``scope``; None when it is not bound before (or bound by a parameter)."""
        if self._in_comprehension_binding(name, position):
            return None
        before = self._bindings_before(name, scope, position)
        if not before:
            return None
        event = before[-1]
        return event if event[1] != "opaque" else None

    def _bindings_before(self, name: str, scope: Scope, position: int) -> list[_Event] | None:
        """Every binding of ``name`` made before ``position``, in the scope Python resolves it in
        from ``scope`` (a parameter is one opaque binding); None when no scope binds it."""
        current: Scope | None = scope
        while current is not None:
            if isinstance(current.node, cst.ClassDef) and current is not scope:
                current = current.parent
                continue
            if name in current.declared_global:
                current = self.context.module_scope
            if current.binds(name):
                if name in current.params:
                    return [(0, "opaque", None, ())]
                return [e for e in self._scope_events(current).get(name, ()) if e[0] < position]
            current = current.parent
        return None

    def _plain_value(self, name: str, scope: Scope, position: int) -> cst.BaseExpression | None:
        """The value of ``name = value`` when that is the binding ``_lookup`` finds (not an
        augmented assignment, not one target of an unpacking), else None."""
        event = self._lookup(name, scope, position)
        if event is None or event[1] != "assign" or event[3]:
            return None
        assert event[2] is not None
        return event[2]  # type: ignore[return-value]

    def _where(self, node: cst.CSTNode) -> tuple[int, Scope]:
        """(position, scope) to evaluate ``node`` at: where it stands."""
        return self._position(node), self._scope_containing(node)

    # Tracing -------------------------------------------------------------------------------
    def _trace(self, expr: cst.BaseExpression, position: int, scope: Scope, depth: int) -> _Origin | None:
        """Where ``expr`` (evaluated at ``position`` in ``scope``) comes from in a loaded
        dataset, or None when it is not known to come from one whole."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, cst.Name):
            event = self._lookup(expr.value, scope, position)
            if event is None:
                return None
            _, kind, node, path = event
            assert node is not None
            if kind == "aug":  # x_test /= 255: the same array, changed in place
                return self._trace(expr, self._position(node), self._scope_containing(node), depth + 1)
            return self._trace_at(node, path, self._position(node), self._scope_containing(node), depth + 1)
        if isinstance(expr, cst.Attribute):
            attr = expr.attr.value
            if attr in TF1_SPLIT_ARRAYS or attr in TF1_MNIST_SPLITS:
                origin = self._trace(expr.value, position, scope, depth + 1)
                if origin is not None and origin.loader == READ_DATA_SETS:
                    return origin.extended((attr,))
            return None
        if isinstance(expr, cst.Subscript):
            origin = self._trace(expr.value, position, scope, depth + 1)
            if origin is None or not expr.slice:
                return None
            first = expr.slice[0].slice
            if origin.split() is None:  # data[1] of the loaded tuple
                one_index = isinstance(first, cst.Index) and len(expr.slice) == 1
                index = int_literal(first.value) if one_index else None  # type: ignore[union-attr]
                keras = origin.loader != READ_DATA_SETS
                return origin.extended((index,)) if index in (0, 1) and keras else None
            if isinstance(first, cst.Slice) and first.lower is None and first.upper is None \
                    and first.step is None:
                return origin  # x[:, :, :, None], x[:]
            if isinstance(first, cst.Index) and isinstance(first.value, cst.Ellipsis):
                return origin  # x[..., None]
            return None
        if isinstance(expr, cst.BinaryOperation):
            for side in (expr.left, expr.right):
                origin = self._trace(side, position, scope, depth + 1)
                if origin is not None and origin.split() is not None:
                    return origin  # broadcasting keeps every sample of the split
            return None
        if isinstance(expr, cst.UnaryOperation):
            return self._trace(expr.expression, position, scope, depth + 1)
        if not isinstance(expr, cst.Call):
            return None
        loader = self._loader(expr, position, scope, depth)
        if loader is not None:
            return _Origin(loader, ())
        subject, first_dimension = self._derivation(expr)
        if subject is None:
            return None
        origin = self._trace(subject, position, scope, depth + 1)
        split = None if origin is None else origin.split()
        if split is None:
            return None
        if first_dimension is not None and not (
                int_literal(first_dimension) in (-1, split.samples)
                or _length_subject(first_dimension, self.context) is not None):
            return None  # a reshape that does not keep the samples on the first axis
        return origin

    def _derivation(self, call: cst.Call) -> tuple[cst.BaseExpression | None, cst.BaseExpression | None]:
        """The array a sample-preserving call derives from, and for a reshape the new first
        dimension (which must keep the samples); (None, None) for any other call."""
        if any(a.star for a in call.args):
            return None, None
        args = [a for a in call.args if a.keyword is None]
        func = call.func
        name = self.context.qualified_name(func) or self.context.numpy_name(func)
        if name is None and isinstance(func, cst.Attribute):  # a method of the array
            method = func.attr.value
            if method in SAMPLE_PRESERVING_METHODS:  # x.astype("float32"), x.copy(), t.numpy()
                return func.value, None
            if method == "reshape" and args:  # x.reshape(-1, 784), x.reshape((-1, 784)); not x.reshape(-1)
                first = _first_dimension(args[0].value) if len(args) == 1 else args[0].value
                return (func.value, first) if first is not None else (None, None)
            return None, None
        if name is None or not args:
            return None, None
        subject = args[0].value
        short = name.rsplit(".", 1)[-1]
        if name in SAMPLE_PRESERVING_TF or (name == "numpy." + short and short in SAMPLE_PRESERVING_NUMPY):
            return subject, None
        if name in RESHAPES:
            shape = argument(call, 1, "shape") or argument(call, 1, "newshape")
            first = None if shape is None else _first_dimension(shape)
            return (subject, first) if first is not None else (None, None)
        if name in EXPAND_DIMS:
            axis = argument(call, 1, "axis")
            value = None if axis is None else int_literal(axis)
            return (subject, None) if value is not None and value != 0 else (None, None)
        return None, None

    def _trace_at(self, value: cst.BaseExpression, path: _Path, position: int, scope: Scope,
                  depth: int) -> _Origin | None:
        """The origin of the part ``path`` of ``value`` (``a, b = x / 255, y``: pick the element)."""
        while path and isinstance(value, (cst.Tuple, cst.List)):
            elements = value.elements
            if any(isinstance(e, cst.StarredElement) for e in elements) or path[0] >= len(elements):
                return None
            value, path = elements[path[0]].value, path[1:]
        origin = self._trace(value, position, scope, depth)
        if origin is None or not path:
            return origin
        if origin.loader == READ_DATA_SETS:
            return None
        return origin.extended(path)

    def _loader(self, call: cst.Call, position: int, scope: Scope, depth: int) -> str | None:
        """The dataset a loader call loads: ``keras.datasets.mnist.load_data()`` gives "mnist",
        ``input_data.read_data_sets(...)`` READ_DATA_SETS; else None."""
        func = call.func
        last = func.attr.value if isinstance(func, cst.Attribute) else None
        if isinstance(func, cst.Name):
            last = func.value
        if last == READ_DATA_SETS:
            return READ_DATA_SETS
        if last != LOAD_DATA:
            return None
        name = self._module_name(func, position, scope, depth)
        if name is None:
            return None
        parts = name.split(".")
        if len(parts) == 4 and ".".join(parts[:2]) == KERAS_DATASETS and parts[3] == LOAD_DATA \
                and parts[2] in KERAS_DATASET_SPLITS:
            return parts[2]
        return None

    def _module_name(self, expr: cst.BaseExpression, position: int, scope: Scope, depth: int) -> str | None:
        """The canonical name of ``expr``, following a name bound to a module attribute
        (``mnist = tf.keras.datasets.mnist``; ``mnist.load_data``)."""
        if depth > _MAX_DEPTH:
            return None
        name = self.context.qualified_name(expr)
        if name is not None:
            return name
        if isinstance(expr, cst.Attribute):
            head = self._module_name(expr.value, position, scope, depth + 1)
            return None if head is None else f"{head}.{expr.attr.value}"
        if isinstance(expr, cst.Name):
            value = self._plain_value(expr.value, scope, position)
            return None if value is None else self._module_name(value, *self._where(value), depth + 1)
        return None

    def _sized(self, expr: cst.BaseExpression, position: int, scope: Scope, depth: int) -> Split | None:
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, cst.Name):
            value = self._plain_value(expr.value, scope, position)
            return None if value is None else self._sized(value, *self._where(value), depth + 1)
        subject = _length_subject(expr, self.context)
        if subject is None:
            return None
        origin = self._trace(subject, position, scope, depth + 1)
        return None if origin is None else origin.split()


def _first_dimension(shape: cst.BaseExpression) -> cst.BaseExpression | None:
    """The first element of a literal shape tuple or list, else None."""
    if isinstance(shape, (cst.Tuple, cst.List)) and shape.elements \
            and not isinstance(shape.elements[0], cst.StarredElement):
        return shape.elements[0].value
    return None


def _length_subject(expr: cst.BaseExpression, context: TFContext) -> cst.BaseExpression | None:
    """``x`` of ``len(x)``, ``x.shape[0]``, ``np.shape(x)[0]`` or ``tf.shape(x)[0]``."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "len" \
            and len(expr.args) == 1 and expr.args[0].keyword is None and not expr.args[0].star:
        return expr.args[0].value
    if not (isinstance(expr, cst.Subscript) and len(expr.slice) == 1
            and isinstance(expr.slice[0].slice, cst.Index) and int_literal(expr.slice[0].slice.value) == 0):
        return None
    value = expr.value
    if isinstance(value, cst.Attribute) and value.attr.value == "shape":
        return value.value
    if isinstance(value, cst.Call) and value.args and (
            context.numpy_name(value.func) == "numpy.shape"
            or context.qualified_name(value.func) == "tensorflow.shape"):
        return value.args[0].value
    return None


# Layers and ops whose activations, per sample, are many times the input's (a time step each, a
# vector per token): a split through one of them is as heavy as through a convolution.
SEQUENCE_LAYERS = frozenset({"LSTM", "GRU", "SimpleRNN", "RNN", "Bidirectional", "ConvLSTM2D", "Embedding",
                             "MultiHeadAttention", "Attention", "AdditiveAttention", "LSTMCell", "GRUCell",
                             "BasicLSTMCell", "BasicRNNCell", "MultiRNNCell", "dynamic_rnn",
                             "bidirectional_dynamic_rnn", "static_rnn", "embedding_lookup"})
_LAYER_PACKAGES = frozenset({"tensorflow", "keras", "tf_keras", "numpy"})
_MAX_DATAFLOW_STEPS = 200  # expressions read back from one fed tensor or model: past this, unknown


def _is_convolution(name: str) -> bool:
    return CONVOLUTION(name.rsplit(".", 1)[-1]) is not None or name.startswith(KERAS_APPLICATIONS + ".")


def _module_def(context: TFContext, call: cst.Call) -> cst.FunctionDef | None:
    frame = context.function
    found = context.functions.resolve(call, frame.node if frame is not None else None)
    return found[1] if found is not None else None


def _python_builtin(func: cst.BaseExpression) -> bool:
    """``len(x)``, ``float(v)``, ``range(n)``: a builtin's call adds no layer."""
    return isinstance(func, cst.Name) and func.value in _BUILTINS


_BUILTINS = frozenset({"len", "int", "float", "range", "list", "tuple", "dict", "zip", "enumerate", "min", "max",
                       "abs", "sum", "round", "str", "bool", "print", "isinstance", "sorted", "reversed"})
