"""A read-only LibCST traversal, shared by the engine and the context.

``CSTNode.visit`` rebuilds every node it passes (it is written for transformers), which made the
rule traversal cost twice the parse. ``walk`` visits the same nodes in the same order
(tests/test_gate.py compares it with ``visit`` on real code), calling ``on_visit``/``on_leave``
of a ``CSTVisitor``, without building anything; it is iterative, so deep nesting cannot exhaust
the recursion limit either.
"""

from __future__ import annotations

import dataclasses
import inspect
import re

import libcst as cst

_VISIT_CALL = re.compile(r"""visit_\w+\(\s*self\s*,\s*["'](\w+)["']""")
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}
_IS_NODE: dict[type, bool] = {}


def child_fields(cls: type) -> tuple[str, ...]:
    """The fields of a LibCST node class in the order ``CSTNode.visit`` visits them, read from
    its ``_visit_and_replace_children`` (the dataclass field order differs, e.g. ClassDef)."""
    fields = _CHILD_FIELDS.get(cls)
    if fields is None:
        try:
            source = inspect.getsource(cls._visit_and_replace_children)
            fields = tuple(dict.fromkeys(_VISIT_CALL.findall(source)))
        except (OSError, TypeError):
            fields = ()
        if not fields:  # no source (or a leaf): every dataclass field, in declaration order
            fields = tuple(f.name for f in dataclasses.fields(cls))
        _CHILD_FIELDS[cls] = fields
    return fields


def _is_node(value: object) -> bool:
    kind = type(value)
    known = _IS_NODE.get(kind)
    if known is None:
        known = _IS_NODE[kind] = issubclass(kind, cst.CSTNode)
    return known


def walk(root: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    """``root.visit(visitor)`` for a read-only visitor, without rebuilding the tree."""
    on_visit, on_leave = visitor.on_visit, visitor.on_leave
    stack: list[tuple[cst.CSTNode, bool]] = [(root, False)]
    pop, push = stack.pop, stack.append
    while stack:
        node, leaving = pop()
        if leaving:
            on_leave(node)
            continue
        push((node, True))
        if on_visit(node) is False:
            continue
        for child in reversed(children(node)):
            push((child, False))


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """``node.children`` (the child nodes in visit order) without LibCST's visit, which
    rebuilds the node to collect them."""
    found: list[cst.CSTNode] = []
    for name in _CHILD_FIELDS.get(type(node)) or child_fields(type(node)):
        value = getattr(node, name)
        if type(value) is tuple or type(value) is list:
            found.extend(item for item in value if _is_node(item))
        elif _is_node(value):
            found.append(value)
    return found
