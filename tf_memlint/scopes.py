"""Names and scopes of one module: the pre-pass the core context is built from.

``collect`` walks the module once, before the rules run, and records what a rule cannot learn
on the way down: the import aliases, every scope (module, class, def, lambda) with the names it
binds and their values, the calls (with the scope they are in) and the classes. Nothing here
knows TensorFlow; ``context.TFContext`` and the fact modules interpret these facts.

It also names the two ways a name's value is resolved (``Resolution``), which
``TFContext.binding`` / ``value_of`` / ``int_value`` / ``trip_count`` take as their ``mode``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple

import libcst as cst

from tf_memlint.syntax import all_params, dotted_name, target_names
from tf_memlint.walk import LAYOUT, Walked


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


class Resolution(enum.Enum):
    """How ``TFContext.binding`` resolves a name."""

    # The innermost enclosing function/module scope that binds the name, with its value when
    # that scope binds it exactly once by a plain assignment. Where in the walk you ask does not
    # matter (a function may use a module constant assigned below it).
    STATIC = "static binding"
    # The value bound to the name (in that same scope) last before the current node of the walk,
    # ``self.attr = ...`` in the enclosing class included; None before the first binding, after
    # a binding to something opaque (a parameter, a loop target, ``x += 1``).
    AT_POINT = "binding at this point"


STATIC, AT_POINT = Resolution.STATIC, Resolution.AT_POINT


class Binding(NamedTuple):
    scope: Scope  # the scope that binds the name
    value: cst.BaseExpression | None  # None: bound, but to nothing the code lets us read
    unpacked: bool = False  # AT_POINT only: ``a, b = value`` (value is the whole right side)


@dataclass
class Frame:
    """A function (or lambda) being traversed, with the loops open inside it."""

    node: cst.CSTNode
    scope: Scope
    traced: bool  # TensorFlow traces this body into a graph (facts/tracing.py decides)
    mapped: bool = False  # tf.map_fn / Dataset.map runs this body once per element
    loops: list[cst.For | cst.While] = field(default_factory=list)
    repeated: str | None = None  # runs once per request/batch/epoch (facts/events.py), else None


@dataclass
class ModuleNames:
    """What ``collect`` found."""

    aliases: dict[str, str]  # local name -> the dotted module or object it imports
    scopes: dict[cst.CSTNode, Scope]
    calls: list[tuple[cst.Call, Scope]]
    classes: list[cst.ClassDef]
    walked: Walked  # the walk that found them, recorded: the rules' walk replays it


def collect(module: cst.Module) -> ModuleNames:
    collector = _Collector(module)
    walked = Walked(module, collector, _VISITS, _LEAVES, leave_out=LAYOUT)
    return ModuleNames(collector.aliases, collector.scopes, collector.calls, collector.classes, walked)


class _Collector(cst.CSTVisitor):
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

    # The pre-pass sees every node of the module. LibCST's own dispatch builds each node's
    # method name and looks it up by getattr; these tables go by the node's type.
    def on_visit(self, node: cst.CSTNode) -> bool:
        visit = _VISITS.get(type(node))
        if visit is not None:
            visit(self, node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        leave = _LEAVES.get(type(original_node))
        if leave is not None:
            leave(self, original_node)

    # Imports (the same alias table gate.ModuleFacts builds from the stdlib ast) ------------
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
        scope.params.update(p.name.value for p in all_params(node.params))
        self._stack.append(scope)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._stack.pop()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        scope = self._new_scope(node, self.scope)
        scope.params.update(p.name.value for p in all_params(node.params))
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
            paired = _paired(target.target, node.value)
            for name in target_names(target.target):
                self.scope.bind(name, node.value if single else paired.get(name))

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
        for name in target_names(node.target):
            self.scope.bind(name, None)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            for name in target_names(node.asname.name):
                self.scope.bind(name, None)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        for name in target_names(node.target):
            self.scope.bind(name, None)

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append((node, self.scope))



def _by_node_type(prefix: str) -> dict[type, Callable[[_Collector, Any], None]]:
    return {getattr(cst, name[len(prefix):]): method for name, method in vars(_Collector).items()
            if name.startswith(prefix)}


_VISITS, _LEAVES = _by_node_type("visit_"), _by_node_type("leave_")


def _paired(target: cst.BaseExpression, value: cst.BaseExpression) -> dict[str, cst.BaseExpression]:
    """``a, b = 10, 20``: each name of a flat target bound to its element of a literal of the same
    length (no starred part on either side); nothing for any other unpacking."""
    if not (isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List))
            and len(target.elements) == len(value.elements)):
        return {}
    if any(isinstance(e, cst.StarredElement) or not isinstance(e.value, cst.Name) for e in target.elements) \
            or any(isinstance(e, cst.StarredElement) for e in value.elements):
        return {}
    return {t.value.value: v.value for t, v in zip(target.elements, value.elements)}
