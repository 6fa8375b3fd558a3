"""TFM404: ``model.predict(x)`` in a loop as ``model(x, training=False).numpy()``.

Unsafe. ``predict`` splits ``x`` into batches of 32 and returns NumPy arrays; the direct call runs
``x`` as one batch (memory grows with ``x``: right for the one small batch the rule is about, not
for a large array) and ``.numpy()`` turns its tensor into the same array only for a model with
one output (a multi-output model returns a list or dict of tensors, which has no ``.numpy()``;
not offered where the result is unpacked, ``a, b = model.predict(x)``).
``x`` must also be something a model can be called on (a dataset or a generator is not).
Offered only in a loop (not per request or per batch of a handler), when ``predict`` is given
``x`` alone or with ``verbose`` (which the direct call does not take): ``batch_size``,
``steps``, ``callbacks``... mean ``x`` is more than one batch.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from tf_memlint.fixes.base import UNSAFE, Edit, Site
from tf_memlint.rule import Diagnostic

CODE = "TFM404"
APPLICABILITY = UNSAFE  # what the page says; an edit may only be less safe


def fix(site: Site, finding: Diagnostic) -> Optional[Edit]:
    call = site.find(finding.line, finding.col, _is_predict)
    if call is None or not _in_loop(site, call):
        return None  # per request or per batch of a handler: its input is no batch the model takes
    positional = [a for a in call.args if a.keyword is None]
    others = [a for a in call.args if a.keyword is not None and a.keyword.value not in ("verbose", "x")]
    given = positional + [a for a in call.args if a.keyword is not None and a.keyword.value == "x"]
    if len(given) != 1 or others or given[0].star:
        return None
    if _unpacked(site, call):
        return None  # `a, b = model.predict(x)`: several outputs, which have no .numpy()
    first = given[0].with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT,
                                  comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    training = cst.Arg(value=cst.Name("False"), keyword=cst.Name("training"),
                       equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                             whitespace_after=cst.SimpleWhitespace("")))
    direct = call.with_changes(func=call.func.value, args=[first, training])  # keeps the call's own spacing
    as_array = cst.Call(func=cst.Attribute(value=direct, attr=cst.Name("numpy")))
    return Edit(site.module.deep_replace(call, as_array), UNSAFE,
                "one batch instead of batches of 32; a tensor made an array for one output only")


def _unpacked(site: Site, call: cst.Call) -> bool:
    parent = site.parents.get(call)
    return isinstance(parent, cst.Assign) and any(
        isinstance(target.target, (cst.Tuple, cst.List)) for target in parent.targets)


def _in_loop(site: Site, node: cst.CSTNode) -> bool:
    for ancestor in site.ancestors(node):
        if isinstance(ancestor, (cst.For, cst.While)):
            return True
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return False
    return False


def _is_predict(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "predict"
