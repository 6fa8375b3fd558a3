"""TFM402: ``history.append(loss)`` as ``history.append(float(loss))`` when ``loss`` is a scalar.

Offered only for a value proven scalar: a reduction without ``axis`` (``tf.reduce_mean(...)``,
``keras.ops.mean(...)``), a metric's ``result()``, or a name whose nearest earlier assignment in
the scope is one of those (``float()`` of any other tensor raises). Unsafe: the list then holds
Python floats, not tensors, and code after the loop that treats its items as tensors
(``h.numpy()``, ``h.shape``, a tensor op on one item) changes or breaks.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from tf_memlint.fixes.base import UNSAFE, Edit, Site
from tf_memlint.rule import Diagnostic
from tf_memlint.syntax import code_of

CODE = "TFM402"
APPLICABILITY = UNSAFE  # what the page says; an edit may only be less safe
_REDUCTIONS = frozenset(f"reduce_{op}" for op in ("mean", "sum", "max", "min", "prod", "std", "variance"))
# keras.ops (Keras 3) spells them without the prefix
_OPS_REDUCTIONS = frozenset({"mean", "sum", "max", "min", "prod", "std", "var"})


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


def _is_scalar(site: Site, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
    if isinstance(expr, cst.Name):
        value = _nearest_assignment(site, expr.value, at)
        return value is not None and _is_scalar_call(value)
    return _is_scalar_call(expr)


def _is_scalar_call(expr: cst.CSTNode) -> bool:
    if not isinstance(expr, cst.Call) or not isinstance(expr.func, (cst.Attribute, cst.Name)):
        return False
    last = expr.func.attr.value if isinstance(expr.func, cst.Attribute) else expr.func.value
    if last == "result" and not expr.args and isinstance(expr.func, cst.Attribute):
        return True  # a Keras metric's running value
    in_ops = isinstance(expr.func, cst.Attribute) and code_of(expr.func.value).split(".")[-1] == "ops"
    if last in _REDUCTIONS or (in_ops and last in _OPS_REDUCTIONS):
        positional = [a for a in expr.args if a.keyword is None]
        keywords = {a.keyword.value for a in expr.args if a.keyword is not None}
        return len(positional) == 1 and not keywords & {"axis", "reduction_indices"}
    return False


def _nearest_assignment(site: Site, name: str, at: cst.CSTNode) -> Optional[cst.BaseExpression]:
    """The value of the last ``name = ...`` of the enclosing function (or module) that starts
    before ``at``; None when the name is bound otherwise there (augmented, unpacked, a loop target)."""
    scope = next((n for n in site.ancestors(at) if isinstance(n, cst.FunctionDef)), site.module)
    line = site.line_of(at)
    best: list[tuple[int, Optional[cst.BaseExpression]]] = []

    class Collect(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                if isinstance(target.target, cst.Name) and target.target.value == name:
                    best.append((site.line_of(node), node.value if len(node.targets) == 1 else None))
                elif name in _target_names(target.target):
                    best.append((site.line_of(node), None))

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            if name in _target_names(node.target):
                best.append((site.line_of(node), None))

        def visit_For(self, node: cst.For) -> None:
            if name in _target_names(node.target):
                best.append((site.line_of(node), None))

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is scope  # the scope's own names only

    scope.visit(Collect())
    earlier = [(number, value) for number, value in best if number <= line]
    return max(earlier, key=lambda item: item[0])[1] if earlier else None


def _target_names(target: cst.BaseExpression) -> set[str]:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return {n for e in target.elements for n in _target_names(e.value)}
    return set()
