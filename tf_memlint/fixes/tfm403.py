"""TFM403: ``keras.backend.clear_session()`` as the first statement of the loop that builds models.

Unsafe: ``clear_session()`` resets Keras's global state. Layer and model names start again from
their first number on each iteration (weights saved or loaded by name, TensorBoard tags), and in
TF1 graph mode it replaces the default graph, so a model or tensor built before the loop and
used inside it stops working. When the module names Keras only through ``from
tensorflow.keras.models import Sequential`` and the like, ``from tensorflow import keras`` (or
``import keras``) is added after that import. Not offered for a one-line loop body, or when
the module imports Keras in none of these ways before the loop (no name to call it by).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from tf_memlint.fixes.base import (UNSAFE, Edit, Site, bound_in, imports_before, index_in, keras_spelling,
                                   replace_body, statement)
from tf_memlint.rule import Diagnostic

CODE = "TFM403"
APPLICABILITY = UNSAFE  # what the page says; an edit may only be less safe


def fix(site: Site, finding: Diagnostic) -> Optional[Edit]:
    call = site.find(finding.line, finding.col, lambda n: isinstance(n, cst.Call))
    if call is None:
        return None
    before = imports_before(site, call)
    keras, importing = keras_spelling(before), None
    if keras is None:
        keras, importing = "keras", _keras_import(before, site.module)
        if importing is None:
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
    module = replace_body(site.module, loop.body, [clear, *loop.body.body])
    if importing is not None:  # Keras came in through `from tensorflow.keras.models import ...`
        where, line = importing
        index = index_in(site.module, where) + 1
        module = module.with_changes(body=[*module.body[:index], statement(line, module), *module.body[index:]])
    return Edit(module, UNSAFE, "clear_session() resets Keras's global state (layer names; the TF1 graph)")


def _keras_import(before: cst.Module, module: cst.Module):
    """(the first top-level ``from tensorflow.keras... import`` / ``from keras... import`` among
    the statements ``before`` the fix, the line that imports Keras itself after it), when nothing
    in the module binds the name ``keras``."""
    if "keras" in bound_in(module):
        return None
    for statement_ in before.body:
        if not isinstance(statement_, cst.SimpleStatementLine):
            continue
        for small in statement_.body:
            if isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative:
                dotted = cst.Module([]).code_for_node(small.module)
                if dotted == "tensorflow.keras" or dotted.startswith("tensorflow.keras."):
                    return statement_, "from tensorflow import keras\n"
                if dotted == "keras" or dotted.startswith("keras."):
                    return statement_, "import keras\n"
    return None


def _in_orelse(site: Site, node: cst.CSTNode, loop: cst.CSTNode) -> bool:
    orelse = getattr(loop, "orelse", None)
    return orelse is not None and any(a is orelse for a in site.ancestors(node))
