"""TFM4xx: eager training loops and Keras models."""

from __future__ import annotations

import libcst as cst

from tf_memlint.checks import reach
from tf_memlint.context import AT_POINT, STATIC
from tf_memlint.facts.keras import GRADIENT_TAPE, MODEL_BUILD_TRIGGERS, TRAINING_TRIGGERS
from tf_memlint.facts.events import user_paced
from tf_memlint.facts.functions import MODEL, PREDICT
from tf_memlint.gate import REPEATED, TRAINING_LOOP, Inside
from tf_memlint.rule import Rule, register
from tf_memlint.syntax import code_of, dotted_name, runs_every_nth


def _is_true(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"


def _loop_is_small(context, loops, limit: int) -> bool:
    """Every enclosing loop has a static trip count and together they run fewer than ``limit`` times."""
    total = context.iterations(loops, fallback=lambda loop: _splitter_count(context, loop))
    return total is not None and total < limit


# scikit-learn cross-validation splitters: (default n_splits, takes n_repeats).
_SPLITTERS = {
    "KFold": (5, False), "StratifiedKFold": (5, False), "GroupKFold": (5, False),
    "StratifiedGroupKFold": (5, False), "TimeSeriesSplit": (5, False), "RepeatedKFold": (5, True),
    "RepeatedStratifiedKFold": (5, True), "ShuffleSplit": (10, False),
    "StratifiedShuffleSplit": (10, False), "GroupShuffleSplit": (5, False),
}


def _splitter_count(context, loop) -> int | None:
    """Trip count of ``for train, test in S.split(...)`` with ``S = KFold(5)`` (any splitter
    above): its ``n_splits`` (times ``n_repeats``), resolved through names; None if unknown."""
    if not isinstance(loop, cst.For) or not isinstance(loop.iter, cst.Call):
        return None
    func = loop.iter.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "split"):
        return None
    splitter = func.value
    if isinstance(splitter, cst.Name):
        splitter = context.value_of(splitter, AT_POINT)
    if not isinstance(splitter, cst.Call):
        return None
    name = context.qualified_name(splitter.func) or code_of(splitter.func)
    known = _SPLITTERS.get(name.rsplit(".", 1)[-1])
    if known is None:
        return None
    default, repeated = known

    def argument(keyword: str, position: int, fallback: int) -> int | None:
        for index, arg in enumerate(splitter.args):
            if (arg.keyword is not None and arg.keyword.value == keyword) \
                    or (arg.keyword is None and index == position):
                return context.int_value(arg.value, AT_POINT)
        return fallback
    splits = argument("n_splits", 0, default)
    repeats = argument("n_repeats", 1, 10) if repeated else 1
    return None if splits is None or repeats is None else splits * repeats


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

    # Opt-in: 0 of 1 findings worth acting on in the held-out corpus (rules/TFM401.md).

    default_enabled = False
    name = "persistent-tape-not-released"
    summary = "persistent GradientTape not deleted after its last gradient() call"
    triggers = frozenset({GRADIENT_TAPE})

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None and isinstance(node.asname.name, cst.Name):
            self._check(node.item, node.asname.name.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            self._check(node.value, node.targets[0].target.value)

    def _check(self, call: cst.BaseExpression, name: str) -> None:
        context = self.context
        if not (isinstance(call, cst.Call) and context.call_name(call) == GRADIENT_TAPE
                and any(a.keyword is not None and a.keyword.value == "persistent" and _is_true(a.value)
                        for a in call.args)):
            return
        if context.in_traced_function:
            return
        if context.open_loops:
            return  # bound afresh on every iteration: each rebinding releases the previous tape
        frame = context.function
        nodes = context.nodes_in(frame.node if frame is not None else context.module)
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
        if _only_output_after(context, frame.node.body if frame is not None else context.module,
                              nodes[last_use]):
            return  # prints, asserts, plots, then the end (401-A): nothing else runs while it is held
        self.report(call, f"persistent GradientTape `{name}` is never released: it keeps every recorded "
                          f"intermediate alive; `del {name}` after its last gradient() call")


_OUTPUT_CALLS = frozenset({"print", "display", "show", "plot", "imshow", "subplot", "figure", "title",
                           "xlabel", "ylabel", "legend", "savefig", "scatter", "hist", "pprint", "info"})


def _only_output_after(context, body, last: cst.CSTNode) -> bool:
    """After the statement holding ``last`` (the tape's last use), the scope runs only output:
    ``print``/plotting/``display`` calls, asserts (``assert``, ``self.assert*``, ``np.testing``),
    ``.numpy()`` and ``.shape`` reads, definitions, ``return``; loops and ifs made only of those."""
    statements = list(body.body)
    index = next((i for i, st in enumerate(statements)
                  if st is last or any(n is last for n in context.nodes_in(st, into_functions=True))), None)
    return index is not None and all(_is_output(context, st) for st in statements[index + 1:])


def _is_output(context, statement: cst.CSTNode) -> bool:
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return True
    if isinstance(statement, cst.Else):
        return all(_is_output(context, st) for st in statement.body.body)
    if isinstance(statement, (cst.For, cst.While, cst.If)):
        orelse = getattr(statement, "orelse", None)  # `else:` / `elif` made of output too
        return all(_is_output(context, st) for st in statement.body.body) and (
            orelse is None or _is_output(context, orelse))
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        if isinstance(small, (cst.Assert, cst.Pass, cst.Import, cst.ImportFrom)):
            continue
        if isinstance(small, cst.Return) and (small.value is None or isinstance(small.value, cst.Name)):
            continue
        value = small.value if isinstance(small, (cst.Expr, cst.Assign)) else None
        if not isinstance(value, cst.Call):
            return False
        name = code_of(value.func)
        last = name.rsplit(".", 1)[-1]
        if not (last in _OUTPUT_CALLS or last.startswith("assert") or "testing" in name or last == "numpy"):
            return False
    return True


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
    # Opt-in: 3 of 7 findings worth acting on in the fresh held-out sets of rounds 4 and 5
    # (rules/TFM402.md): lists reset every epoch or local to a short function, and demo loops.
    default_enabled = False
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
        if not (_is_new_list(history) if holder is func.value else _is_new_dict_of_lists(history)):
            return
        growing = [loop for loop in loops
                   if not any(history is n for n in context.nodes_in(loop))
                   and context.keras.loop_is_training(loop) and not context.sessions.loop_runs_session(loop)]
        if not growing or not context.keras.is_eager_tensor(node.args[0].value):
            return
        if all(_trains_only_in_nested_loop(context, loop, loops) for loop in growing) \
                and _is_scalar(context, node.args[0].value):
            return  # one scalar per epoch (a plotting history): bounded by the epochs, not the steps
        if holder is func.value and context.keras.consumed_by_tf(holder.value):
            return  # `tf.concat(history)` after the loop: the tensors are the point, not a history
        value = code_of(node.args[0].value)
        self.report(node, f"{code_of(func.value)}.append({value}) keeps one more tensor alive on every "
                          f"iteration of the training loop; append float({value}) "
                          f"(or {value}.numpy()) instead")


_REDUCTIONS = frozenset(f"tensorflow.{ns}reduce_{op}" for ns in ("", "math.")
                        for op in ("mean", "sum", "max", "min", "prod", "std", "variance", "all", "any"))


def _is_scalar(context, expr: cst.BaseExpression, _depth: int = 0) -> bool:
    """A scalar tensor: ``metric.result()``, ``tf.reduce_mean(x)`` without ``axis``, a name bound
    to one, or a call of a local function whose every return is one."""
    if _depth > 3:
        return False
    if isinstance(expr, cst.Name):
        value = context.value_of(expr, AT_POINT)
        return value is not None and value is not expr and _is_scalar(context, value, _depth + 1)
    if not isinstance(expr, cst.Call):
        return False
    func = expr.func
    if isinstance(func, cst.Attribute) and func.attr.value == "result" and not expr.args:
        return True  # a Keras metric's running value
    if context.call_name(expr) in _REDUCTIONS:
        return len([a for a in expr.args if a.keyword is None]) == 1 and not any(
            a.keyword is not None and a.keyword.value in ("axis", "reduction_indices") for a in expr.args)
    if isinstance(func, cst.Name) and context.call_name(expr) is None:
        definition = context.functions.definition(func.value)
        if definition is None:
            return False
        returns = [n for n in context.nodes_in(definition.body) if isinstance(n, cst.Return)]
        return bool(returns) and all(r.value is not None and _is_scalar(context, r.value, _depth + 1)
                                     for r in returns)
    return False


def _trains_only_in_nested_loop(context, loop: cst.CSTNode, around: list) -> bool:
    """``loop`` is an epoch loop: a loop nested in it (not one around the append) takes the steps."""
    return any(isinstance(n, (cst.For, cst.While)) and not any(n is a for a in around)
               and context.keras.loop_is_training(n) for n in context.nodes_in(loop))


def _history_name(target: cst.BaseExpression) -> cst.Name | None:
    """The name that holds the history: ``losses`` in ``losses.append``, ``history`` in
    ``history["loss"].append`` (a dict of lists keyed by a string literal)."""
    if isinstance(target, cst.Name):
        return target
    if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and len(target.slice) == 1 \
            and isinstance(target.slice[0].slice, cst.Index) \
            and isinstance(target.slice[0].slice.value, cst.SimpleString):
        return target.value
    return None


def _is_new_dict_of_lists(expr: cst.BaseExpression | None) -> bool:
    """``{"loss": [], "acc": []}`` or ``collections.defaultdict(list)``: a dict whose values are
    new lists (what ``history["loss"].append`` appends to)."""
    if isinstance(expr, cst.Dict):
        return bool(expr.elements) and all(isinstance(e, cst.DictElement) and _is_new_list(e.value)
                                           for e in expr.elements)
    return isinstance(expr, cst.Call) and dotted_name(expr.func) in ("collections.defaultdict", "defaultdict") \
        and len(expr.args) == 1 and isinstance(expr.args[0].value, cst.Name) and expr.args[0].value.value == "list"


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
    reaches_across_modules = True  # checks/reach.py hooks

    # Opt-in: 0 of 4 findings worth acting on in the held-out corpus (rules/TFM403.md).

    default_enabled = False
    name = "model-in-loop-without-clear-session"
    summary = "Keras model built or loaded in a loop with no keras.backend.clear_session()"
    triggers = MODEL_BUILD_TRIGGERS
    # a build in a loop or a request/batch handler, or in a function one calls (checks/reach.py),
    # or, in the command, a call there of another module's function that builds one
    structure = Inside(REPEATED, MODEL_BUILD_TRIGGERS | {MODEL})
    options = {
        "model_loop_min_iterations": (
            10, "loops known to run fewer times than this (e.g. over a 3-item list) are not reported"),
    }

    def visit_Call(self, node: cst.Call) -> None:
        context = self.context
        if context.in_traced_function or not context.keras.is_model_build(node):
            reach.model_reach(self, node)  # a function that builds one, called per iteration/request
            return
        loops = context.loops_running(node)
        if not loops:
            reach.model_in_handler(self, node)  # per request / per batch (facts/events.py)
            return
        if any(context.keras.loop_clears_session(loop) for loop in loops):
            return
        if _loop_is_small(context, loops, self.settings["model_loop_min_iterations"]):
            return
        owner = context.enclosing_class
        if owner is not None and owner.name.value in context.keras.layer_classes:
            return  # sub-models composed in a Keras model's __init__
        if context.keras.is_kept(node, loops[-1]):
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
    reaches_across_modules = True  # checks/reach.py hooks

    # Opt-in: after round 4's fixes still 28 of 41 findings worth acting on in two fresh held-out
    # sets (heldout5, heldout6): tutorial loops of tens of calls are its noise (rules/TFM404.md).
    default_enabled = False
    name = "predict-in-loop"
    summary = "Keras model.predict() called per iteration of a loop: slow; call the model directly"
    triggers = frozenset(".predict&" + build for build in MODEL_BUILD_TRIGGERS)  # on a known Keras model
    # in a loop or a request/batch handler, or in a function one calls (checks/reach.py); in the
    # command, a call there of another module's function that predicts
    structure = Inside(REPEATED, {".predict", PREDICT})
    options = {
        "predict_loop_min_iterations": (
            10, "loops known to run fewer times than this are not reported"),
    }

    def visit_Call(self, node: cst.Call) -> None:
        if not self.context.keras.predict_builds_per_call:
            if self.context.keras.era_is_elsewhere:
                reach.predict_reach(self, node)  # another module's helper predicts: its era counts
            return  # Keras in TF1 graph mode reuses one predict function: no per-call set-up
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "predict" and node.args):
            reach.predict_reach(self, node)  # a function that predicts, called per iteration/request
            return
        context = self.context
        if context.in_traced_function or not context.keras.is_model(func.value) \
                or context.keras.overrides(func.value, "predict"):
            reach.predict_reach(self, node)  # self.model.predict() of a class of this module
            reach.predict_in_handler(self, node)  # a global model (`global model`) in a handler
            return  # not Keras's predict: the model's own class defines a predict method
        loops = context.loops_running(node)
        if not loops:
            reach.predict_in_handler(self, node)  # per request / per batch (facts/events.py)
            return
        if _loop_is_small(context, loops, self.settings["predict_loop_min_iterations"]) \
                or user_paced(context, loops) or runs_every_nth(loops[-1], node, self.settings["predict_loop_min_iterations"]):
            return  # a few iterations, a person's uploads, every n-th step: the set-up is not felt
        model_value = context.value_of(func.value, AT_POINT)
        if any(model_value is n for n in context.nodes_in(loops[-1])):
            return  # a new model each iteration (k-fold, bootstrap): one predict per model
        used = {n.value for arg in node.args for n in [arg.value, *context.nodes_in(arg.value)]
                if isinstance(n, cst.Name)}
        if not any(used & context.keras.names_changing_in(loop) for loop in loops) \
                and any(context.keras.loop_fits_model(loop) for loop in loops):
            return  # the same data once per epoch of a fit loop: monitoring, not per-item scoring
        if _predicts_whole_batch(context, node, loops[-1]):
            return  # one call per batch of a batching iterator: the forward pass dominates
        model = code_of(func.value)
        self.report(node, f"{model}.predict() in a loop pays its set-up cost on every call; call "
                          f"{model}(x, training=False) in the loop, or predict once on the whole batch")


# What yields whole batches when iterated: tf.data batching, Keras dataset utilities (batched by
# default), Keras ImageDataGenerator flows.
_BATCHING_METHODS = frozenset({"batch", "padded_batch", "ragged_batch", "flow", "flow_from_directory",
                               "flow_from_dataframe"})
_BATCHED_UTILITIES = frozenset({"image_dataset_from_directory", "text_dataset_from_directory",
                                "audio_dataset_from_directory", "timeseries_dataset_from_array"})
_PASSING_METHODS = frozenset({"take", "skip", "prefetch", "cache", "shuffle", "repeat", "map", "filter",
                              "with_options", "as_numpy_iterator"})
_ONE_ITEM_CALLS = frozenset({"expand_dims", "reshape", "array", "asarray", "stack", "newaxis"})


def _predicts_whole_batch(context, call: cst.Call, loop) -> bool:
    """``model.predict(batch)`` where ``batch`` is what the loop yields (or a call on it that
    keeps its batch dimension, ``preprocess_input(images)``, or a part of it unpacked in the body,
    ``x, y = batch``) and the loop iterates a batching source (404-A); or ``batch`` is taken from
    a batching source with ``next()`` (``x, y = next(generator)``)."""
    names = set()
    if isinstance(loop, cst.For):
        target = loop.target
        parts = [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]
        names = {p.value for p in parts if isinstance(p, cst.Name)}
    arg = call.args[0].value
    for _ in range(3):  # x = preprocess_input(images); model.predict(x)
        if isinstance(arg, cst.Name) and arg.value not in names:
            found = context.binding(arg.value, AT_POINT)
            arg = None if found is None else found.value  # `x, y = batch`: a part of a batch is a batch
        if _is_next(arg):
            return _is_batching(context, arg.args[0].value, 0)
        if isinstance(arg, cst.Call) and arg.args and (code_of(arg.func).rsplit(".", 1)[-1] not in _ONE_ITEM_CALLS):
            arg = arg.args[0].value
    if not (isinstance(arg, cst.Name) and arg.value in names):
        return False
    return _is_batching(context, loop.iter, 0)


def _is_next(expr) -> bool:
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "next" \
        and len(expr.args) == 1


def _is_batching(context, expr, depth: int) -> bool:
    if depth > 4 or expr is None:
        return False
    if isinstance(expr, cst.Name):
        value = context.value_of(expr, AT_POINT)
        if value is not None:
            return _is_batching(context, value, depth + 1)
        return _parameter_is_batching(context, expr.value, depth)
    if not isinstance(expr, cst.Call):
        return False
    func = expr.func
    name = (context.qualified_name(func) or code_of(func)).rsplit(".", 1)[-1]
    if name in _BATCHED_UTILITIES:
        return not any(a.keyword is not None and a.keyword.value == "batch_size"
                       and isinstance(a.value, cst.Name) and a.value.value == "None" for a in expr.args)
    if isinstance(func, cst.Attribute):
        if func.attr.value in _BATCHING_METHODS:
            return True
        if func.attr.value in _PASSING_METHODS:
            return _is_batching(context, func.value, depth + 1)
    if isinstance(func, cst.Name) and func.value == "iter" and expr.args:
        return _is_batching(context, expr.args[0].value, depth + 1)  # next(iter(dataset))
    if isinstance(func, cst.Name):
        definition = context.functions.definition(func.value)
        if definition is not None:  # a local generator that yields lists filled up to batch_size
            inner = context.nodes_in(definition.body, into_functions=True)
            return any(isinstance(n, cst.Yield) for n in inner) and any(
                isinstance(n, cst.Name) and "batch" in n.value.lower() for n in inner)
    return False


def _parameter_is_batching(context, name: str, depth: int) -> bool:
    """``name`` is a parameter of the enclosing function and every call of that function in this
    module that passes it passes a batching source."""
    frame = context.function
    if frame is None or not isinstance(frame.node, cst.FunctionDef):
        return False
    params = [p.name.value for p in frame.node.params.params]
    if name not in params:
        return False
    position, function = params.index(name), frame.node.name.value
    passed = []
    for node in context.nodes_in(context.module, into_functions=True):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == function:
            arg = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == name),
                       None)
            positional = [a.value for a in node.args if a.keyword is None]
            if arg is None and len(positional) > position:
                arg = positional[position]
            if arg is not None:
                passed.append(arg)
    return bool(passed) and all(_is_batching(context, context.value_of(a, STATIC) if isinstance(a, cst.Name)
                                             else a, depth + 1) for a in passed)
