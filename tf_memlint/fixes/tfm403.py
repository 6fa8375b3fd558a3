"""TFM403: ``keras.backend.clear_session()`` as the first statement of the loop that builds models.

Unsafe: ``clear_session()`` resets Keras's global state. Layer and model names start again from
their first number on each iteration (weights saved or loaded by name, TensorBoard tags), and in
TF1 graph mode it replaces the default graph, so a model or tensor built before the loop and
used inside it stops working. When the module names Keras only through ``from
tensorflow.keras.models import Sequential`` and the like, ``from tensorflow import keras`` (or
``import keras``) is added after that import. Not offered for a one-line loop body, or when
the module imports Keras in none of these ways before the loop (no name to call it by).

A model built or loaded per request or per batch of a handler (a module-level function, no loop)
is not cleared per request (``clear_session()`` there would reset Keras under the other requests
a threaded server runs at the same time): its line ``model = keras.models.load_model("m.h5")``
moves to module level, just before the function, as ``<FUNCTION>_MODEL = ...``, and the handler
binds ``model`` to it. Unsafe: the model is loaded once, at import (a missing file fails then, a
file replaced on disk is not read again), and shared by every request. Offered only when the
call's arguments are literals (or module-level names bound once to one before the function: a
path read from the request is per request), its builder is named at module level before the
function, and the handler only calls or reads the model (``compile``, ``fit``,
``set_weights``... would carry over from one request to the next).
"""

from __future__ import annotations

import builtins
from typing import Optional

import libcst as cst

from tf_memlint.fixes.base import (UNSAFE, Edit, Site, bound_in, imported_names, imports_before, index_in,
                                   keras_spelling, nodes_of, parameters, replace_body, statement)
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
    if loop is None:
        return _loaded_once(site, call)  # per request or per batch of a handler
    if not isinstance(loop.body, cst.IndentedBlock):
        return None  # `for x in y: build()`
    clear = statement(f"{keras}.backend.clear_session()\n", site.module)
    module = replace_body(site.module, loop.body, [clear, *loop.body.body])
    if importing is not None:  # Keras came in through `from tensorflow.keras.models import ...`
        where, line = importing
        index = index_in(site.module, where) + 1
        module = module.with_changes(body=[*module.body[:index], statement(line, module), *module.body[index:]])
    return Edit(module, UNSAFE, "clear_session() resets Keras's global state (layer names; the TF1 graph)")


# What a handler may do with the model it loads for itself and still share one across requests:
# call it and read it (compile, fit, set_weights... would carry from one request to the next)
_READS = frozenset({"predict", "predict_on_batch", "summary", "get_config", "to_json", "get_layer",
                    "count_params", "input", "inputs", "output", "outputs", "input_shape", "output_shape",
                    "layers", "name"})


def _loaded_once(site: Site, call: cst.Call) -> Optional[Edit]:
    """``model = keras.models.load_model("m.h5")`` in a module-level function run per request (or
    per batch): the load moved to module level, just before the function, as ``<FUNCTION>_MODEL``,
    and the handler's line bound to it."""
    line = site.statement_of(call)
    if not (isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1):
        return None
    assign = line.body[0]
    if not (isinstance(assign, cst.Assign) and assign.value is call and len(assign.targets) == 1
            and isinstance(assign.targets[0].target, cst.Name)):
        return None
    name = assign.targets[0].target.value
    block = site.block_of(line)
    function = site.parents.get(block) if isinstance(block, cst.IndentedBlock) else None
    if not isinstance(function, cst.FunctionDef) or site.block_of(function) is not site.module:
        return None  # only a module-level function's own body: the load runs once per call of it
    local = bound_in(function.body) | parameters(function)
    before = site.module.body[:index_in(site.module, function)]
    known = bound_in(cst.Module(body=before)) | imported_names(before) | _BUILTINS
    builder = _free_names(call.func)
    if builder & local or not builder <= known:
        return None  # the loader or builder is the function's own, or bound later
    if not all(_constant(a.value, _constants(before)) for a in call.args):
        return None  # the load depends on a value of this call or of this request (a path from it)
    if _declared(function, name) or sum(1 for n in nodes_of(function.body, cst.Name) if n.value == name and
                                        _is_store(site, n)) != 1 or not _only_read(site, function, name):
        return None
    shared = f"{function.name.value.upper()}_{name.upper()}"
    if shared in _names_of(site.module):
        return None
    loaded = statement(f"{shared} = {site.module.code_for_node(call)}\n", site.module)
    handler = function.deep_replace(call, cst.Name(shared))
    index = index_in(site.module, function)
    body = [*site.module.body[:index], loaded.with_changes(leading_lines=function.leading_lines), handler,
            *site.module.body[index + 1:]]
    return Edit(site.module.with_changes(body=body), UNSAFE,
                "loaded once at import and shared by every request")


def _constants(statements) -> set[str]:
    """Names the statements bind once, each to a literal (``MODEL_PATH = "m.h5"``)."""
    values: dict[str, list] = {}
    for line in statements:
        for name in bound_in(line):
            values.setdefault(name, []).append(None)
        assign = line.body[0] if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 else None
        if isinstance(assign, cst.Assign):
            if len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name):
                values[assign.targets[0].target.value][-1] = assign.value
    return {name for name, bound in values.items() if len(bound) == 1 and _constant(bound[0], set())}


def _constant(expr, constants: set[str]) -> bool:
    """A literal (strings, numbers, True/False/None, tuples and lists of them) or a name in ``constants``."""
    if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString, cst.Integer, cst.Float)):
        return True
    if isinstance(expr, cst.Name):
        return expr.value in ("True", "False", "None") or expr.value in constants
    if isinstance(expr, (cst.Tuple, cst.List)):
        return all(_constant(e.value, constants) for e in expr.elements)
    return False


_BUILTINS = frozenset(dir(builtins))


def _names_of(node: cst.CSTNode) -> set[str]:
    return {n.value for n in nodes_of(node, cst.Name)}


def _free_names(expr: cst.CSTNode) -> set[str]:
    """The names ``expr`` reads (not attribute names after a dot, not keyword names)."""
    found: set[str] = set()

    class Collect(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> bool:
            node.value.visit(self)
            return False

        def visit_Arg(self, node: cst.Arg) -> bool:
            node.value.visit(self)
            return False

        def visit_Name(self, node: cst.Name) -> None:
            found.add(node.value)

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

    expr.visit(Collect())
    return found


def _is_store(site: Site, name: cst.Name) -> bool:
    parent = site.parents.get(name)
    stores = (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.AsName, cst.NamedExpr)
    return isinstance(parent, stores) or isinstance(parent, cst.Element) \
        and isinstance(site.parents.get(site.parents.get(parent)), cst.AssignTarget)


def _declared(function: cst.FunctionDef, name: str) -> bool:
    """``global name`` / ``nonlocal name`` in the function."""
    declarations = nodes_of(function, (cst.Global, cst.Nonlocal))
    return any(item.name.value == name for declaration in declarations for item in declaration.names)


def _only_read(site: Site, function: cst.FunctionDef, name: str) -> bool:
    """Every use of ``name`` in the function but its binding calls the model or reads it."""
    for use in nodes_of(function.body, cst.Name):
        if use.value != name or _is_store(site, use):
            continue
        parent = site.parents.get(use)
        if isinstance(parent, cst.Call) and parent.func is use:
            continue
        if isinstance(parent, cst.Attribute) and parent.value is use and parent.attr.value in _READS:
            continue
        return False  # handed on, mutated (compile, fit, an attribute set), or returned
    return True


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
