"""TFM404: ``model.predict(x)`` as ``model(x, training=False).numpy()`` where the finding is.

Unsafe. ``predict`` splits ``x`` into batches of 32 and returns NumPy arrays; the direct call runs
``x`` as one batch (memory grows with ``x``: right for the one small batch the rule is about, not
for a large array) and ``.numpy()`` turns its tensor into the same array only for a model with
one output (a multi-output model returns a list or dict of tensors, which has no ``.numpy()``;
not offered where the result is unpacked, ``a, b = model.predict(x)``).
``x`` must also be something a model can be called on (a dataset or a generator is not).
Offered wherever the rule reports a ``predict`` (in a loop, a request or batch handler, a method
of the model itself, ``self(x, training=False)``), when it is given ``x`` alone or with
``verbose`` (which the direct call does not take): ``batch_size``, ``steps``, ``callbacks``...
mean ``x`` is more than one batch. A finding at a call that reaches ``predict`` through a
function of this module (``agent.act(state)`` in a loop) rewrites the ``predict`` calls in that
function, so its other callers get the direct call too.
"""

from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from tf_memlint.fixes.base import UNSAFE, Edit, Site
from tf_memlint.rule import Diagnostic
from tf_memlint.syntax import code_of

CODE = "TFM404"
APPLICABILITY = UNSAFE  # what the page says; an edit may only be less safe


# A finding at a call that reaches predict() through functions of this module names the last hop:
# "(calls net.predict() via model_predict(), line 10)": the predict call and the line of its def.
_REACHED = re.compile(r"\(calls (?P<what>[\w.]+)\(\) via (?P<chain>.*?)\); ")
_HOP_LINE = re.compile(r", line (?P<line>\d+)$")
_WHY = "one batch instead of batches of 32; a tensor made an array for one output only"


def fix(site: Site, finding: Diagnostic) -> Optional[Edit]:
    call = site.find(finding.line, finding.col, _is_predict)
    if call is not None:
        direct = _direct(site, call)
        return None if direct is None else Edit(site.module.deep_replace(call, direct), UNSAFE, _WHY)
    return _in_callee(site, finding)


def _in_callee(site: Site, finding: Diagnostic) -> Optional[Edit]:
    """The predict() calls of the function the finding's call reaches, rewritten there (every
    caller of that function then gets the direct call)."""
    reached = _REACHED.search(finding.message)
    hop = _HOP_LINE.search(reached.group("chain").split(" -> ")[-1]) if reached else None
    if hop is None:
        return None  # not reached through this module's functions (another module, or no chain)
    line = int(hop.group("line"))
    definition = next((n for n in site.positions if isinstance(n, cst.FunctionDef)
                       and line in (site.line_of(n), site.line_of(n.name))), None)
    if definition is None:
        return None
    calls = [n for n in _calls_in(definition) if _is_predict(n) and code_of(n.func) == reached.group("what")]
    replacements = {call: _direct(site, call) for call in calls}
    if not calls or None in replacements.values():
        return None  # a predict() there that cannot be rewritten keeps the finding
    module = site.module
    for call, direct in replacements.items():
        module = module.deep_replace(call, direct)
    return Edit(module, UNSAFE, _WHY)


def _calls_in(definition: cst.FunctionDef) -> list[cst.Call]:
    """The calls of the function's own body (a nested def or class runs when it is called)."""
    found: list[cst.Call] = []

    class Collect(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            found.append(node)

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is definition

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return False

    definition.visit(Collect())
    return found


def _direct(site: Site, call: cst.Call) -> Optional[cst.Call]:
    """``model(x, training=False).numpy()`` for ``model.predict(x)`` (or ``predict(x, verbose=...)``)."""
    positional = [a for a in call.args if a.keyword is None]
    others = [a for a in call.args if a.keyword is not None and a.keyword.value not in ("verbose", "x")]
    given = positional + [a for a in call.args if a.keyword is not None and a.keyword.value == "x"]
    if len(given) != 1 or others or given[0].star:
        return None  # batch_size, steps, callbacks...: x is more than one batch
    if _unpacked(site, call):
        return None  # `a, b = model.predict(x)`: several outputs, which have no .numpy()
    first = given[0].with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT,
                                  comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    training = cst.Arg(value=cst.Name("False"), keyword=cst.Name("training"),
                       equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                             whitespace_after=cst.SimpleWhitespace("")))
    direct = call.with_changes(func=call.func.value, args=[first, training])  # keeps the call's own spacing
    return cst.Call(func=cst.Attribute(value=direct, attr=cst.Name("numpy")))


def _unpacked(site: Site, call: cst.Call) -> bool:
    parent = site.parents.get(call)
    return isinstance(parent, cst.Assign) and any(
        isinstance(target.target, (cst.Tuple, cst.List)) for target in parent.targets)


def _is_predict(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "predict"
