"""TFM405 fit-per-step: Keras fit()/evaluate() on one sample or batch per loop iteration."""

from __future__ import annotations

import libcst as cst

from tf_memlint.facts.keras import MODEL_BUILD_TRIGGERS
from tf_memlint.facts.repetition import runs_fewer_than
from tf_memlint.gate import LOOP, Inside
from tf_memlint.rule import Rule, register
from tf_memlint.syntax import argument, code_of, dotted_name, int_literal, target_names


# Methods that make one batch out of a single sample or a list of samples.
_BATCHING_METHODS = frozenset({"reshape", "expand_dims", "array", "asarray", "stack", "vstack",
                               "concatenate", "atleast_2d"})


_PER_STEP_METHODS = ("fit", "evaluate")


def _names(expr: cst.BaseExpression, context) -> set[str]:
    return {n.value for n in [expr, *context.nodes_in(expr)] if isinstance(n, cst.Name)}


def _loop_targets(loop) -> set[str]:
    return set(target_names(loop.target)) if isinstance(loop, cst.For) else set()


def _is_one_batch(context, expr: cst.BaseExpression, loop, _depth: int = 0) -> bool:
    """``expr`` is one sample or one batch that changes with ``loop``'s iterations:
    a target of the loop (``for state, target in minibatch``), a slice whose both bounds move
    with the loop (``x[i:i + bs]``), an element indexed by the loop's ``range`` counter
    (``x[i]``), or one of these turned into a batch (``np.array([s])``, ``s.reshape(1, -1)``,
    ``s[None]``, ``np.expand_dims(s, 0)``), directly or through a name bound in the loop.
    Anything else (an augmented copy of the whole array, a fold ``x[train_idx]``, a growing
    window ``x[:t]``) is not known to be one batch."""
    if _depth > 4:
        return False
    changing = context.keras.names_changing_in(loop)
    if isinstance(expr, cst.Name):
        if expr.value in _loop_targets(loop):
            return True
        if expr.value not in changing:
            return False
        value = _value_in_loop(context, expr.value, loop)
        return value is not None and _is_one_batch(context, value, loop, _depth + 1)
    if isinstance(expr, cst.Subscript):
        if len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index) \
                and isinstance(expr.slice[0].slice.value, cst.Name) \
                and expr.slice[0].slice.value.value == "None":
            return _is_one_batch(context, expr.value, loop, _depth + 1)  # s[None]
        first = expr.slice[0].slice
        if isinstance(first, cst.Slice):
            lower, upper = first.lower, first.upper
            return lower is not None and upper is not None \
                and bool(_names(lower, context) & changing) and bool(_names(upper, context) & changing)
        if isinstance(first, cst.Index) and isinstance(first.value, cst.Name) \
                and first.value.value in _range_counters(loop):
            return True  # x[i], i from range(...)
        return False
    if isinstance(expr, cst.Call):
        func = expr.func
        method = func.attr.value if isinstance(func, cst.Attribute) else dotted_name(func)
        if method not in _BATCHING_METHODS:
            return False
        if isinstance(func, cst.Attribute) and method in ("reshape",) and context.numpy_name(func) is None:
            return _is_one_batch(context, func.value, loop, _depth + 1)  # s.reshape(1, -1)
        if not expr.args:
            return False
        first_arg = expr.args[0].value
        if isinstance(first_arg, (cst.List, cst.Tuple)) and len(first_arg.elements) == 1:
            return _is_one_batch(context, first_arg.elements[0].value, loop, _depth + 1)  # np.array([s])
        return _is_one_batch(context, first_arg, loop, _depth + 1)
    if isinstance(expr, (cst.List, cst.Tuple)) and len(expr.elements) == 1:
        return _is_one_batch(context, expr.elements[0].value, loop, _depth + 1)  # [s]
    return False


def _range_counters(loop) -> set[str]:
    if isinstance(loop, cst.For) and isinstance(loop.iter, cst.Call) \
            and dotted_name(loop.iter.func) == "range" and isinstance(loop.target, cst.Name):
        return {loop.target.value}
    return set()


def _value_in_loop(context, name: str, loop) -> cst.BaseExpression | None:
    """The value a plain assignment in ``loop`` binds to ``name`` (the only one), else None."""
    values = [node.value for node in context.nodes_in(loop) if isinstance(node, cst.Assign)
              for target in node.targets
              if isinstance(target.target, cst.Name) and target.target.value == name]
    return values[0] if len(values) == 1 else None


@register
class FitPerStep(Rule):
    """``model.fit(...)`` / ``model.evaluate(...)`` on one sample or one batch per iteration of a
    loop, on the same Keras model.

    Bad::

        for state, action, reward, next_state, done in minibatch:
            target = model.predict(state, verbose=0)
            ...
            model.fit(state, target, epochs=1, verbose=0)   # set-up of a whole fit() per sample

    Good::

        for state, action, reward, next_state, done in minibatch:
            ...
        model.train_on_batch(np.vstack(states), np.vstack(targets))   # or one fit() on the stack

    Fires only when the receiver is known to be a Keras model bound outside the loop, the call
    trains one epoch (``epochs`` absent or 1, no ``initial_epoch``) and its input is one sample
    or one batch that changes with the loop (a loop target, ``x[i:i + bs]``, ``x[i]``,
    ``np.array([s])``, ``s.reshape(1, -1)``...). Silent for epoch loops on the whole arrays,
    for loops that build a new model each iteration, and for loops known to run fewer than
    ``fit_loop_min_iterations`` times.
    """

    code = "TFM405"
    harm_is_latency = True
    name = "fit-per-step"
    summary = "Keras fit()/evaluate() called on one sample or batch per loop iteration: use train_on_batch"
    triggers = frozenset("." + method + "&" + build for method in _PER_STEP_METHODS
                         for build in MODEL_BUILD_TRIGGERS)
    structure = Inside(LOOP, {"." + method for method in _PER_STEP_METHODS})
    options = {
        "fit_loop_min_iterations": (
            10, "loops known to run fewer times than this are not reported"),
    }

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in _PER_STEP_METHODS):
            return
        context = self.context
        method = func.attr.value
        if context.in_traced_function or not context.keras.is_model(func.value) \
                or context.keras.overrides(func.value, method):
            return
        loops = context.loops_running(node)
        if not loops or runs_fewer_than(context, loops, self.settings["fit_loop_min_iterations"]):
            return
        if argument(node, 99, "initial_epoch") is not None:
            return  # a manual epoch loop
        epochs = argument(node, 3, "epochs")
        if epochs is not None and int_literal(epochs) != 1:
            return
        x = argument(node, 0, "x")
        if x is None:
            return
        same = context.keras.same_model_loops(func.value, loops)
        if not any(_is_one_batch(context, x, loop) for loop in same):
            return
        model = code_of(func.value)
        replacement = "train_on_batch" if method == "fit" else "test_on_batch"
        self.report(node, f"{model}.{method}() on one batch per loop iteration pays {method}()'s set-up "
                          f"(data adapter, callbacks, iterator) every time; call {model}.{replacement}() "
                          f"in the loop, or {method}() once on the stacked batches")
