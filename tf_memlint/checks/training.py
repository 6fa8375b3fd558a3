"""TFM4xx: eager training loops and Keras models."""

from __future__ import annotations

import libcst as cst

from tf_memlint.context import code_of
from tf_memlint.rule import Rule, register


def _is_true(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"


def _loop_is_small(context, loops, limit: int) -> bool:
    """Every enclosing loop has a static trip count and together they run fewer than ``limit`` times."""
    total = 1
    for loop in loops:
        count = context.static_trip_count(loop)
        if count is None:
            return False
        total *= count
    return total < limit


@register
class PersistentTapeNotReleased(Rule):
    """A ``tf.GradientTape(persistent=True)`` that is not deleted after its last ``gradient`` call.

    Bad::

        with tf.GradientTape(persistent=True) as tape:
            y = f(x)
            z = g(y)
        dz_dx = tape.gradient(z, x)
        dy_dx = tape.gradient(y, x)
        # ... the tape still holds every intermediate it recorded

    Good::

        with tf.GradientTape(persistent=True) as tape:
            y = f(x)
            z = g(y)
        dz_dx = tape.gradient(z, x)
        dy_dx = tape.gradient(y, x)
        del tape

    Fires at module level (a notebook keeps the tape until the kernel stops) and in functions
    that go on working after the tape's last use (a loop, a generator pause, ``locals()``
    handed out). Silent in traced functions (the tape only exists while tracing there), when
    the function simply returns after its last use (the local is freed then), and when the tape
    is returned, yielded, or its name is bound again later in the scope (``tape = None``, a new
    ``with tf.GradientTape() as tape:``): rebinding drops the last reference just like ``del``.
    For the same reason a tape created inside a loop is silent: the next iteration rebinds it, so
    at most one iteration's recording is held, however long the loop runs.
    """

    code = "TFM401"
    name = "persistent-tape-not-released"
    summary = "persistent GradientTape not deleted after its last gradient() call"

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None and isinstance(node.asname.name, cst.Name):
            self._check(node.item, node.asname.name.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            self._check(node.value, node.targets[0].target.value)

    def _check(self, call: cst.BaseExpression, name: str) -> None:
        context = self.context
        if not (isinstance(call, cst.Call) and context.call_name(call) == "tensorflow.GradientTape"
                and any(a.keyword is not None and a.keyword.value == "persistent" and _is_true(a.value)
                        for a in call.args)):
            return
        if context.in_traced_function:
            return
        if context.open_loops:
            return  # bound afresh on every iteration: each rebinding releases the previous tape
        frame = context.function
        nodes = context.walk(frame.node if frame is not None else context.module)
        start = next((i for i, n in enumerate(nodes) if n is call), None)
        if start is None:
            return
        own_binding = nodes[start - 1] if start else None  # the WithItem / Assign that binds it
        last_use = start
        for index in range(start, len(nodes)):
            node = nodes[index]
            if isinstance(node, cst.Del) and name in _deleted_names(node.target):
                return
            if node is not own_binding and _rebinds(node, name):
                return  # `with tf.GradientTape() as tape:` later on: the old tape is freed
            if isinstance(node, (cst.Return, cst.Yield)) and isinstance(node.value, cst.Name) \
                    and node.value.value == name:
                return
            if isinstance(node, cst.Name) and node.value == name:
                last_use = index
        if frame is not None and not any(_keeps_scope_busy(n) for n in nodes[last_use:]):
            return  # a local released when the function returns, with no long work in between
        self.report(call, f"persistent GradientTape `{name}` is never released: it keeps every recorded "
                          f"intermediate alive; `del {name}` after its last gradient() call")


def _keeps_scope_busy(node: cst.CSTNode) -> bool:
    """Work after a tape's last use that keeps the function (and so the tape) alive a while:
    a loop, a generator pause, or handing the whole scope out with ``locals()``."""
    if isinstance(node, (cst.For, cst.While, cst.Yield)):
        return True
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) \
        and node.func.value in ("locals", "vars")


def _rebinds(node: cst.CSTNode, name: str) -> bool:
    targets: list[cst.BaseExpression] = []
    if isinstance(node, cst.Assign):
        targets = [t.target for t in node.targets]
    elif isinstance(node, cst.WithItem) and node.asname is not None:
        targets = [node.asname.name]
    return any(name in _deleted_names(t) for t in targets)


def _deleted_names(target: cst.BaseExpression) -> set[str]:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return {e.value.value for e in target.elements if isinstance(e.value, cst.Name)}
    return set()


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

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "append"
                and isinstance(func.value, cst.Name) and len(node.args) == 1
                and node.args[0].keyword is None):
            return
        context = self.context
        if context.in_traced_function:
            return
        loops = context.loops_running(node)
        if not loops:
            return
        latest = context.latest_value(func.value.value)
        if latest is None or latest[1] or not _is_new_list(latest[0]):
            return
        history = latest[0]
        growing = [loop for loop in loops
                   if not any(history is n for n in context.walk(loop))
                   and context.loop_is_training(loop) and not context.loop_runs_session(loop)]
        if not growing or not context.is_eager_tensor(node.args[0].value):
            return
        if context.consumed_by_tf(func.value.value):
            return  # `tf.concat(history)` after the loop: the tensors are the point, not a history
        value = code_of(node.args[0].value)
        self.report(node, f"{func.value.value}.append({value}) keeps one more tensor alive on every "
                          f"iteration of the training loop; append float({value}) "
                          f"(or {value}.numpy()) instead")


def _is_new_list(expr: cst.BaseExpression | None) -> bool:
    if isinstance(expr, cst.List):
        return True
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "list" \
        and not expr.args


@register
class ModelInLoopWithoutClearSession(Rule):
    """Building or loading a Keras model on every iteration of a loop without ``clear_session()``.

    Bad::

        for units in candidate_units:          # a hyper-parameter search
            model = keras.Sequential([keras.layers.Dense(units), keras.layers.Dense(1)])
            model.compile("adam", "mse")
            model.fit(x, y, epochs=1)

    Good::

        for units in candidate_units:
            keras.backend.clear_session()
            model = keras.Sequential([keras.layers.Dense(units), keras.layers.Dense(1)])
            model.compile("adam", "mse")
            model.fit(x, y, epochs=1)

    ``clear_session()`` frees what building a model leaves in Keras's global state; it does not
    stop the memory that compile+fit leaks per model (measured: still about 3.8 MiB each).
    Silent when each model is kept on purpose (appended to a list: an ensemble), for sub-models
    composed inside a Keras class, and for loops known to run fewer than
    ``model_loop_min_iterations`` times.
    """

    code = "TFM403"
    name = "model-in-loop-without-clear-session"
    summary = "Keras model built or loaded in a loop with no keras.backend.clear_session()"
    options = {
        "model_loop_min_iterations": (
            10, "loops known to run fewer times than this (e.g. over a 3-item list) are not reported"),
    }

    def visit_Call(self, node: cst.Call) -> None:
        context = self.context
        if context.in_traced_function or not context.is_keras_model_build(node):
            return
        loops = context.loops_running(node)
        if not loops or any(context.loop_clears_session(loop) for loop in loops):
            return
        if _loop_is_small(context, loops, self.settings["model_loop_min_iterations"]):
            return
        owner = context.enclosing_class
        if owner is not None and owner.name.value in context.keras_classes:
            return  # sub-models composed in a Keras model's __init__
        if context.is_kept(node, loops[-1]):
            return  # an ensemble: every model is meant to stay alive
        self.report(node, f"{code_of(node.func)}() builds a Keras model on every iteration without "
                          f"keras.backend.clear_session(): each model's state stays alive; call "
                          f"clear_session() at the top of the loop (it does not stop the compile+fit leak)")


@register
class PredictInLoop(Rule):
    """``model.predict(x)`` on a Keras model, inside a loop, on an input that changes per iteration.

    Bad::

        for frame in frames:
            scores = model.predict(frame[None])      # about 50 ms of set-up per call

    Good::

        for frame in frames:
            scores = model(frame[None], training=False)
        # or, for the whole set at once:
        scores = model.predict(np.stack(frames))

    ``predict`` builds a dataset and a predict function per call: a cost (time and a few MiB of
    RSS that levels off), not a leak. Fires only when ``model`` is known to be a Keras model, so
    scikit-learn's ``predict`` stays silent. Predicting the same data once per epoch of a loop
    that fits the model (``model.fit(...); model.predict(x_val)``) is monitoring, and a loop
    that builds a new model each iteration (k-fold, bootstrap) predicts once per model: both
    stay silent.
    """

    code = "TFM404"
    name = "predict-in-loop"
    summary = "Keras model.predict() called per iteration of a loop: slow; call the model directly"
    options = {
        "predict_loop_min_iterations": (
            10, "loops known to run fewer times than this are not reported"),
    }

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "predict" and node.args):
            return
        context = self.context
        if context.in_traced_function or not context.is_keras_model(func.value) \
                or context.overrides(func.value, "predict"):
            return  # not Keras's predict: the model's own class defines a predict method
        loops = context.loops_running(node)
        if not loops or _loop_is_small(context, loops, self.settings["predict_loop_min_iterations"]):
            return
        model_value = context.resolved(func.value)
        if any(model_value is n for n in context.walk(loops[-1])):
            return  # a new model each iteration (k-fold, bootstrap): one predict per model
        used = {n.value for arg in node.args for n in [arg.value, *context.walk(arg.value)]
                if isinstance(n, cst.Name)}
        if not any(used & context.names_changing_in(loop) for loop in loops) \
                and any(context.loop_fits_model(loop) for loop in loops):
            return  # the same data once per epoch of a fit loop: monitoring, not per-item scoring
        model = code_of(func.value)
        self.report(node, f"{model}.predict() in a loop pays its set-up cost on every call; call "
                          f"{model}(x, training=False) in the loop, or predict once on the whole batch")
