"""TFM104: the Python number a ``tf.function`` is called with, wrapped in ``tf.constant``.

Unsafe: inside the traced function the parameter becomes a tensor, so what Python did with the
number is now done by TensorFlow: an ``if`` or ``for`` on it becomes a graph conditional or loop
(AutoGraph) or fails, ``range(n)``, indexing and ``print`` see a tensor, and its dtype is fixed at
the call. A Python int mixed with a float tensor (``x * factor``) is converted to the tensor's
dtype; a tensor is not, so when the parameter takes part in arithmetic in the function's body the
number is made ``float32`` (TensorFlow's and Keras's default float), else it keeps the dtype
``tf.constant`` infers (int32 for an int). Not offered when the module does not import
``tensorflow`` at top level, or when the message does not name the argument.
"""

from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from tf_memlint.fixes.base import UNSAFE, Edit, Site, expression, imports_before, tensorflow_spelling
from tf_memlint.rule import Diagnostic
from tf_memlint.syntax import code_of

CODE = "TFM104"
APPLICABILITY = UNSAFE  # what the page says; an edit may only be less safe
_NAMED = re.compile(r"called with the Python number (?P<arg>.+), which changes every iteration")
_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power)


def fix(site: Site, finding: Diagnostic) -> Optional[Edit]:
    named = _NAMED.search(finding.message)
    call = site.find(finding.line, finding.col, lambda n: isinstance(n, cst.Call))
    if named is None or call is None:
        return None
    tf = tensorflow_spelling(imports_before(site, call))
    if tf is None:
        return None
    position, arg = next(((i, a) for i, a in enumerate(call.args) if code_of(a.value) == named.group("arg")),
                         (None, None))
    if arg is None or arg.star:
        return None
    parameter = _parameter(site, call, position, arg)
    dtype = f", dtype={tf}.float32" if parameter is not None and _in_arithmetic(*parameter) else ""
    wrapped = expression(f"{tf}.constant({code_of(arg.value)}{dtype})", site.module)
    return Edit(site.module.deep_replace(arg, arg.with_changes(value=wrapped)), UNSAFE,
                "the traced function sees a tensor where it saw a Python number")


def _parameter(site: Site, call: cst.Call, position: int, arg: cst.Arg):
    """(the function definition, the parameter's name) that ``arg`` binds, when the called
    tf.function is defined in this module: ``f``, ``g = tf.function(f)``, ``self.f``."""
    definition = _definition(site, call.func)
    if definition is None:
        return None
    params = [p.name.value for p in definition.params.params]
    if params and params[0] == "self" and isinstance(call.func, cst.Attribute):
        params = params[1:]
    if arg.keyword is not None:
        name = arg.keyword.value
    else:
        name = params[position] if position < len(params) else None
    return (definition, name) if name in params else None


def _definition(site: Site, func: cst.BaseExpression) -> Optional[cst.FunctionDef]:
    wanted = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
    if wanted is None:
        return None
    defs: dict[str, cst.FunctionDef] = {}
    wrapped: dict[str, str] = {}

    class Collect(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            defs.setdefault(node.name.value, node)

        def visit_Assign(self, node: cst.Assign) -> None:  # g = tf.function(f)
            value = node.value
            if isinstance(value, cst.Call) and value.args and isinstance(value.args[0].value, cst.Name) \
                    and code_of(value.func).split(".")[-1] == "function":
                for target in node.targets:
                    if isinstance(target.target, cst.Name):
                        wrapped[target.target.value] = value.args[0].value.value

    site.module.visit(Collect())
    return defs.get(wrapped.get(wanted, wanted))


def _in_arithmetic(definition: cst.FunctionDef, name: str) -> bool:
    found = []

    class Find(cst.CSTVisitor):
        def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
            if isinstance(node.operator, _ARITHMETIC) and any(
                    isinstance(side, cst.Name) and side.value == name for side in (node.left, node.right)):
                found.append(node)

    definition.body.visit(Find())
    return bool(found)
