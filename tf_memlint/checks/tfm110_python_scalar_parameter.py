"""TFM110 python-scalar-parameter: a tf.function whose parameter is declared a Python str or float."""

from __future__ import annotations

import libcst as cst

from tf_memlint.evidence import UNKNOWN, Repetition
from tf_memlint.facts.tracing import TF_FUNCTION
from tf_memlint.gate import ANYWHERE, SCALAR_TF_FUNCTION, Inside
from tf_memlint.rule import Rule, register
from tf_memlint.scopes import AT_POINT
from tf_memlint.syntax import code_of, has_input_signature, number_literal

# Annotations that declare a Python value: every distinct value is a new trace. ``bool`` and
# ``int`` are left out: a flag traces twice at most, and an int parameter is mostly a fixed size.
_SCALAR_ANNOTATIONS = frozenset({"str", "float"})


def _scalar_kind(param: cst.Param) -> str | None:
    """``str`` or ``float`` when the parameter is declared one: by its annotation, or by a
    string or float literal as its default."""
    annotation = param.annotation.annotation if param.annotation is not None else None
    if isinstance(annotation, cst.Name) and annotation.value in _SCALAR_ANNOTATIONS:
        return annotation.value
    default = param.default
    if isinstance(default, (cst.SimpleString, cst.ConcatenatedString)):
        return "str"
    if isinstance(default, cst.UnaryOperation) and isinstance(default.operator, (cst.Minus, cst.Plus)):
        default = default.expression
    if isinstance(default, cst.Float):
        return "float"
    return None


def _literal(expr: cst.BaseExpression) -> bool:
    return number_literal(expr) or isinstance(expr, (cst.SimpleString, cst.ConcatenatedString)) or (
        isinstance(expr, cst.Name) and expr.value in ("None", "True", "False"))


@register
class PythonScalarParameter(Rule):
    """A ``tf.function`` whose parameter is declared a Python ``str`` or ``float`` (its
    annotation, or a string or float default): every distinct value passed traces it again.

    Bad::

        @tf.function
        def policy(self, agent: str, observation):   # one trace per agent id
            return self.networks[agent](observation)

        @tf.function
        def loss(y_true, y_pred, weight=0.001):      # one trace per weight value
            ...

    Good::

        def policy(self, agent: str, observation):   # pick the network in Python...
            return self._traced_policy(self.networks[agent], observation)

        @tf.function
        def loss(y_true, y_pred, weight):            # ...or pass numbers as tensors
            ...
        loss(y_true, y_pred, tf.constant(weight))
    """

    code = "TFM110"
    name = "python-scalar-parameter"
    summary = "tf.function parameter declared a Python str or float: one trace per distinct value"
    triggers = frozenset({TF_FUNCTION})  # a tf.function: the only thing it fires on, decorator or call
    structure = Inside(ANYWHERE, {SCALAR_TF_FUNCTION})  # a @tf.function def with a str or float parameter
    # The definition alone: harm needs callers passing many values, which the def cannot show.
    once_confidence = "low"

    def __init__(self, context, settings) -> None:
        super().__init__(context, settings)
        # (decorator, def, owner class name or None, {param name: (position, kind)})
        self._defs: list[tuple[cst.BaseExpression, cst.FunctionDef, str | None, dict[str, tuple[int, str]]]] = []
        self._calls: list[tuple[str, bool, cst.Call]] = []  # (name, through self., call)
        self._traced_callers: set[tuple[str, bool]] = set()  # called in a Dataset.map / map_fn function
        self._constants: set[int] = set()  # arguments that name a constant

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        decorator = self.context.tracing.tf_function_decorator(node)
        if decorator is None or has_input_signature(decorator):
            return
        owner = self.context.enclosing_class
        params = list(node.params.params)
        if owner is not None and params and params[0].name.value in ("self", "cls"):
            params = params[1:]
        scalars = {p.name.value: (i, kind) for i, p in enumerate(params) if (kind := _scalar_kind(p)) is not None}
        scalars.update({p.name.value: (-1, kind) for p in node.params.kwonly_params
                        if (kind := _scalar_kind(p)) is not None})
        if scalars:
            self._defs.append((decorator, node, owner.name.value if owner is not None else None, scalars))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Name):
            called = (func.value, False)
        elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
            called = (func.attr.value, True)
        else:
            return
        if self.context.in_mapped_function:
            # `ds.map(lambda x: parse(x, size))`: what it passes is the element's tensor, traced once
            self._traced_callers.add(called)
            return
        self._calls.append((*called, node))
        for arg in node.args:  # a name or attribute bound to one literal: one value, one trace
            if isinstance(arg.value, (cst.Name, cst.Attribute)):
                value = self.context.value_of(arg.value, AT_POINT)
                if value is not None and value is not arg.value and _literal(value):
                    self._constants.add(id(arg.value))

    def leave_Module(self, node: cst.Module) -> None:
        for decorator, definition, owner, scalars in self._defs:
            name = definition.name.value
            through_self = owner is not None
            if (name, through_self) in self._traced_callers and not any(
                    called == name and self_ == through_self for called, self_, _call in self._calls):
                continue  # only a mapped function calls it, with tensors: one trace per map
            passed = None
            for called, through_self, call in self._calls:
                if called != name or through_self != (owner is not None):
                    continue
                passed = passed or self._non_literal_argument(call, scalars)
            words = ", ".join(f"{p} ({kind})" for p, (_i, kind) in scalars.items())
            message = (f"{name}() is a tf.function declared to take Python values: {words}; every distinct "
                       f"value passed is a new trace and a new concrete function kept; pass tensors "
                       f"(tf.constant) or make the choice outside the traced function")
            if passed is not None:
                self.report(decorator, message, repetition=Repetition(
                    UNKNOWN, basis=f"called with {passed}", known=False))
            else:
                self.report(decorator, message)

    def _non_literal_argument(self, call: cst.Call, scalars: dict[str, tuple[int, str]]) -> str | None:
        """The code of a value other than a literal passed to one of ``scalars`` by ``call``."""
        by_position = {i: p for p, (i, _kind) in scalars.items() if i >= 0}
        position = 0
        for arg in call.args:
            if arg.star:
                return None
            if arg.keyword is None:
                target = by_position.get(position)
                position += 1
            else:
                target = arg.keyword.value if arg.keyword.value in scalars else None
            if target is not None and not _literal(arg.value) and id(arg.value) not in self._constants:
                text = code_of(arg.value)
                return text if len(text) <= 40 else text[:37] + "..."
        return None
