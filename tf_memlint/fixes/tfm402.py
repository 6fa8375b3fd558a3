"""TFM402: ``history.append(loss)`` as ``history.append(float(loss))`` when ``loss`` is a scalar.

Offered only for a value proven scalar (facts/scalars.py): a reduction without ``axis`` (``tf.reduce_mean(...)``,
``keras.ops.mean(...)``), a metric's ``result()``, or a name whose nearest earlier assignment in
the scope is one of those (``float()`` of any other tensor raises). Unsafe: the list then holds
Python floats, not tensors, and code after the loop that treats its items as tensors
(``h.numpy()``, ``h.shape``, a tensor op on one item) changes or breaks.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from tf_memlint.facts.scalars import arithmetic_sides, loss_object, scalar_call
from tf_memlint.fixes.base import UNSAFE, Edit, Site, parameters
from tf_memlint.rule import Diagnostic
from tf_memlint.syntax import code_of, target_names

CODE = "TFM402"
APPLICABILITY = UNSAFE  # what the page says; an edit may only be less safe
_MAX_DEPTH = 6  # names and helpers followed to prove a value scalar


def fix(site: Site, finding: Diagnostic) -> Optional[Edit]:
    call = site.find(finding.line, finding.col, _is_append)
    if call is None:
        return None
    value = call.args[0].value
    if not _is_scalar(site, value, call):
        return None
    wrapped = cst.Call(func=cst.Name("float"), args=[cst.Arg(value=value)])
    new_call = call.with_changes(args=[call.args[0].with_changes(value=wrapped)])
    return Edit(site.module.deep_replace(call, new_call), UNSAFE,
                "the list holds Python floats instead of tensors")


def _is_append(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
        and node.func.attr.value == "append" and len(node.args) == 1 and node.args[0].keyword is None \
        and node.args[0].star == ""


def _is_scalar(site: Site, expr: cst.BaseExpression, at: cst.CSTNode, depth: int = 0) -> bool:
    """``expr``, evaluated at ``at``, is a scalar tensor: a reduction, a metric's result, a Keras
    loss object's call, a call of a function of this module whose every ``return`` is one, or a
    name last bound to one of these (also unpacked from such a function's returned tuple)."""
    if depth > _MAX_DEPTH:
        return False
    if isinstance(expr, cst.Name):
        bound = _value_of(site, expr.value, at)
        if bound is None:
            return False
        value, index, where = bound
        if index is None:
            return _is_scalar(site, value, where, depth + 1)
        return isinstance(value, cst.Call) and _returns_scalar(site, value, index, depth + 1)
    if scalar_call(expr):
        return True
    sides = arithmetic_sides(expr)
    if sides is not None:
        return all(_is_scalar(site, side, at, depth + 1) for side in sides)
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name):
        bound = _value_of(site, expr.func.value, at)
        if bound is not None and bound[1] is None and loss_object(bound[0]):
            return True  # loss_fn(y, pred) with loss_fn = tf.keras.losses.MeanSquaredError()
        return _returns_scalar(site, expr, None, depth + 1)
    return False


def _returns_scalar(site: Site, call: cst.Call, index: Optional[int], depth: int) -> bool:
    """``call`` runs a function of this module (by name, at module level) whose every ``return``
    gives a scalar (``index``: every return is a tuple whose item ``index`` is one)."""
    if not isinstance(call.func, cst.Name):
        return False
    definition = next((s for s in site.module.body if isinstance(s, cst.FunctionDef)
                       and s.name.value == call.func.value), None)
    if definition is None or any(code_of(d.decorator).split(".")[-1] != "function"
                                 for d in definition.decorators):
        return False  # a decorator other than tf.function may change what a call returns
    returns, yields = _returns_of(definition)
    if not returns or yields:
        return False
    for statement in returns:
        value = statement.value
        if index is not None:
            if not isinstance(value, (cst.Tuple, cst.List)) or index >= len(value.elements) \
                    or any(isinstance(e, cst.StarredElement) for e in value.elements):
                return False
            value = value.elements[index].value
        if value is None or not _is_scalar(site, value, statement, depth):
            return False
    return True


def _returns_of(definition: cst.FunctionDef) -> tuple[list[cst.Return], bool]:
    """The function's own ``return`` statements, and whether it yields (a nested def's do not count)."""
    returns: list[cst.Return] = []
    yields: list[cst.Yield] = []

    class Collect(cst.CSTVisitor):
        def visit_Return(self, node: cst.Return) -> None:
            returns.append(node)

        def visit_Yield(self, node: cst.Yield) -> None:
            yields.append(node)

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is definition

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return False

    definition.visit(Collect())
    return returns, bool(yields)


def _value_of(site: Site, name: str, at: cst.CSTNode):
    """(value, index, node) of the last binding of ``name`` before ``at`` in the enclosing function
    (``name = value``: index None; ``a, name = value``: its index), else, for a name the function
    neither binds nor takes, the module's only binding of it; None when it is bound otherwise
    (a parameter, augmented, a loop or ``with`` target, starred) or not at all."""
    scope = next((n for n in site.ancestors(at) if isinstance(n, cst.FunctionDef)), site.module)
    if isinstance(scope, cst.FunctionDef) and name in parameters(scope):
        return None
    found = _bindings(site, name, scope)
    if found:
        line = site.line_of(at)
        earlier = [binding for binding in found if binding[0] <= line]
        return max(earlier, key=lambda binding: binding[0])[1] if earlier else None
    if scope is not site.module:
        found = _bindings(site, name, site.module)
        return found[0][1] if len(found) == 1 else None
    return None


def _bindings(site: Site, name: str, scope: cst.CSTNode) -> list[tuple[int, Optional[tuple]]]:
    """Every binding of ``name`` in ``scope``'s own code: (line, (value, index, node) or None)."""
    found: list[tuple[int, Optional[tuple]]] = []

    class Collect(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                target = target.target
                if isinstance(target, cst.Name) and target.value == name:
                    value = (node.value, None, node) if len(node.targets) == 1 else None
                    found.append((site.line_of(node), value))
                elif isinstance(target, (cst.Tuple, cst.List)) and len(node.targets) == 1 and all(
                        isinstance(e.value, cst.Name) and not isinstance(e, cst.StarredElement)
                        for e in target.elements) and name in target_names(target):
                    index = next(i for i, e in enumerate(target.elements) if e.value.value == name)
                    found.append((site.line_of(node), (node.value, index, node)))
                elif name in target_names(target):
                    found.append((site.line_of(node), None))

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            if name in target_names(node.target):
                found.append((site.line_of(node), None))

        def visit_For(self, node: cst.For) -> None:
            if name in target_names(node.target):
                found.append((site.line_of(node), None))

        def visit_AsName(self, node: cst.AsName) -> None:
            if name in target_names(node.name):
                found.append((site.line_of(node), None))

        def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
            if name in target_names(node.target):
                found.append((site.line_of(node), None))

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            if node is not scope and node.name.value == name:
                found.append((site.line_of(node), None))
            return node is scope  # the scope's own names only

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            if node.name.value == name:
                found.append((site.line_of(node), None))
            return False

    scope.visit(Collect())
    return found
