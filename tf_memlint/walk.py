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
from array import array

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
        self._starts: dict[int, int] | None = None
        self._ends = array("i")

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
        everything under them; None when ``node`` has no children or is not in the recorded
        tree (only nodes with children are indexed: the index is then a fraction of the tree's
        size, where one entry per node was more than twice the tree)."""
        start = self._starts_by_id().get(id(node))
        if start is None:
            return None
        events, ends = self.events, self._ends
        end = ends[start]
        if not skip:
            return [n for n in events[start + 1:end] if n is not None]
        found: list[cst.CSTNode] = []
        index = start + 1
        while index < end:
            child = events[index]
            if child is None:
                index += 1
            elif isinstance(child, skip):
                index = ends[index] + 1  # past its leave event
            else:
                found.append(child)
                index += 1
        return found

    def holders(self, wanted: set[int], candidates: list[cst.CSTNode]) -> dict[int, int]:
        """For each id in ``wanted``, the index in ``candidates`` (children of the root: a
        module's statements) of the one that is or holds that node; one pass over the recording.
        A node under none of them is left out."""
        index_of = {id(candidate): index for index, candidate in enumerate(candidates)}
        found: dict[int, int] = {}
        depth, current = 0, None
        for node in self.events:
            if node is None:
                depth -= 1
                continue
            depth += 1
            if depth == 2:  # a child of the root
                current = index_of.get(id(node))
            if current is not None and id(node) in wanted:
                found[id(node)] = current
        return found

    def _starts_by_id(self) -> dict[int, int]:
        """id(node) -> the index of its entry event, for the nodes with children; and, in
        ``_ends``, the index of each entry event's leave event. Built on first use."""
        if self._starts is not None:
            return self._starts
        events = self.events
        starts: dict[int, int] = {}
        ends = self._ends = array("i", bytes(4 * len(events)))
        open_starts: list[int] = []
        last = len(events) - 1
        for index, node in enumerate(events):
            if node is None:
                ends[open_starts.pop()] = index
            else:
                open_starts.append(index)
                if index < last and events[index + 1] is not None:  # it has children
                    starts[id(node)] = index
        self._starts = starts
        return starts
