"""TFM401: ``del tape`` after the statement holding the last use of a persistent GradientTape.

Safe: the name is not used after the ``del`` (every later use of it in the scope is checked), so
only code that reads the scope by name without naming the tape (``locals()``, ``vars()``,
``eval``, ``exec``, ``dir()`` later in the scope) can notice; there the fix is unsafe. Not offered
when a nested function or class reads the name (``del`` would break the closure), when a use lies
outside the block that binds the tape, or when that block is a one-line suite.

A tape kept on the object (``self._tape = tf.GradientTape(persistent=True)``) and entered again
by a method (``with self._tape:``) cannot be deleted: the next call enters it again. There the
same constructor call is bound to ``self._tape`` right before that ``with`` (a new tape per
entry, the previous one dropped with what it recorded). Unsafe: a gradient of an earlier
entry's target taken later, from another method, is no longer possible. Offered only when the
constructor's arguments are literals and its name is imported at module level, and each method
enters the tape once, directly in its body, without using it before.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from tf_memlint.fixes.base import (SAFE, UNSAFE, Edit, Site, imported_names, index_in, nodes_of, replace_body,
                                   self_attribute, statement)
from tf_memlint.rule import Diagnostic

CODE = "TFM401"
APPLICABILITY = SAFE  # unsafe only where the scope is read by locals() and the like
_SCOPE_READERS = frozenset({"locals", "vars", "eval", "exec", "dir"})


def fix(site: Site, finding: Diagnostic) -> Optional[Edit]:
    call = site.find(finding.line, finding.col, lambda n: isinstance(n, cst.Call))
    if call is None:
        return None
    attribute = _self_attribute_bound(site, call)
    if attribute is not None:
        return _renewed_per_entry(site, call, attribute)
    name = _bound_name(site, call)
    binding = site.statement_of(call)
    block = site.block_of(binding) if binding is not None else None
    if name is None or block is None:
        return None
    scope = next((n for n in site.ancestors(block) if isinstance(n, (cst.FunctionDef, cst.Module))), block)
    start = index_in(block, binding)
    last = start
    for use in _uses(site, scope, name):
        if any(isinstance(n, (cst.FunctionDef, cst.Lambda, cst.ClassDef)) and n is not scope
               for n in _up_to(site, use, scope)):
            return None  # read by a closure: deleting the name would break it
        holder = next((i for i, s in enumerate(block.body) if any(a is s for a in site.ancestors(use))), None)
        if holder is None:
            return None  # used outside the block that binds it
        if holder < start:
            continue  # an earlier, unrelated use of the name
        last = max(last, holder)
    if isinstance(block.body[last], cst.SimpleStatementLine) and any(
            isinstance(s, (cst.Return, cst.Raise)) for s in block.body[last].body):
        return None
    delete = statement(f"del {name}\n", site.module)
    body = [*block.body[:last + 1], delete, *block.body[last + 1:]]
    later = [s for s in block.body[last + 1:]] + _after_block(site, block, scope)
    reads_scope = any(_calls_any(s, _SCOPE_READERS) for s in later)
    return Edit(replace_body(site.module, block, body), UNSAFE if reads_scope else SAFE,
                "the scope is read later by locals()/vars()/eval/exec/dir(), which would no longer see the tape"
                if reads_scope else "")


def _self_attribute_bound(site: Site, call: cst.Call) -> Optional[str]:
    """``x`` for ``self.x = tf.GradientTape(persistent=True)``."""
    parent = site.parents.get(call)
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
        return self_attribute(parent.targets[0].target)
    return None


def _renewed_per_entry(site: Site, call: cst.Call, attribute: str) -> Optional[Edit]:
    """A tape kept on the object and entered again by a method (``with self._tape:``): the same
    constructor call bound to ``self._tape`` right before that ``with``, so each entry records on a
    new tape and the previous one, with everything it recorded, is dropped."""
    creator = next((n for n in site.ancestors(call) if isinstance(n, cst.FunctionDef)), None)
    cls = site.parents.get(site.parents.get(creator)) if creator is not None else None
    if not isinstance(cls, cst.ClassDef) or not _constant_arguments(call) \
            or _root(call.func) not in imported_names(site.module.body):
        return None  # the constructor call cannot be repeated as it is in another method
    module = site.module
    renewed = 0
    for method in (s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s is not creator):
        if not isinstance(method.body, cst.IndentedBlock):
            continue
        entries = [w for w in nodes_of(method, cst.With)
                   if any(self_attribute(item.item) == attribute for item in w.items)]
        if not entries:
            continue
        entry = entries[0]
        body = method.body.body
        if len(entries) > 1 or not any(s is entry for s in body):
            # entered twice, or under a loop or a condition: a renewal could drop a recording still wanted
            return None
        index = index_in(method.body, entry)
        if any(self_attribute(n) == attribute for s in body[:index] for n in nodes_of(s, cst.Attribute)):
            return None  # used before the entry (a watch): a new tape would lose it
        renewal = statement(f"self.{attribute} = {site.module.code_for_node(call)}\n", site.module)
        new_body = [*body[:index], renewal.with_changes(leading_lines=entry.leading_lines),
                    entry.with_changes(leading_lines=[]), *body[index + 1:]]
        module = module.deep_replace(method.body, method.body.with_changes(body=new_body))
        renewed += 1
    if not renewed:
        return None
    return Edit(module, UNSAFE, "each entry records on a new tape: a gradient of an earlier entry's target, "
                                "taken later, is no longer possible")


def _constant_arguments(call: cst.Call) -> bool:
    """Every argument is a literal (``persistent=True``, ``watch_accessed_variables=False``)."""
    constants = (cst.Integer, cst.Float, cst.SimpleString)
    return all(isinstance(a.value, constants) or isinstance(a.value, cst.Name)
               and a.value.value in ("True", "False", "None") for a in call.args)


def _root(expr: cst.BaseExpression) -> Optional[str]:
    while isinstance(expr, cst.Attribute):
        expr = expr.value
    return expr.value if isinstance(expr, cst.Name) else None


def _bound_name(site: Site, call: cst.Call) -> Optional[str]:
    parent = site.parents.get(call)
    if isinstance(parent, cst.WithItem) and parent.asname is not None and isinstance(parent.asname.name, cst.Name):
        return parent.asname.name.value
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name):
        return parent.targets[0].target.value
    return None


def _uses(site: Site, scope: cst.CSTNode, name: str) -> list[cst.Name]:
    found: list[cst.Name] = []

    class Collect(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            parent = site.parents.get(node)
            if node.value == name and not (isinstance(parent, cst.Attribute) and parent.attr is node):
                found.append(node)

    scope.visit(Collect())
    return found


def _up_to(site: Site, node: cst.CSTNode, scope: cst.CSTNode) -> list[cst.CSTNode]:
    chain = []
    for ancestor in site.ancestors(node):
        if ancestor is scope:
            break
        chain.append(ancestor)
    return chain


def _after_block(site: Site, block: cst.CSTNode, scope: cst.CSTNode) -> list[cst.CSTNode]:
    """The statements of the scope that run after ``block`` (those after each enclosing statement)."""
    after: list[cst.CSTNode] = []
    node = block
    for ancestor in site.ancestors(block):
        if isinstance(ancestor, (cst.IndentedBlock, cst.Module)) and node in site.parents \
                and any(s is node for s in ancestor.body):
            after.extend(ancestor.body[index_in(ancestor, node) + 1:])
        if ancestor is scope:
            break
        node = ancestor
    return after


def _calls_any(node: cst.CSTNode, names: frozenset) -> bool:
    found = []

    class Find(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            if isinstance(call.func, cst.Name) and call.func.value in names:
                found.append(call)

    node.visit(Find())
    return bool(found)
