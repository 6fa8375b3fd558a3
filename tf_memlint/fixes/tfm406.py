"""TFM406: ``model.compile(...)`` moved out of the loop, just before it.

Unsafe: the model is then compiled once, so what each ``compile`` reset no longer is. With an
optimizer given by name, each ``compile`` made a fresh optimizer (its slots, its step count, its
learning-rate schedule's position) and fresh metrics; hoisted, they carry on across iterations,
so the training and the reported numbers differ. It also runs when the loop runs zero times.
Offered only when the ``compile`` statement stands alone directly in the loop's body (not under
an ``if``), names nothing the loop binds, and the loop does not rebind the model; it leaves every
enclosing loop that satisfies the same (a nested loop's ``compile`` moves out of both).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from tf_memlint.fixes.base import UNSAFE, Edit, Site, bound_in, index_in, names_in, replace_body
from tf_memlint.rule import Diagnostic

CODE = "TFM406"
APPLICABILITY = UNSAFE  # what the page says; an edit may only be less safe


def fix(site: Site, finding: Diagnostic) -> Optional[Edit]:
    call = site.find(finding.line, finding.col, _is_compile)
    if call is None:
        return None
    line = site.statement_of(call)
    if not (isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1
            and isinstance(line.body[0], cst.Expr) and line.body[0].value is call):
        return None
    used = names_in(line)
    model = _root_name(call.func.value)
    target = None  # the outermost loop the statement can leave
    node: cst.CSTNode = line
    while True:
        block = site.block_of(node)
        loop = site.parents.get(block) if isinstance(block, cst.IndentedBlock) else None
        if not isinstance(loop, (cst.For, cst.While)) or loop.body is not block:
            break
        bound = bound_in(loop)
        if used & bound or model is None or model in bound or site.block_of(loop) is None:
            break
        target, node = loop, loop
    if target is None:
        return None
    inner_block = site.block_of(line)
    rest = [s for s in inner_block.body if s is not line] or [cst.SimpleStatementLine([cst.Pass()])]
    emptied = target.deep_replace(inner_block, inner_block.with_changes(body=rest))
    outer_block = site.block_of(target)
    index = index_in(outer_block, target)
    hoisted = line.with_changes(leading_lines=[*target.leading_lines, *line.leading_lines])
    body = [*outer_block.body[:index], hoisted, emptied.with_changes(leading_lines=[]),
            *outer_block.body[index + 1:]]
    return Edit(replace_body(site.module, outer_block, body), UNSAFE,
                "compiled once: the optimizer's and metrics' state carry on across iterations")


def _is_compile(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "compile"


def _root_name(expr: cst.BaseExpression) -> Optional[str]:
    while isinstance(expr, cst.Attribute):
        expr = expr.value
    return expr.value if isinstance(expr, cst.Name) else None
