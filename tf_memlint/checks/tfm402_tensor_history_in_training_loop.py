"""TFM402 tensor-history-in-training-loop: tensors appended to a Python list across the steps of an eager
training loop."""

from __future__ import annotations

import libcst as cst

from tf_memlint.context import AT_POINT
from tf_memlint.evidence import SMALL, Repetition
from tf_memlint.facts.keras import TRAINING_TRIGGERS
from tf_memlint.facts.scalars import arithmetic_sides, loss_object, scalar_call
from tf_memlint.gate import TRAINING_LOOP, Inside
from tf_memlint.rule import Rule, register
from tf_memlint.syntax import code_of, dotted_name, makes_list, string_keyed


@register
class TensorHistoryInTrainingLoop(Rule):
    """Appending tensors to a Python list across the iterations of an eager training loop.

    Bad::

        losses = []
        for x, y in dataset:
            loss = train_step(x, y)   # a tf.function: returns a tensor
            losses.append(loss)       # one more live tensor per step

    Good::

        losses = []
        for x, y in dataset:
            loss = train_step(x, y)
            losses.append(float(loss))

    Fires only when the appended value is proven a tensor (a TF op, a Keras loss or metric
    result, ``tape.gradient``, the result of a ``tf.function`` or of calling a Keras model) and
    the loop takes optimisation steps (``tape.gradient``, ``apply_gradients``, ``minimize``,
    ``train_step``, ``train_on_batch``) and does not run a TF1 session.
    """

    code = "TFM402"
    name = "tensor-history-in-training-loop"
    summary = "tensors appended to a Python list across iterations of an eager training loop"
    triggers = frozenset(".append&" + step for step in TRAINING_TRIGGERS)  # an append in a training loop
    structure = Inside(TRAINING_LOOP, {".append"})

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "append"
                and len(node.args) == 1 and node.args[0].keyword is None):
            return
        holder = _history_name(func.value)  # `losses` or, for `history["loss"]`, `history`
        if holder is None:
            return
        context = self.context
        if context.in_traced_function or context.sessions.builds_tf1_graph:
            return  # traced code, or a TF1 graph (eager turned off): symbolic ops, not eager tensors
        loops = context.loops_running(node)
        if not loops:
            return
        history = context.value_of(holder, AT_POINT)
        if not (makes_list(history) if holder is func.value else _is_new_dict_of_lists(history)):
            return
        # A loop that makes the list anew on each pass (`losses = []` at the top of an epoch) does
        # not grow it; the loops inside that one do.
        remaking = [loop for loop in loops if any(history is n for n in context.nodes_in(loop))]
        growing = [loop for loop in loops if not any(loop is r for r in remaking)
                   and context.keras.loop_is_training(loop) and not context.sessions.loop_runs_session(loop)]
        if not growing or not context.keras.is_eager_tensor(node.args[0].value):
            return
        if all(_trains_only_in_nested_loop(context, loop, loops) for loop in growing) \
                and _is_scalar(context, node.args[0].value):
            return  # one scalar per epoch (a plotting history): bounded by the epochs, not the steps
        if holder is func.value and context.keras.consumed_by_tf(holder.value):
            return  # `tf.concat(history)` after the loop: the tensors are the point, not a history
        value = code_of(node.args[0].value)
        repetition = None
        if remaking and (_is_scalar(context, node.args[0].value)
                         or _averaged(context, holder, remaking[-1])):
            # `losses = []` at the top of each epoch: it holds one epoch of scalars at a time
            # (averaged at the epoch's end, `np.mean(losses)`, its items are numbers of a kind).
            repetition = Repetition(SMALL, basis=f"{code_of(holder)} is made anew in each pass of an outer loop: "
                                                 f"one pass of scalars at a time", known=False)
        self.report(node, f"{code_of(func.value)}.append({value}) keeps one more tensor alive on every "
                          f"iteration of the training loop; append float({value}) "
                          f"(or {value}.numpy()) instead", repetition=repetition)


def _is_scalar(context, expr: cst.BaseExpression, _depth: int = 0, scope=None) -> bool:
    """A scalar tensor (facts/scalars.py: a reduction, a metric's result, a Keras loss object's
    call), arithmetic of scalars and numbers (``0.5 * mse + adv``), a name bound to one (also
    unpacked from a local function whose every return is a tuple of them), or a call of a local
    function whose every return is one. ``scope``: the function whose body ``expr`` is in, when
    not the place of the walk (a name there is a scalar when every value it is bound to is one)."""
    if _depth > 8:
        return False
    sides = arithmetic_sides(expr)
    if sides is not None:
        return all(_is_scalar(context, side, _depth + 1, scope) for side in sides)
    if isinstance(expr, cst.Name):
        if scope is not None:
            owner = _binding_scope(context, scope, expr.value)
            values = owner.all_values(expr.value)
            return bool(values) and all(_is_scalar(context, v, _depth + 1, owner) for v in values)
        found = context.binding(expr.value, AT_POINT)
        if found is None or found.value is None or found.value is expr:
            return False
        if found.unpacked:  # a, b = train_step(x): every item of what it returns is a scalar
            return isinstance(found.value, cst.Call) and _returns_scalars(context, found.value, _depth + 1, items=True)
        return _is_scalar(context, found.value, _depth + 1)
    if not isinstance(expr, cst.Call):
        return False
    if scalar_call(expr, booleans=True):
        return True
    if isinstance(expr.func, cst.Name) and context.call_name(expr) is None:
        made = context.value_of(expr.func, AT_POINT) if scope is None \
            else _binding_scope(context, scope, expr.func.value).only_value(expr.func.value)
        if loss_object(made):
            return True  # loss_fn(y, pred) with loss_fn = tf.keras.losses.MeanSquaredError()
        return _returns_scalars(context, expr, _depth + 1, items=False)
    return False


# Calls that average or add up a list of per-step values into one number.
_REDUCERS = frozenset({"mean", "average", "sum", "nanmean", "median", "reduce_mean", "reduce_sum"})
_REDUCER_MODULES = frozenset({"", "np", "numpy", "statistics", "tf", "math"})


def _averaged(context, holder: cst.Name, loop: cst.CSTNode) -> bool:
    """``np.mean(losses)`` (or ``sum(losses)``, ``statistics.mean``...) of the whole list in
    ``loop``, the pass that makes the list anew."""
    for node in context.nodes_in(loop):
        if isinstance(node, cst.Call) and node.args and isinstance(node.args[0].value, cst.Name) \
                and node.args[0].value.value == holder.value:
            module, _, last = (dotted_name(node.func) or "").rpartition(".")
            if last in _REDUCERS and module in _REDUCER_MODULES:
                return True
    return False


def _binding_scope(context, scope, name: str):
    """The scope a name read in ``scope``'s body is bound in: that function's, else the module's."""
    return scope if scope.binds(name) else context.module_scope


def _returns_scalars(context, call: cst.Call, depth: int, items: bool) -> bool:
    """``call`` runs a local function whose every return is a scalar (``items``: a tuple of them)."""
    if not isinstance(call.func, cst.Name):
        return False
    definition = context.functions.definition(call.func.value)
    if definition is None:
        return False
    scope = context.scopes.get(definition)
    returns = [n for n in context.nodes_in(definition.body) if isinstance(n, cst.Return)]
    if scope is None or not returns:
        return False
    for statement in returns:
        values = [statement.value]
        if items:
            if not isinstance(statement.value, (cst.Tuple, cst.List)):
                return False
            values = [e.value for e in statement.value.elements]
        if not all(v is not None and not isinstance(v, cst.StarredElement)
                   and _is_scalar(context, v, depth, scope) for v in values):
            return False
    return True


def _trains_only_in_nested_loop(context, loop: cst.CSTNode, around: list) -> bool:
    """``loop`` is an epoch loop: a loop nested in it (not one around the append) takes the steps."""
    return any(isinstance(n, (cst.For, cst.While)) and not any(n is a for a in around)
               and context.keras.loop_is_training(n) for n in context.nodes_in(loop))


def _history_name(target: cst.BaseExpression) -> cst.Name | None:
    """The name that holds the history: ``losses`` in ``losses.append``, ``history`` in
    ``history["loss"].append`` (a dict of lists keyed by a string literal)."""
    return target if isinstance(target, cst.Name) else string_keyed(target)


def _is_new_dict_of_lists(expr: cst.BaseExpression | None) -> bool:
    """``{"loss": [], "acc": []}`` or ``collections.defaultdict(list)``: a dict whose values are
    new lists (what ``history["loss"].append`` appends to)."""
    if isinstance(expr, cst.Dict):
        return bool(expr.elements) and all(isinstance(e, cst.DictElement) and makes_list(e.value)
                                           for e in expr.elements)
    return isinstance(expr, cst.Call) and dotted_name(expr.func) in ("collections.defaultdict", "defaultdict") \
        and len(expr.args) == 1 and isinstance(expr.args[0].value, cst.Name) and expr.args[0].value.value == "list"

