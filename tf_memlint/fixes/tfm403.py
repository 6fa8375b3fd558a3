"""TFM403: ``keras.backend.clear_session()`` as the first statement of the loop that builds models.

Unsafe: ``clear_session()`` resets Keras's global state. Layer and model names start again from
their first number on each iteration (weights saved or loaded by name, TensorBoard tags), and in
TF1 graph mode it replaces the default graph, so a model or tensor built before the loop and
used inside it stops working. Not offered for a one-line loop body, or when the module imports
neither ``keras`` nor ``tensorflow`` at top level (no name to call it by).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from tf_memlint.fixes.base import UNSAFE, Edit, Site, keras_spelling, replace_body, statement
from tf_memlint.rule import Diagnostic

CODE = "TFM403"
APPLICABILITY = UNSAFE  # what the page says; an edit may only be less safe


def fix(site: Site, finding: Diagnostic) -> Optional[Edit]:
    call = site.find(finding.line, finding.col, lambda n: isinstance(n, cst.Call))
    keras = keras_spelling(site.module)
    if call is None or keras is None:
        return None
    loop = None
    for ancestor in site.ancestors(call):
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            break
        if isinstance(ancestor, (cst.For, cst.While)) and not _in_orelse(site, call, ancestor):
            loop = ancestor
            break
    if loop is None or not isinstance(loop.body, cst.IndentedBlock):
        return None  # a finding per request or per batch (no loop here), or `for x in y: build()`
    clear = statement(f"{keras}.backend.clear_session()\n", site.module)
    return Edit(replace_body(site.module, loop.body, [clear, *loop.body.body]), UNSAFE,
                "clear_session() resets Keras's global state (layer names; the TF1 graph)")


def _in_orelse(site: Site, node: cst.CSTNode, loop: cst.CSTNode) -> bool:
    orelse = getattr(loop, "orelse", None)
    return orelse is not None and any(a is orelse for a in site.ancestors(node))
