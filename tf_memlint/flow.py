"""Flow facts for TF1 sessions, eager training loops and Keras models (TFM2xx, TFM4xx).

A mixin of ``TFContext``: it follows the latest value bound to each name in traversal order, so
a notebook that rebinds ``model`` from a scikit-learn estimator to a Keras model is judged at
each use, and it knows which loops run a session, train a model or clear the Keras session.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import libcst as cst

from tf_memlint.syntax import Kind, _target_names, dotted_name

if TYPE_CHECKING:
    from tf_memlint.context import Scope

# TF1 sessions and graphs (TFM2xx) -----------------------------------------------------------
SESSION_CLASSES = frozenset({"tensorflow.Session", "tensorflow.InteractiveSession"})
# Calls that hand back a session the code may `run` (not for TFM201: these are not created here).
SESSION_FACTORIES = frozenset({
    "tensorflow.train.MonitoredTrainingSession", "tensorflow.train.MonitoredSession",
    "tensorflow.train.SingularMonitoredSession", "tensorflow.get_default_session",
    "keras.backend.get_session",
})
SESSION_NAME = re.compile(r"^_*(sess|session)$|_(sess|session)$|^(sess|session)_").search
# Namespaces whose calls build no graph operations (files, flags, configuration, Keras...).
NON_OP_NAMESPACES = frozenset({
    "keras", "estimator", "gfile", "io.gfile", "logging", "app", "flags", "compat", "config", "test",
    "errors", "distribute", "sysconfig", "version", "autograph", "lite", "profiler", "tpu",
    "feature_column", "dtypes", "python_io", "saved_model", "nest", "types", "experimental",
    "summary.FileWriter", "summary.FileWriterCache", "train.Coordinator", "train.Server", "train.ClusterSpec",
    "io.TFRecordWriter", "lookup.experimental", "random.set_seed",
})
OP_EXCEPTIONS = frozenset({"tensorflow.saved_model.loader.load", "tensorflow.saved_model.load"})
# Classes whose construction adds operations to the graph.
OP_CLASSES = frozenset({"Variable", "TensorArray", "SparseTensor", "Saver", "Print"})
# Lower-case TensorFlow functions that read or configure the graph without adding operations.
NON_OP_FUNCTIONS = frozenset({
    "get_default_graph", "reset_default_graph", "get_collection", "get_collection_ref",
    "add_to_collection", "add_to_collections", "trainable_variables", "global_variables",
    "local_variables", "model_variables", "all_variables", "moving_average_variables",
    "device", "name_scope", "variable_scope", "control_dependencies", "set_random_seed",
    "get_default_session", "executing_eagerly", "enable_eager_execution", "disable_eager_execution",
    "disable_v2_behavior", "enable_v2_behavior", "disable_v2_tensorshape", "get_variable_scope",
    "get_logger", "latest_checkpoint", "get_checkpoint_state", "checkpoint_exists", "list_variables",
    "load_variable", "load_checkpoint", "start_queue_runners", "global_step", "as_dtype", "is_tensor",
    "colocate_with", "container", "get_seed", "make_ndarray", "make_tensor_proto", "init_scope",
    "get_static_value", "write_graph", "summary_iterator", "get_or_create_global_step",
    "get_global_step", "function", "enable_resource_variables", "disable_resource_variables",
    "set_verbosity", "TensorShape", "import_meta_graph_def", "assert_same_float_dtype",
})
OPTIMIZER_GRAPH_METHODS = frozenset({"minimize", "compute_gradients", "apply_gradients"})
GRAPH_RESETS = frozenset({"tensorflow.reset_default_graph", "keras.backend.clear_session",
                          "keras.utils.clear_session"})

# Eager training loops and Keras models (TFM4xx) ---------------------------------------------
TAPE_NAME = re.compile(r"^(g?tape|tape_\w+|\w+_tape)$").search
KERAS_MODEL_BUILDERS = frozenset({
    "keras.Sequential", "keras.Model", "keras.models.load_model", "keras.saving.load_model",
    "keras.models.clone_model", "keras.models.model_from_json", "keras.models.model_from_yaml",
    "keras.models.model_from_config", "keras.experimental.load_from_saved_model",
})
CLEAR_SESSION_CALLS = frozenset({"keras.backend.clear_session", "keras.utils.clear_session"})


class FlowFacts:
    """Methods of ``TFContext`` (it initialises them with ``_init_flow_facts``)."""

    # Flow facts for sessions, training loops and Keras models (TFM2xx, TFM4xx) ----------------
    # The latest value bound to each name is followed in traversal order, so a notebook that
    # rebinds ``model`` from a scikit-learn estimator to a Keras model is judged at each use.
    def _init_flow_facts(self, classes: list[cst.ClassDef]) -> None:
        self.module_loops: list[cst.For | cst.While] = []
        self._latest: dict[tuple[int, str], tuple[cst.BaseExpression | None, bool]] = {}
        self._latest_attr: dict[tuple[int, str], cst.BaseExpression | None] = {}
        self._walk_cache: dict[tuple[int, bool], list[cst.CSTNode]] = {}
        self._loop_facts: dict[tuple[int, str], bool] = {}
        self.keras_model_classes = self.subclasses_of(classes, ("keras.Model", "keras.Sequential"))
        self.decorated_traced_names: set[str] = set()
        self._defs: dict[str, cst.FunctionDef] = {}
        for node in self.scopes:
            if isinstance(node, cst.FunctionDef):
                self._defs.setdefault(node.name.value, node)
                for decorator in node.decorators:
                    target = decorator.decorator
                    if isinstance(target, cst.Call):
                        target = target.func
                    if self.qualified_name(target) == "tensorflow.function":
                        self.decorated_traced_names.add(node.name.value)

    def _record_binding(self, node: cst.CSTNode) -> None:
        scope = self._scope_stack[-1]
        if isinstance(node, cst.Assign):
            for target in node.targets:
                self._bind_target(scope, target.target, node.value)
        elif isinstance(node, cst.AugAssign):
            self._bind_target(scope, node.target, None)
        elif isinstance(node, cst.WithItem):
            if node.asname is not None:
                self._bind_target(scope, node.asname.name, node.item)
        elif isinstance(node, cst.For):
            self._bind_target(scope, node.target, None)

    def _bind_target(self, scope: Scope, target: cst.BaseExpression,
                     value: cst.BaseExpression | None) -> None:
        if isinstance(target, cst.Name):
            self._latest[(id(scope), target.value)] = (value, False)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for name in _target_names(target):  # `loss, logits = step(x)`: unpacked from value
                self._latest[(id(scope), name)] = (value, True)
        elif (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
              and target.value.value == "self" and self._class_stack):
            self._latest_attr[(id(self._class_stack[-1]), target.attr.value)] = value

    def latest_value(self, name: str) -> tuple[cst.BaseExpression | None, bool] | None:
        """(value, unpacked) last bound to ``name`` before this point of the walk, in the scope
        that binds it; None when it is unknown (a parameter, a loop target, not yet bound)."""
        found = self.lookup(name)
        if found is None:
            return None
        latest = self._latest.get((id(found[0]), name))
        if latest is None or latest[0] is None:
            return None
        return latest

    def resolved(self, expr: cst.BaseExpression) -> cst.BaseExpression | None:
        """``expr`` itself, or the value last bound to a name / ``self.attr`` (not unpacked)."""
        if isinstance(expr, cst.Name):
            latest = self.latest_value(expr.value)
            return None if latest is None or latest[1] else latest[0]
        if (isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name)
                and expr.value.value == "self" and self._class_stack):
            return self._latest_attr.get((id(self._class_stack[-1]), expr.attr.value))
        return expr

    def walk(self, node: cst.CSTNode, into_functions: bool = False) -> list[cst.CSTNode]:
        """Every node under ``node`` in source order; nested defs, lambdas and classes are skipped
        unless ``into_functions`` (their bodies run at another time)."""
        key = (id(node), into_functions)
        cached = self._walk_cache.get(key)
        if cached is None:
            cached = []
            stack = list(reversed(node.children))
            while stack:
                child = stack.pop()
                if not into_functions and isinstance(child, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                    continue
                cached.append(child)
                stack.extend(reversed(child.children))
            self._walk_cache[key] = cached
        return cached

    def calls_in(self, node: cst.CSTNode) -> list[cst.Call]:
        return [n for n in self.walk(node) if isinstance(n, cst.Call)]

    def _loop_fact(self, loop: cst.CSTNode, fact: str, test) -> bool:
        key = (id(loop), fact)
        if key not in self._loop_facts:
            self._loop_facts[key] = any(test(call) for call in self.calls_in(loop))
        return self._loop_facts[key]

    # TF1 sessions --------------------------------------------------------------------------
    def is_session_creation(self, node: cst.CSTNode) -> bool:
        """``tf.Session(...)`` / ``tf.compat.v1.InteractiveSession(...)``, any import style."""
        return self.call_name(node) in SESSION_CLASSES

    def is_session(self, expr: cst.BaseExpression, _depth: int = 0) -> bool:
        """A TF1 session: created here, bound by ``with ... as sess``, a monitored session, or a
        name/attribute spelled like one (``sess``, ``self.session``, ``mon_sess``)."""
        if _depth > 4:
            return False
        if isinstance(expr, cst.Call):
            name = self.call_name(expr)
            if name in SESSION_CLASSES or name in SESSION_FACTORIES:
                return True
            func = expr.func
            return (isinstance(func, cst.Attribute) and func.attr.value in ("as_default", "managed_session")
                    and (func.attr.value == "managed_session" or self.is_session(func.value, _depth + 1)))
        if isinstance(expr, cst.Name) or (isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name)
                                          and expr.value.value == "self"):
            value = self.resolved(expr)
            if value is not None:  # known: `sess = ort.InferenceSession(...)` is not a TF session
                return self.is_session(value, _depth + 1)
            return bool(SESSION_NAME(expr.value if isinstance(expr, cst.Name) else expr.attr.value))
        return False

    def is_session_run(self, node: cst.CSTNode) -> bool:
        """``sess.run(...)``, ``sess.partial_run(...)``, ``op.run(feed_dict=...)``, ``t.eval(session=s)``."""
        if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute):
            return False
        method = node.func.attr.value
        if method in ("run", "partial_run") and self.is_session(node.func.value):
            return True
        return method in ("run", "eval") and any(
            a.keyword is not None and a.keyword.value in ("feed_dict", "session") for a in node.args)

    def loop_runs_session(self, loop: cst.CSTNode) -> bool:
        """The loop body (nested loops included, nested defs not) runs a TF1 session."""
        return self._loop_fact(loop, "session", self.is_session_run)

    def creates_graph_ops(self, node: cst.CSTNode) -> bool:
        """A call that adds operations to the default TF1 graph each time it runs: any TensorFlow
        op, ``tf.Variable``, initializers, ``tf.train.Saver()``, an optimizer's ``minimize``."""
        if not isinstance(node, cst.Call):
            return False
        name = self.call_name(node)
        if name is not None:
            if not name.startswith("tensorflow."):
                return False
            path = name[len("tensorflow."):].split(".")
            last = path[-1]
            if path[0] in NON_OP_NAMESPACES or ".".join(path[:2]) in NON_OP_NAMESPACES:
                return name in OP_EXCEPTIONS
            if last[:1].isupper():
                return last in OP_CLASSES
            return last not in NON_OP_FUNCTIONS
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in OPTIMIZER_GRAPH_METHODS:
            optimizer = self.resolved(func.value)
            built_by = (self.call_name(optimizer) or "") if optimizer is not None else ""
            return built_by.startswith("tensorflow.train.") and built_by.endswith("Optimizer")
        return False

    def resets_graph(self, node: cst.CSTNode) -> bool:
        """``tf.reset_default_graph()``, ``clear_session()``, or a local helper that calls one."""
        return self._calls_through_helpers(node, GRAPH_RESETS, "resets")

    def _calls_through_helpers(self, node: cst.CSTNode, names: frozenset, fact: str, _depth: int = 0) -> bool:
        if self.call_name(node) in names:
            return True
        if _depth > 2 or not isinstance(node, cst.Call) or not isinstance(node.func, cst.Name):
            return False
        definition = self._defs.get(node.func.value)
        if definition is None or self.call_name(node) is not None:
            return False
        return self._loop_fact(definition.body, fact,
                               lambda call: self._calls_through_helpers(call, names, fact, _depth + 1))

    def loop_resets_graph(self, loop: cst.CSTNode) -> bool:
        """The loop starts a new default graph each iteration (``tf.reset_default_graph()``,
        ``keras.backend.clear_session()``)."""
        return self._loop_fact(loop, "reset", self.resets_graph)

    def makes_fresh_graph(self, item: cst.BaseExpression, loop: cst.CSTNode) -> bool:
        """A ``with`` item that makes a graph created in ``loop`` the default: ``tf.Graph().as_default()``,
        ``g.as_default()`` or ``tf.Session(graph=g)`` with ``g = tf.Graph()`` in the loop."""
        graph: cst.BaseExpression | None = None
        if isinstance(item, cst.Call) and isinstance(item.func, cst.Attribute) \
                and item.func.attr.value == "as_default":
            graph = item.func.value
        elif self.is_session_creation(item):
            graph = next((a.value for a in item.args
                          if a.keyword is not None and a.keyword.value == "graph"), None)
        if graph is None:
            return False
        if isinstance(graph, cst.Name):
            value = self.resolved(graph)
            if value is None or not any(value is n for n in self.walk(loop)):
                return False
            graph = value
        return self.call_name(graph) == "tensorflow.Graph"

    # Eager training loops ------------------------------------------------------------------
    def is_gradient_tape(self, expr: cst.BaseExpression) -> bool:
        value = self.resolved(expr)
        if value is not None and self.call_name(value) == "tensorflow.GradientTape":
            return True
        return isinstance(expr, cst.Name) and bool(TAPE_NAME(expr.value))

    def is_training_call(self, node: cst.CSTNode, _depth: int = 0) -> bool:
        """One optimisation step: ``optimizer.apply_gradients`` / ``minimize``, ``train_on_batch``,
        a ``train_step``, a manual ``variable.assign_sub(...)`` update, or a local function that
        does one of these. A bare ``tape.gradient`` is not one: saliency maps and integrated
        gradients take gradients without training."""
        if not isinstance(node, cst.Call):
            return False
        func = node.func
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in ("apply_gradients", "train_on_batch", "assign_sub") or "train_step" in method:
                return True
            if method == "minimize":
                return self.call_name(node) is None \
                    and dotted_name(func.value) not in ("optimize", "scipy.optimize")
            if method == "run" and isinstance(func.value, (cst.Name, cst.Attribute)) \
                    and node.args and isinstance(node.args[0].value, cst.Name):
                return self._is_training_function(node.args[0].value.value, _depth)  # strategy.run(step)
            return False
        if isinstance(func, cst.Name):
            return "train_step" in func.value or self._is_training_function(func.value, _depth)
        return False

    def _is_training_function(self, name: str, _depth: int) -> bool:
        definition = self._defs.get(name)
        if definition is None or _depth > 2:
            return False
        return self._loop_fact(definition.body, "training",
                               lambda call: self.is_training_call(call, _depth + 1))

    def loop_is_training(self, loop: cst.CSTNode) -> bool:
        """The loop body takes optimisation steps (see ``is_training_call``)."""
        return self._loop_fact(loop, "training", self.is_training_call)

    def is_traced_callable(self, expr: cst.BaseExpression) -> bool:
        """A name for a ``tf.function``: a decorated def or ``f = tf.function(g)``."""
        if not isinstance(expr, cst.Name):
            return False
        if expr.value in self.decorated_traced_names:
            return True
        value = self.resolved(expr)
        return value is not None and self.call_name(value) == "tensorflow.function"

    def is_eager_tensor(self, expr: cst.BaseExpression, _depth: int = 0) -> bool:
        """``expr`` is proven to be a tensor (or a structure of tensors) in eager code: a TF op,
        a Keras loss/op/metric result, ``tape.gradient``, the result of a ``tf.function`` or of
        calling a Keras model. ``float(x)``, ``x.numpy()``, ``x.item()`` are not."""
        if _depth > 6:
            return False
        if isinstance(expr, cst.Name):
            latest = self.latest_value(expr.value)
            if latest is None:
                return False
            value, unpacked = latest
            if unpacked:  # `loss, logits = train_step(x)`: every output of a tf.function is a tensor
                return isinstance(value, cst.Call) and self.is_traced_callable(value.func)
            return self.is_eager_tensor(value, _depth + 1)
        if isinstance(expr, cst.Subscript):
            return self.is_eager_tensor(expr.value, _depth + 1)
        if isinstance(expr, cst.BinaryOperation):
            return self.is_eager_tensor(expr.left, _depth + 1) or self.is_eager_tensor(expr.right, _depth + 1)
        if not isinstance(expr, cst.Call):
            return False
        name = self.call_name(expr)
        if name is not None:
            path = name.split(".")
            if name.startswith(("keras.losses.", "keras.ops.", "keras.activations.")) \
                    and path[-1][:1].islower():
                return True
            return self.value_kind(expr) is Kind.TENSOR
        func = expr.func
        if isinstance(func, cst.Attribute):
            if func.attr.value == "gradient":
                return self.is_gradient_tape(func.value)
            if func.attr.value == "result":
                metric = self.resolved(func.value)
                return metric is not None and (self.call_name(metric) or "").startswith("keras.metrics.")
            return False
        if self.is_traced_callable(func):
            return True
        if isinstance(func, cst.Name) and self._returns_tensor_op(func.value):
            return True
        callee = self.resolved(func)
        if callee is None or callee is func:
            return False
        callee_name = self.call_name(callee) or ""
        return (callee_name.startswith("keras.losses.") and callee_name.split(".")[-1][:1].isupper()) \
            or self.is_keras_model_build(callee)

    # Keras models --------------------------------------------------------------------------
    def is_keras_model_build(self, node: cst.CSTNode, _depth: int = 0) -> bool:
        """A call that builds or loads a Keras model: ``keras.Sequential``, ``keras.Model``,
        ``load_model``, ``clone_model``, ``keras.applications.ResNet50``, a ``keras.Model``
        subclass, or a local function that returns one of these."""
        if not isinstance(node, cst.Call):
            return False
        name = self.call_name(node)
        if name is not None:
            return name in KERAS_MODEL_BUILDERS or (
                name.startswith("keras.applications.") and name.split(".")[-1][:1].isupper())
        if isinstance(node.func, cst.Name):
            if node.func.value in self.keras_model_classes:
                return True
            return _depth < 2 and self._is_model_factory(node.func.value, _depth)
        if (isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Name)
                and node.func.value.value == "self"):  # self.model = self._build_model()
            return _depth < 2 and self._is_model_factory(node.func.attr.value, _depth, method=True)
        return False

    def _is_model_factory(self, name: str, _depth: int, method: bool = False) -> bool:
        definition = self._defs.get(name)
        if definition is None or (not method and self.lookup(name) is None):
            return False
        key = (id(definition), "factory")
        if key not in self._loop_facts:
            self._loop_facts[key] = False  # recursion guard
            scope = self.scopes[definition]
            returned = [n.value for n in self.walk(definition.body)
                        if isinstance(n, cst.Return) and n.value is not None]
            found = False
            for value in returned:
                if isinstance(value, cst.Name):
                    candidates = scope.assignments.get(value.value) or []
                    found = any(v is not None and self.is_keras_model_build(v, _depth + 1)
                                for v in candidates)
                else:
                    found = self.is_keras_model_build(value, _depth + 1)
                if found:
                    break
            self._loop_facts[key] = found
        return self._loop_facts[key]

    def overrides(self, expr: cst.BaseExpression, method: str) -> bool:
        """``expr`` holds an instance of a class of this module that defines ``method`` itself
        (a Keras subclass with its own ``predict`` is not Keras's ``predict``)."""
        value = self.resolved(expr)
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)):
            return False
        return any(isinstance(node, cst.ClassDef) and node.name.value == value.func.value
                   and any(isinstance(statement, cst.FunctionDef) and statement.name.value == method
                           for statement in node.body.body)
                   for node in self.scopes)

    def is_keras_model(self, expr: cst.BaseExpression) -> bool:
        """``expr`` holds a Keras model: the value last bound to it builds or loads one."""
        value = self.resolved(expr)
        return value is not None and self.is_keras_model_build(value)

    def clears_session(self, node: cst.CSTNode) -> bool:
        """``keras.backend.clear_session()`` (any spelling), or a local helper that calls it."""
        return self._calls_through_helpers(node, CLEAR_SESSION_CALLS, "clears")

    def loop_clears_session(self, loop: cst.CSTNode) -> bool:
        return self._loop_fact(loop, "clear_session", self.clears_session)

    def loops_running(self, node: cst.CSTNode) -> list[cst.For | cst.While]:
        """The open loops that run ``node`` once per iteration: the iterable of a ``for`` is
        evaluated once, before its loop starts."""
        loops = self.open_loops
        if loops and isinstance(loops[-1], cst.For):
            header = loops[-1].iter
            if node is header or any(node is n for n in self.walk(header)):
                return loops[:-1]
        return loops

    def static_trip_count(self, loop: cst.For | cst.While) -> int | None:
        """How many times ``loop`` runs when it is known statically: ``trip_count`` of its iterable,
        also through a name last bound to a list or tuple literal; None for ``while`` loops."""
        if not isinstance(loop, cst.For):
            return None
        iterable = loop.iter
        if isinstance(iterable, cst.Call) and dotted_name(iterable.func) in ("enumerate", "zip") \
                and iterable.args:
            counts = [self.static_trip_count(cst.For(target=loop.target, iter=a.value, body=loop.body))
                      for a in iterable.args]
            known = [c for c in counts if c is not None]
            return min(known) if known else None
        if isinstance(iterable, cst.Name):
            value = self.resolved(iterable)
            if isinstance(value, (cst.List, cst.Tuple)):
                return self.trip_count(value)
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) \
                and iterable.func.attr.value == "take" and len(iterable.args) == 1:
            return self.flow_int(iterable.args[0].value)  # dataset.take(1)
        if isinstance(iterable, cst.Call) and dotted_name(iterable.func) == "range" \
                and "range" not in self.aliases:
            return self._range_length(iterable, self.flow_int)
        return self.trip_count(iterable)

    def flow_int(self, expr: cst.BaseExpression, _depth: int = 0) -> int | None:
        """``int_value``, also through names rebound along the way (``k = 4`` ... ``k = 4``)."""
        value = self.int_value(expr)
        if value is not None or _depth > 4:
            return value
        if isinstance(expr, cst.Name):
            latest = self.latest_value(expr.value)
            if latest is not None and not latest[1] and latest[0] is not None:
                return self.flow_int(latest[0], _depth + 1)
        return None

    def names_changing_in(self, loop: cst.For | cst.While) -> set[str]:
        """Names the loop rebinds on each iteration: its target and every name assigned in it."""
        key = (id(loop), "changing")
        cached = self._walk_cache.get(key)  # type: ignore[arg-type]
        if cached is None:
            names: set[str] = set()
            targets: list[cst.BaseExpression] = [loop.target] if isinstance(loop, cst.For) else []
            for node in self.walk(loop):
                if isinstance(node, cst.Assign):
                    targets.extend(t.target for t in node.targets)
                elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor)):
                    targets.append(node.target)
                elif isinstance(node, cst.WithItem) and node.asname is not None:
                    targets.append(node.asname.name)
                elif isinstance(node, cst.NamedExpr):
                    targets.append(node.target)
            for target in targets:
                names.update(_target_names(target))
            cached = [cst.Name(n) for n in sorted(names)]
            self._walk_cache[key] = cached  # type: ignore[index]
        return {n.value for n in cached}  # type: ignore[union-attr]

    def loop_fits_model(self, loop: cst.CSTNode) -> bool:
        """The loop trains a Keras model with ``fit`` / ``fit_generator`` / ``train_on_batch``."""
        return self._loop_fact(loop, "fit", lambda call: isinstance(call.func, cst.Attribute)
                               and call.func.attr.value in ("fit", "fit_generator", "train_on_batch"))

    def consumed_by_tf(self, name: str) -> bool:
        """The list ``name`` is handed whole to a TensorFlow/Keras call in the current scope
        (``tf.concat(parts)``, ``tf.stack(parts)``): its elements are meant to be tensors."""
        frame = self.function
        for node in self.calls_in(frame.node if frame is not None else self.module):
            called = self.call_name(node)
            if called is not None and any(isinstance(a.value, cst.Name) and a.value.value == name
                                          for a in node.args):
                return True
        return False

    def is_kept(self, call: cst.Call, loop: cst.CSTNode) -> bool:
        """The value of ``call`` is stored in a container that outlives the iteration:
        ``models.append(build())``, or ``m = build()`` then ``models.append(m)`` / ``d[k] = m``."""
        names: set[str] = set()
        for node in self.walk(loop):
            if isinstance(node, cst.Assign) and node.value is call:
                names.update(n for t in node.targets for n in _target_names(t.target))

        def stored(expr: cst.BaseExpression) -> bool:  # the value itself, or inside a literal
            if expr is call or (isinstance(expr, cst.Name) and expr.value in names):
                return True
            if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
                return any(stored(e.value) for e in expr.elements)
            if isinstance(expr, cst.Dict):
                return any(isinstance(e, cst.DictElement) and stored(e.value) for e in expr.elements)
            return False

        for node in self.walk(loop):
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                    and node.func.attr.value in ("append", "insert", "extend", "add", "appendleft"):
                if any(stored(arg.value) for arg in node.args):
                    return True
            if isinstance(node, cst.Assign) and stored(node.value) \
                    and any(isinstance(t.target, cst.Subscript) for t in node.targets):
                return True
        return False

    def _returns_tensor_op(self, name: str) -> bool:
        """A local function whose every ``return`` is a TensorFlow op or Keras loss/op call
        (``def mse(p, y): return tf.reduce_mean(tf.square(p - y))``): its result is a tensor."""
        definition = self._defs.get(name)
        if definition is None or self.lookup(name) is None:
            return False
        returned = [n.value for n in self.walk(definition.body) if isinstance(n, cst.Return)]
        if not returned or any(v is None for v in returned):
            return False
        for value in returned:
            called = self.call_name(value) if isinstance(value, cst.Call) else None
            if called is None:
                return False
            if not (self.value_kind(value) is Kind.TENSOR or (
                    called.startswith(("keras.losses.", "keras.ops."))
                    and called.split(".")[-1][:1].islower())):
                return False
        return True
