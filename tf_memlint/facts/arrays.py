"""NumPy arrays: which expressions are arrays, where they come from, and their size in bytes (TFM106).

Names resolve by their static binding (an array captured by a traced function is the one its
scope binds). The element type defaults to NumPy's 8-byte float64/int64 unless a dtype says
otherwise.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from tf_memlint.syntax import Kind, argument, dotted_name, number_literal

if TYPE_CHECKING:
    from tf_memlint.context import TFContext

# NumPy functions that build an array (not reductions that return a scalar).
NUMPY_ARRAY_FACTORIES = frozenset({
    "array", "asarray", "zeros", "ones", "empty", "full", "arange", "linspace", "eye", "identity",
    "zeros_like", "ones_like", "full_like", "empty_like", "load", "fromfile", "frombuffer",
    "loadtxt", "genfromtxt", "rand", "randn", "random", "normal", "uniform", "randint",
    "standard_normal", "concatenate", "stack", "vstack", "hstack", "tile", "repeat", "reshape",
    "meshgrid", "outer", "dot", "matmul",
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
_MAX_DEPTH = 8


def dtype_itemsize(expr: cst.BaseExpression) -> int | None:
    if isinstance(expr, cst.SimpleString):
        return DTYPE_ITEMSIZE.get(expr.raw_value)
    dotted = dotted_name(expr)
    return None if dotted is None else DTYPE_ITEMSIZE.get(dotted.rsplit(".", 1)[-1])


class ArrayFacts:
    def __init__(self, context: TFContext) -> None:
        self.context = context

    def is_ndarray(self, expr: cst.BaseExpression, _depth: int = 0) -> bool:
        """True when ``expr`` is known to be a NumPy array: a NumPy factory call, a name bound to
        one, or ``.astype()``/``.reshape()``/arithmetic with a number on one."""
        context = self.context
        if _depth > _MAX_DEPTH:
            return False
        if context.is_numpy_call(expr):
            return True
        if isinstance(expr, cst.Name):
            value = context.value_of(expr)
            return value is not None and self.is_ndarray(value, _depth + 1)
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
                and expr.func.attr.value in NDARRAY_SAME_SIZE_METHODS:
            return self.is_ndarray(expr.func.value, _depth + 1)
        if isinstance(expr, cst.Attribute) and expr.attr.value == "T":
            return self.is_ndarray(expr.value, _depth + 1)
        if isinstance(expr, cst.BinaryOperation):
            left, right = expr.left, expr.right
            if self.is_ndarray(left, _depth + 1):
                return self.is_ndarray(right, _depth + 1) or number_literal(right) \
                    or context.value_kind(right) in (Kind.PY_INT, Kind.PY_NUMBER)
            if self.is_ndarray(right, _depth + 1):
                return number_literal(left) or context.value_kind(left) in (Kind.PY_INT, Kind.PY_NUMBER)
        return False

    def nbytes(self, expr: cst.BaseExpression) -> int | None:
        """Bytes of a NumPy array expression when its size is known statically, else None."""
        elements = self._elements(expr, 0)
        return None if elements is None else elements * self._itemsize(expr, 0)

    def origin(self, expr: cst.BaseExpression, _depth: int = 0) -> str | None:
        """The NumPy function an array expression comes from (``linspace`` for
        ``np.linspace(0, 1, n).astype(np.float32) * 2``), following names, same-size methods and
        arithmetic; None when it is not known to be a NumPy array."""
        context = self.context
        if _depth > _MAX_DEPTH:
            return None
        if isinstance(expr, cst.Name):
            value = context.value_of(expr)
            return None if value is None else self.origin(value, _depth + 1)
        if isinstance(expr, cst.Attribute) and expr.attr.value == "T":
            return self.origin(expr.value, _depth + 1)
        if isinstance(expr, cst.BinaryOperation):
            for side in (expr.left, expr.right):
                if self.is_ndarray(side):
                    return self.origin(side, _depth + 1)
            return None
        if not isinstance(expr, cst.Call):
            return None
        if context.is_numpy_call(expr):
            return (context.numpy_name(expr.func) or "").rsplit(".", 1)[-1]
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in NDARRAY_SAME_SIZE_METHODS:
            return self.origin(expr.func.value, _depth + 1)
        return None

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
        return self.context.int_value(expr)

    def _elements(self, expr: cst.BaseExpression, depth: int) -> int | None:
        context = self.context
        int_value = context.int_value
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, cst.Name):
            value = context.value_of(expr)
            return None if value is None else self._elements(value, depth + 1)
        if isinstance(expr, cst.Attribute) and expr.attr.value == "T":
            return self._elements(expr.value, depth + 1)
        if isinstance(expr, cst.BinaryOperation):
            sides = [s for s in (expr.left, expr.right) if self.is_ndarray(s)]
            sizes = [self._elements(s, depth + 1) for s in sides]
            return None if not sizes or None in sizes else max(sizes)  # type: ignore[type-var]
        if not isinstance(expr, cst.Call):
            return None
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in NDARRAY_SAME_SIZE_METHODS \
                and not context.is_numpy_call(expr):
            return self._elements(expr.func.value, depth + 1)
        name = context.numpy_name(expr.func)
        if name is None:
            return None
        kind = name.rsplit(".", 1)[-1]
        positional = [a.value for a in expr.args if a.keyword is None and not a.star]
        if kind in ("zeros", "ones", "empty", "full"):
            return self._shape_elements(argument(expr, 0, "shape"))
        if kind in ("rand", "randn"):
            if any(a.star for a in expr.args):
                return None
            return self._shape_elements(cst.Tuple([cst.Element(v) for v in positional]))
        if kind in ("random", "standard_normal", "random_sample"):
            return self._shape_elements(argument(expr, 0, "size"))
        if kind in ("normal", "uniform", "randint"):
            return self._shape_elements(argument(expr, 2, "size"))
        if kind == "arange":
            return context.range_length(expr)
        if kind == "linspace":
            num = argument(expr, 2, "num")
            return 50 if num is None else int_value(num)
        if kind == "eye":
            n = int_value(positional[0]) if positional else None
            m = argument(expr, 1, "M")
            m_value = n if m is None or (isinstance(m, cst.Name) and m.value == "None") else int_value(m)
            return None if n is None or m_value is None else n * m_value
        if kind == "identity":
            n = int_value(positional[0]) if positional else None
            return None if n is None else n * n
        if kind in ("array", "asarray") and positional:
            return self._literal_elements(positional[0], depth + 1)
        if kind in ("zeros_like", "ones_like", "full_like", "empty_like", "reshape") and positional:
            return self._elements(positional[0], depth + 1)
        if kind in ("concatenate", "stack", "vstack", "hstack") and positional \
                and isinstance(positional[0], (cst.List, cst.Tuple)):
            sizes = [self._elements(e.value, depth + 1) for e in positional[0].elements]
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
        return self._elements(expr, depth + 1) if self.is_ndarray(expr) else 1

    def _itemsize(self, expr: cst.BaseExpression, depth: int) -> int:
        if depth > _MAX_DEPTH:
            return 8
        if isinstance(expr, cst.Name):
            value = self.context.value_of(expr)
            return 8 if value is None else self._itemsize(value, depth + 1)
        if not isinstance(expr, cst.Call):
            return 8
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "astype" and expr.args:
            return dtype_itemsize(expr.args[0].value) or 8
        for arg in expr.args:
            if arg.keyword is not None and arg.keyword.value == "dtype":
                return dtype_itemsize(arg.value) or 8
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in NDARRAY_SAME_SIZE_METHODS:
            return self._itemsize(expr.func.value, depth + 1)
        return 8
