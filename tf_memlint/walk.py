"""A read-only LibCST traversal, shared by the engine and the context.

``CSTNode.visit`` rebuilds every node it passes (it is written for transformers), which made the
rule traversal cost twice the parse. ``walk`` visits the same nodes in the same order
(tests/test_gate.py compares it with ``visit`` on real code), calling ``on_visit``/``on_leave``
of a ``CSTVisitor``, without building anything; it is iterative, so deep nesting cannot exhaust
the recursion limit either.

A module is walked in full twice per file (the scope pre-pass, then the rules) and its subtrees
again by ``TFContext.nodes_in``. ``Walked`` records the first full walk, so the later passes
replay it instead of finding every node's children again (that search was most of a walk).
``positions_of`` places nodes (line, column) with the help of that record, only for the
top-level statements that hold them.
"""

from __future__ import annotations

import ast
import bisect
import collections.abc
import contextlib
import dataclasses
import inspect
import re
import threading
import typing
from array import array
from typing import Any, Callable, Iterator

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

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


_RECORDED_FIELDS: dict[type, tuple[str, ...]] = {}


def recorded_fields(cls: type) -> tuple[str, ...]:
    """``child_fields(cls)`` without the fields that can only hold layout, by LibCST's type
    annotations (``Call.whitespace_after_func``, ``Arg.comma``, ``Name.lpar``...): the recording
    walk need not look at them. Every field, when the annotations cannot be read."""
    fields = _RECORDED_FIELDS.get(cls)
    if fields is None:
        fields = child_fields(cls)
        try:
            hints = typing.get_type_hints(cls)
        except Exception:  # noqa: BLE001 - unreadable annotations: look at every field
            hints = {}
        fields = _RECORDED_FIELDS[cls] = tuple(
            name for name in fields if not (name in hints and _only_layout(hints[name])))
    return fields


def _only_layout(hint: Any) -> bool:
    """The annotation admits layout nodes only (at least one, nothing else)."""
    kinds = _node_kinds(hint)
    return bool(kinds) and all(_concrete(kind) <= LAYOUT for kind in kinds)


def _node_kinds(hint: Any) -> set[type] | None:
    """The node classes an annotation admits (None: something unknown, e.g. a string)."""
    origin = typing.get_origin(hint)
    if origin is typing.Union or origin in (list, tuple, collections.abc.Sequence):
        found: set[type] = set()
        for arg in typing.get_args(hint):
            if arg is Ellipsis:
                continue
            kinds = _node_kinds(arg)
            if kinds is None:
                return None
            found |= kinds
        return found
    if hint is cst.MaybeSentinel or hint is type(None):
        return set()
    if isinstance(hint, type) and issubclass(hint, cst.CSTNode):
        return {hint}
    return None


def _concrete(kind: type) -> set[type]:
    """``kind`` and its subclasses that can be instantiated."""
    found = set() if inspect.isabstract(kind) else {kind}
    for sub in kind.__subclasses__():
        found |= _concrete(sub)
    return found


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


# The layout of the code: whitespace, comments, newlines, brackets and separators. No fact and no
# rule is about them (tests/test_gate.py checks that no rule, the context or the scope pre-pass
# visits one), and they are about two thirds of a LibCST tree's nodes: the pre-pass leaves them
# out of its recorded walk, so the rules' walk and ``below`` never see them. Each holds only
# other layout nodes.
LAYOUT: frozenset[type] = frozenset({
    cst.SimpleWhitespace, cst.ParenthesizedWhitespace, cst.TrailingWhitespace, cst.Newline, cst.EmptyLine,
    cst.Comment, cst.Comma, cst.Dot, cst.AssignEqual, cst.Colon, cst.Semicolon, cst.LeftParen, cst.RightParen,
    cst.LeftSquareBracket, cst.RightSquareBracket, cst.LeftCurlyBrace, cst.RightCurlyBrace})


def preorder(root: cst.CSTNode) -> list[cst.CSTNode]:
    """Every node under ``root``, layout included, in walk order (``root`` left out)."""
    found: list[cst.CSTNode] = []
    stack = list(reversed(children(root)))
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(reversed(children(node)))
    return found


class Walked:
    """A tree walked once (``Walked(root, visitor)`` is ``walk(root, visitor)``), recorded so that
    ``replay`` calls another visitor in exactly the same order, and ``below`` lists a subtree's
    nodes, without walking it again. The visitor of the recording walk must not prune (return
    False from ``on_visit``): what it skips would be missing from every replay."""

    def __init__(self, root: cst.CSTNode, visitor: cst.CSTVisitor,
                 visits: dict[type, Callable[[Any, Any], Any]] | None = None,
                 leaves: dict[type, Callable[[Any, Any], Any]] | None = None,
                 leave_out: frozenset[type] = frozenset()) -> None:
        """``visits``/``leaves``: the visitor's own methods by node type (``method(visitor,
        node)``), called instead of ``on_visit``/``on_leave``; the walk of every node is the
        pre-pass's, so the dispatch is inline. ``leave_out``: node types neither visited nor
        recorded, with everything under them (``LAYOUT``)."""
        self.root = root
        self.leave_out = leave_out
        # Each node when it is entered, then None when it is left: the order of walk().
        self.events: list[cst.CSTNode | None] = []
        # The index of each entry event's leave event (0 at a leave event's own index), and the
        # index of the entry event of each node with children, by id: what ``below`` reads.
        self._ends = array("i")
        self._starts: dict[int, int] = {}
        self._ids: list[int] | None = None  # id of each event's node, for ``contains``
        self._record(root, visitor, visits, leaves)
        # positions_of's answers: (placed with a stdlib tree's help) -> id(node) -> (line, column)
        self.placed: dict[bool, dict[int, tuple[int, int]]] = {}

    def _record(self, root: cst.CSTNode, visitor: cst.CSTVisitor, visits: dict | None, leaves: dict | None) -> None:
        """``walk(root, visitor, self.events)``, filling the index ``below`` reads as it goes."""
        events, ends, starts = self.events, self._ends, self._starts
        record, mark = events.append, ends.append
        if visits is None or leaves is None:
            on_visit, on_leave = visitor.on_visit, visitor.on_leave
            visits, leaves = _AnyType(on_visit), _AnyType(on_leave)
            unbound = True
        else:
            unbound = False
        is_node, leave_out = _IS_NODE, self.leave_out
        if leave_out == LAYOUT:
            fields_of, fields_for = _RECORDED_FIELDS, recorded_fields
        else:
            fields_of, fields_for = _CHILD_FIELDS, child_fields
        stack: list[Any] = [root]  # a node to enter, or the index of the entry event of one to leave
        pop, push = stack.pop, stack.append
        while stack:
            item = pop()
            if type(item) is int:
                node = events[item]
                leave = leaves.get(type(node))
                if leave is not None:
                    leave(node) if unbound else leave(visitor, node)
                ends[item] = len(events)
                record(None)
                mark(0)
                continue
            index = len(events)
            record(item)
            mark(0)
            push(index)
            kind = type(item)
            visit = visits.get(kind)
            if visit is not None and (visit(item) if unbound else visit(visitor, item)) is False:
                raise ValueError("a recorded walk must visit every node")
            found: list[cst.CSTNode] = []
            fields = fields_of.get(kind)
            for name in fields if fields is not None else fields_for(kind):
                value = getattr(item, name)
                value_kind = type(value)
                if value_kind is tuple or value_kind is list:
                    for child in value:
                        child_kind = type(child)
                        known = is_node.get(child_kind)
                        if known is None:
                            known = _is_node(child)
                        if known and child_kind not in leave_out:
                            found.append(child)
                else:
                    known = is_node.get(value_kind)
                    if known is None:
                        known = _is_node(value)
                    if known and value_kind not in leave_out:
                        found.append(value)
            if found:
                starts[id(item)] = index
                found.reverse()
                stack.extend(found)

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
        # By exact type: isinstance on LibCST's classes (ABCs) costs a Python call per node, and
        # the classes skipped (FunctionDef, Lambda, ClassDef) have no subclasses.
        skipped = frozenset(skip)
        while index < end:
            child = events[index]
            if child is None:
                index += 1
            elif type(child) in skipped:
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

    def entry_indexes(self, wanted: set[int]) -> dict[int, int] | None:
        """id -> the index of that node's entry event, for each id in ``wanted``; None when one
        is not in the recording. Nodes with children are indexed; the others are searched for."""
        found = {}
        for key in wanted:
            entry = self._entry(key)
            if entry is None:
                return None
            found[key] = entry
        return found

    def _entry(self, key: int) -> int | None:
        """The index of the entry event of the node whose id is ``key``: indexed for nodes with
        children, searched for the others; None when it is not in the recording."""
        entry = self._starts.get(key)
        if entry is None:
            if self._ids is None:
                self._ids = list(map(id, self.events))
            try:
                entry = self._ids.index(key)
            except ValueError:
                return None
        return entry

    def holding(self, siblings: list[cst.CSTNode], targets: list[int]) -> dict[int, list[int]] | None:
        """The entry event indexes ``targets`` (sorted) by the index in ``siblings`` (nodes with
        children, in walk order: a block's statements) of the one each is in or is; None when
        one is in none of them."""
        starts = []
        for sibling in siblings:
            start = self._starts.get(id(sibling))
            if start is None:
                return None
            starts.append(start)
        found: dict[int, list[int]] = {}
        for target in targets:
            index = bisect.bisect_right(starts, target) - 1
            if index < 0 or target > self._ends[starts[index]]:
                return None
            found.setdefault(index, []).append(target)
        return found

    def contains(self, root: cst.CSTNode, target: cst.CSTNode) -> bool | None:
        """``target`` is ``root`` or under it, read off the recording; None when either is not
        in it (a layout node, a node of another tree), or ``root`` has no children here."""
        if root is target:
            return True
        start = self._starts.get(id(root))
        if start is None:
            return None
        inner = self._entry(id(target))
        return None if inner is None else start < inner < self._ends[start]

    def _starts_by_id(self) -> dict[int, int]:
        """id(node) -> the index of its entry event, for the nodes with children (``_ends``
        holds the index of each entry event's leave event)."""
        return self._starts


# The recording of the tree being linted on this thread (``in_use``), which ``recorded_contains``
# reads: a containment test there is two lookups instead of a walk of the subtree.
_current = threading.local()


@contextlib.contextmanager
def in_use(walked: Walked) -> Iterator[None]:
    previous = getattr(_current, "walked", None)
    _current.walked = walked
    try:
        yield
    finally:
        _current.walked = previous


def recorded_contains(root: cst.CSTNode, target: cst.CSTNode) -> bool | None:
    """``Walked.contains`` on the recording in use on this thread; None without one, or when it
    cannot tell. The nodes of a recording are alive as long as it is, so an id found in it is
    that node's."""
    walked = getattr(_current, "walked", None)
    return None if walked is None else walked.contains(root, target)


class _AnyType:
    """The same method for every node type: a visitor without per-type tables."""

    def __init__(self, method: Callable[[Any], Any]) -> None:
        self.method = method

    def get(self, kind: type) -> Callable[[Any], Any]:
        return self.method


def positions_of(module: cst.Module, source: bytes | str, nodes: list[cst.CSTNode],
                 tree: ast.AST | None, walked: Walked) -> dict[int, tuple[int, int]]:
    """(line, column) of the start of each node of the module, by id (a node not in it is left
    out). ``walked``: the module's recorded walk, which says which statement holds each node.

    Positions cost a code-generation pass. Over the whole module that was most of the cost of a
    file with one finding in a 10,000-line module, so positions are generated only for the
    innermost statements that hold the nodes (a statement of a def of a class, not the class),
    each placed by the line where the stdlib tree says it starts, with the indentation of the
    blocks around it. That placement is checked: the statement's generated code must be the
    source text at that line; otherwise (or without a stdlib tree) the whole module is used.
    """
    # Messages ask for lines one node at a time (FunctionFacts.line_of), then the engine for the
    # findings: the positions of every node of each statement placed are kept with the walk.
    placed = walked.placed.setdefault(tree is not None, {})
    if all(id(node) in placed for node in nodes):
        return {id(node): placed[id(node)] for node in nodes if id(node) in placed}
    wanted = {id(node) for node in nodes if id(node) not in placed}
    statements = _innermost_statements(module, tree, walked, wanted) if tree is not None else None
    if statements is not None:
        found: dict[int, tuple[int, int]] = {}
        text = source.decode(module.encoding) if isinstance(source, bytes) else source
        starts = [0] + [m.end() for m in _NEWLINE.finditer(text)]
        for statement, line, indents in statements:
            first = line - 1 - len(statement.leading_lines)  # 0-based line of its code
            provider = PositionProvider()
            state = PositionProvidingCodegenState(default_indent=module.default_indent,
                                                  default_newline=module.default_newline, provider=provider)
            state.indent_tokens.extend(indents)  # as the blocks around it would have pushed them
            statement._codegen(state)
            if not 0 <= first < len(starts) or not text.startswith("".join(state.tokens), starts[first]):
                found.clear()
                break
            for node, position in provider._computed.items():
                found[id(node)] = (position.start.line + first, position.start.column)
        if wanted.issubset(found):
            placed.update(found)
            return {id(node): placed[id(node)] for node in nodes}
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    placed.update((id(node), (position.start.line, position.start.column)) for node, position in positions.items())
    return {id(node): placed[id(node)] for node in nodes if id(node) in placed}


_NEWLINE = re.compile(r"\r\n|\r|\n")
# The compound statements whose indented body is searched for a smaller statement to place, with
# the stdlib statements each may be.
_BODY_OF = {cst.FunctionDef: (ast.FunctionDef, ast.AsyncFunctionDef), cst.ClassDef: (ast.ClassDef,),
            cst.For: (ast.For, ast.AsyncFor), cst.While: (ast.While,), cst.If: (ast.If,),
            cst.With: (ast.With, ast.AsyncWith), cst.Try: (ast.Try,)}


def _innermost_statements(module: cst.Module, tree: ast.AST, walked: Walked,
                          wanted: set[int]) -> list[tuple[cst.CSTNode, int, list[str]]] | None:
    """The statements whose positions place the ``wanted`` nodes: for each node, the innermost
    statement holding it along the bodies of compound statements (``_BODY_OF``), with the line
    of its first token by the stdlib tree and the indentation of the blocks it is in. None when
    a node is not in the recorded walk or the two trees do not line up at the top level."""
    if not isinstance(tree, ast.Module):
        return None
    entries = walked.entry_indexes(wanted)
    if entries is None:
        return None
    chosen: list[tuple[cst.CSTNode, int, list[str]]] = []

    def place(statements, ast_body: list[ast.stmt], indents: list[str], targets: list[int]) -> bool:
        lines = _statement_lines(statements, ast_body)
        held = walked.holding(statements, targets) if lines is not None else None
        if held is None:
            return False
        for index, inner in held.items():
            statement = statements[index]
            line, stdlib = lines[index]  # type: ignore[index]
            block = getattr(statement, "body", None)
            if type(stdlib) in _BODY_OF.get(type(statement), ()) and type(block) is cst.IndentedBlock \
                    and place(block.body, stdlib.body, [*indents, module.default_indent if block.indent is None
                                                        else block.indent], inner):
                continue
            chosen.append((statement, line, indents))
        return True

    return chosen if place(module.body, tree.body, [], sorted(entries.values())) else None


def _statement_lines(statements, body: list[ast.stmt]) -> list[tuple[int, ast.stmt]] | None:
    """For each LibCST statement, the line of its first token and its first stdlib statement (a
    LibCST statement line holds one stdlib statement per ``;``-separated part); None when the
    two lists do not line up."""
    found: list[tuple[int, ast.stmt]] = []
    index = 0
    for statement in statements:
        if index >= len(body):
            return None
        first = body[index]
        line = first.lineno
        decorators = getattr(first, "decorator_list", None)
        if decorators:
            line = min(line, *(d.lineno for d in decorators))
        found.append((line, first))
        index += len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1
    return found if index == len(body) else None
