"""Small facts about LibCST syntax that the context, its fact modules and the rules share."""

from __future__ import annotations

import enum
from typing import Iterator

import libcst as cst

_EMPTY_MODULE = cst.Module(body=[])


class Kind(enum.Enum):
    """What a value is known to be. UNKNOWN means: the code cannot tell, so rules stay silent."""

    PY_INT = "Python int"
    PY_NUMBER = "Python number"
    PY_CONTAINER = "Python container"
    NDARRAY = "NumPy array"
    TENSOR = "tensor"
    DATASET = "tf.data.Dataset"
    UNKNOWN = "unknown"


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
