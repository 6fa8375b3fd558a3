"""TFM106 large-constant-in-graph: a NumPy array embedded in a graph as a constant."""

from __future__ import annotations

import libcst as cst

from tf_memlint.facts.arrays import NUMPY_FILE_READERS, NUMPY_SHAPED_FACTORIES
from tf_memlint.facts.sessions import TF1_GRAPH_CALLS
from tf_memlint.facts.tracing import TRACED_SCOPE
from tf_memlint.gate import ANYWHERE, NUMPY_ARRAY, NUMPY_NAME, TRACED, Inside
from tf_memlint.syntax import code_of
from tf_memlint.rule import Rule, register


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
    once_confidence = "high"
    repeats_with_place = False  # the harm is a size read off the code, not a repetition
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
                                  f"a tf.Variable or a placeholder instead", held_bytes=context.arrays.nbytes(array))
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
                          f"or keep it in a tf.Variable", held_bytes=context.arrays.nbytes(found.value))
