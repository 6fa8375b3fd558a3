"""What makes one number out of a tensor, read off a call alone: TFM402 asks it of a value kept
per step (a scalar a step is harmless to keep), and its fix of the value it wraps in ``float()``
(``float()`` of any other tensor raises). Each resolves names in its own way; the calls are these."""

from __future__ import annotations

import libcst as cst

from tf_memlint.syntax import code_of

_REDUCTIONS = frozenset(f"reduce_{op}" for op in ("mean", "sum", "max", "min", "prod", "std", "variance"))
_BOOLEAN_REDUCTIONS = frozenset({"reduce_all", "reduce_any"})
# keras.ops (Keras 3) spells them without the prefix
_OPS_REDUCTIONS = frozenset({"mean", "sum", "max", "min", "prod", "std", "var"})
# a Keras loss object's reductions that leave one number ("none" keeps one loss per example)
_SCALAR_REDUCTIONS = frozenset({"sum_over_batch_size", "sum", "mean", "auto"})


def scalar_call(expr: cst.CSTNode, booleans: bool = False) -> bool:
    """A reduction over every axis (``tf.reduce_mean(x)``, ``keras.ops.mean(x)``, no ``axis``) or a
    Keras metric's running value (``metric.result()``); with ``booleans``, ``tf.reduce_all`` and
    ``tf.reduce_any`` too (one truth value: a scalar to keep, but not a number to wrap in float())."""
    if not isinstance(expr, cst.Call) or not isinstance(expr.func, (cst.Attribute, cst.Name)):
        return False
    last = expr.func.attr.value if isinstance(expr.func, cst.Attribute) else expr.func.value
    if last == "result" and not expr.args and isinstance(expr.func, cst.Attribute):
        return True
    in_ops = isinstance(expr.func, cst.Attribute) and code_of(expr.func.value).split(".")[-1] == "ops"
    if last in _REDUCTIONS or (in_ops and last in _OPS_REDUCTIONS) or (booleans and last in _BOOLEAN_REDUCTIONS):
        positional = [a for a in expr.args if a.keyword is None]
        keywords = {a.keyword.value for a in expr.args if a.keyword is not None}
        return len(positional) == 1 and not keywords & {"axis", "reduction_indices"}
    return False


def loss_object(expr: cst.BaseExpression | None) -> bool:
    """``tf.keras.losses.MeanSquaredError()`` and the like, whose call reduces to a scalar (Keras's
    default reduction; ``reduction="none"`` keeps one loss per example)."""
    if not (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute)):
        return False
    spelled = code_of(expr.func).split(".")
    if len(spelled) < 2 or spelled[-2] != "losses" or not spelled[-1][:1].isupper():
        return False
    for arg in expr.args:
        if arg.keyword is not None and arg.keyword.value == "reduction":
            reduction = arg.value
            named = isinstance(reduction, cst.SimpleString) and reduction.evaluated_value
            if named not in _SCALAR_REDUCTIONS:
                return False
    return True


def arithmetic_sides(expr: cst.BaseExpression) -> list[cst.BaseExpression] | None:
    """The operands of ``0.5 * mse + adv`` that must be scalars for it to be one (number literals
    are), or None when ``expr`` is not arithmetic."""
    if isinstance(expr, cst.UnaryOperation):
        return [expr.expression]
    if isinstance(expr, cst.BinaryOperation):
        return [side for side in (expr.left, expr.right) if not isinstance(side, (cst.Integer, cst.Float))]
    return None
