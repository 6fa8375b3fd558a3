"""A read-only LibCST traversal, shared by the engine and the context.

``CSTNode.visit`` rebuilds every node it passes (it is written for transformers), which made the
rule traversal cost twice the parse. ``walk`` visits the same nodes in the same order
(tests/test_gate.py compares it with ``visit`` on real code), calling ``on_visit``/``on_leave``
of a ``CSTVisitor``, without building anything; it is iterative, so deep nesting cannot exhaust
the recursion limit either.

A module is walked in full twice per file (the scope pre-pass, then the rules) and its subtrees
again by ``TFContext.nodes_in``. ``Walked`` records the first full walk, so the later passes
replay it instead of finding every node's children again (that search was most of a walk).
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


def walk(root: cst.CSTNode, visitor: cst.CSTVisitor, events: list | None = None) -> None:
    """``root.visit(visitor)`` for a read-only visitor, without rebuilding the tree. ``events``
    (``Walked``'s recording): each node is appended when entered, None when left; the visitor
    may not prune then."""
    on_visit, on_leave = visitor.on_visit, visitor.on_leave
    record = events.append if events is not None else None
    stack: list[tuple[cst.CSTNode, bool]] = [(root, False)]
    pop, push = stack.pop, stack.append
    while stack:
        node, leaving = pop()
        if leaving:
            on_leave(node)
            if record is not None:
                record(None)
            continue
        push((node, True))
        if record is not None:
            record(node)
        if on_visit(node) is False:
            if record is not None:
                raise ValueError("a recorded walk must visit every node")
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


class Walked:
    """A tree walked once (``Walked(root, visitor)`` is ``walk(root, visitor)``), recorded so that
    ``replay`` calls another visitor in exactly the same order, and ``below`` lists a subtree's
    nodes, without walking it again. The visitor of the recording walk must not prune (return
    False from ``on_visit``): what it skips would be missing from every replay."""

    def __init__(self, root: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
        self.root = root
        # Each node when it is entered, then None when it is left: the order of walk().
        self.events: list[cst.CSTNode | None] = []
        walk(root, visitor, self.events)
        self._spans: dict[int, tuple[int, int]] | None = None

    def replay(self, visitor: cst.CSTVisitor) -> None:
        """``walk(root, visitor)`` from the recording; ``on_visit``'s result is ignored (no
        pruning: every node is visited)."""
        on_visit, on_leave = visitor.on_visit, visitor.on_leave
        open_nodes: list[cst.CSTNode] = []
        push, pop = open_nodes.append, open_nodes.pop
        for node in self.events:
            if node is None:
                on_leave(pop())
            else:
                push(node)
                on_visit(node)

    def below(self, node: cst.CSTNode, skip: tuple[type, ...] = ()) -> list[cst.CSTNode] | None:
        """Every node under ``node`` in walk order, leaving out nodes of the ``skip`` types and
        everything under them; None when ``node`` is not in the recorded tree."""
        spans = self._spans_by_id()
        span = spans.get(id(node))
        if span is None:
            return None
        events = self.events
        if not skip:
            return [n for n in events[span[0] + 1:span[1]] if n is not None]
        found: list[cst.CSTNode] = []
        index, end = span[0] + 1, span[1]
        while index < end:
            child = events[index]
            if child is None:
                index += 1
            elif isinstance(child, skip):
                index = spans[id(child)][1] + 1
            else:
                found.append(child)
                index += 1
        return found

    def holder(self, node: cst.CSTNode, candidates: list[cst.CSTNode]) -> int | None:
        """The index in ``candidates`` of the one ``node`` is (or is under), or None."""
        spans = self._spans_by_id()
        span = spans.get(id(node))
        if span is None:
            return None
        for index, candidate in enumerate(candidates):
            outer = spans.get(id(candidate))
            if outer is not None and outer[0] <= span[0] <= outer[1]:
                return index
        return None

    def _spans_by_id(self) -> dict[int, tuple[int, int]]:
        """id(node) -> (index of its entry event, index of its leave event), built on first use."""
        if self._spans is not None:
            return self._spans
        spans: dict[int, tuple[int, int]] = {}
        self._spans = spans
        starts: list[int] = []
        nodes: list[cst.CSTNode] = []
        for index, node in enumerate(self.events):
            if node is None:
                spans[id(nodes.pop())] = (starts.pop(), index)
            else:
                starts.append(index)
                nodes.append(node)
        return spans
