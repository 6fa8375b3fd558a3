"""TF1 sessions and the graphs they run (TFM106's graph mode, TFM2xx).

Names resolve at this point of the walk: ``sess = ort.InferenceSession(...)`` rebound later to a
``tf.Session`` is judged by the binding in force where it is used.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import libcst as cst

from tf_memlint.facts.base import OPS, any_call
from tf_memlint.facts.keras import CLEAR_SESSION_CALLS, EAGER_OFF_CALLS
from tf_memlint.scopes import AT_POINT
from tf_memlint.syntax import Kind, code_of, is_variable_listing, makes_list

if TYPE_CHECKING:
    from tf_memlint.context import TFContext
    from tf_memlint.scopes import Scope

# An InteractiveSession installs itself as the default session: even under ``with`` it outlives its
# block (TFM201; functions.py's SESSION effect).
INTERACTIVE_SESSION = "tensorflow.InteractiveSession"
SESSION_CLASSES = frozenset({"tensorflow.Session", INTERACTIVE_SESSION})
# Calls that hand back a session the code may `run` (not for TFM201: these are not created here).
SESSION_FACTORIES = frozenset({
    "tensorflow.train.MonitoredTrainingSession", "tensorflow.train.MonitoredSession",
    "tensorflow.train.SingularMonitoredSession", "tensorflow.get_default_session",
    "keras.backend.get_session",
})
# `sv.managed_session()` (tf.train.Supervisor) hands back a session whatever `sv` is.
MANAGED_SESSION = "managed_session"
# The keywords that make `x.run(...)` / `t.eval(...)` a session run whatever `x` is.
FEED_KEYWORDS = frozenset({"feed_dict", "session"})
# How a list of ops to fetch is filled before the run (SessionFacts.ops_filled_into_fetch).
LIST_FILLING_METHODS = frozenset({"append", "extend"})
SESSION_NAME = re.compile(r"^_*(sess|session)$|_(sess|session)$|^(sess|session)_").search
# sess.run(...) / sess.partial_run(...) on a session; op.run(feed_dict=...) / t.eval(session=s).
SESSION_RUN_METHODS = frozenset({"run", "partial_run"})
FEED_RUN_METHODS = frozenset({"run", "eval"})
# K.get_value(t) / K.batch_get_value(ts) run Keras's session (K.eval is an ``.eval`` already).
KERAS_EVALUATOR_METHODS = frozenset({"get_value", "batch_get_value"})
SESSION_RUN_TRIGGERS = frozenset("." + method for method in SESSION_RUN_METHODS | FEED_RUN_METHODS
                                 | KERAS_EVALUATOR_METHODS)
# Calls that say a file builds TF1 graphs (graph mode, not eager): constants there are graph nodes.
TF1_GRAPH_CALLS = frozenset(SESSION_CLASSES | EAGER_OFF_CALLS | {
    "tensorflow.placeholder", "tensorflow.train.MonitoredTrainingSession",
})
ENABLE_EAGER = "tensorflow.enable_eager_execution"
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
    "viterbi_decode",  # tf.contrib.crf.viterbi_decode decodes NumPy scores in NumPy (crf_decode is the op)
})
_VARIABLE_CLASSES = frozenset({"tensorflow.Variable", "tensorflow.get_variable"})
OPTIMIZER_GRAPH_METHODS = frozenset({"minimize", "compute_gradients", "apply_gradients"})
# A graph variable's methods that add an assign op each time they are called (TF1 graph mode).
VARIABLE_ASSIGN_METHODS = frozenset({"assign", "assign_add", "assign_sub"})


def assigns_a_variable(call: cst.Call) -> bool:
    """``v.assign(x)``, ``v.assign_add(x)``, ``v.assign_sub(x)``: a variable's assign method,
    whatever ``v`` is known to be."""
    return isinstance(call.func, cst.Attribute) and call.func.attr.value in VARIABLE_ASSIGN_METHODS


# Only calls of names under this one add operations (``op_creating_name``; TFM202's gate too)...
OP_NAMESPACE = "tensorflow"
# ...and Keras's backend functions where Keras runs over a TF1 graph (multi-backend Keras <= 2.3,
# tf.keras in graph mode): ``K.ctc_decode(y)`` adds decoder ops, ``K.get_value(t)`` runs them in
# Keras's session. These backend functions add none: they read or set Keras's state.
KERAS_BACKEND = "keras.backend."
KERAS_EVALUATORS = frozenset({"keras.backend.get_value", "keras.backend.eval", "keras.backend.batch_get_value"})
KERAS_BACKEND_NON_OPS = frozenset({
    "get_value", "batch_get_value", "set_value", "batch_set_value", "eval", "function", "clear_session",
    "get_session", "set_session", "learning_phase", "set_learning_phase", "image_data_format",
    "set_image_data_format", "epsilon", "set_epsilon", "floatx", "set_floatx", "int_shape", "ndim", "dtype",
    "is_keras_tensor", "is_tensor", "count_params", "backend", "get_uid", "reset_uids", "name_scope",
    "manual_variable_initialization", "is_sparse", "is_placeholder", "get_graph", "cast_to_floatx",
})
GRAPH_CLASS = "tensorflow.Graph"
GRAPH_RESETS = frozenset({"tensorflow.reset_default_graph"}) | CLEAR_SESSION_CALLS


def op_creating_name(name: str) -> bool:
    """A call of the canonical TF name ``name`` adds operations to the graph (project.py asks too;
    a Keras backend function does in graph mode only, which the asker decides)."""
    if name.startswith(KERAS_BACKEND):
        last = name[len(KERAS_BACKEND):]
        return "." not in last and last[:1].islower() and last not in KERAS_BACKEND_NON_OPS
    if not name.startswith(OP_NAMESPACE + "."):
        return False
    path = name[len(OP_NAMESPACE) + 1:].split(".")
    last = path[-1]
    if path[0] in NON_OP_NAMESPACES or ".".join(path[:2]) in NON_OP_NAMESPACES:
        return name in OP_EXCEPTIONS
    if last[:1].isupper():
        return last in OP_CLASSES
    return last not in NON_OP_FUNCTIONS


GRAPH_KERAS, UNDATED_KERAS = "graph mode", "undated"
_UNSET = object()


class SessionFacts:
    def __init__(self, context: TFContext, calls: list[tuple[cst.Call, Scope]]) -> None:
        self.context = context
        self._loops: dict[tuple[int, str], bool] = {}
        names = {context.call_name(call) for call, _scope in calls}
        # The file builds TF1 graphs (sessions, placeholders, eager turned off) and never turns
        # eager execution on: its module-level TF calls add nodes to a graph.
        self.builds_tf1_graph = bool(names & TF1_GRAPH_CALLS) and ENABLE_EAGER not in names
        self._keras_era: object = _UNSET

    @property
    def keras_backend_era(self) -> str | None:
        if self._keras_era is _UNSET:
            self._keras_era = self._keras_backend_era()
        return self._keras_era

    def _keras_backend_era(self) -> str | None:
        """How this module's Keras backend runs: GRAPH_KERAS when the module shows graph mode (TF1's
        own calls, eager turned off, a session handed to Keras), UNDATED_KERAS for standalone
        ``keras`` with nothing that dates it (graph mode up to Keras 2.3, eager from 2.4), None
        for TF2's Keras (eager: a backend call computes a value and adds nothing)."""
        keras = self.context.keras
        if self.builds_tf1_graph or keras.shows_graph_mode:
            return GRAPH_KERAS
        return None if keras.predict_builds_per_call or keras.era_is_elsewhere else UNDATED_KERAS

    def is_session_creation(self, node: cst.CSTNode) -> bool:
        """``tf.Session(...)`` / ``tf.compat.v1.InteractiveSession(...)``, any import style."""
        return self.context.call_name(node) in SESSION_CLASSES

    def is_session(self, expr: cst.BaseExpression, _depth: int = 0) -> bool:
        """A TF1 session: created here, bound by ``with ... as sess``, a monitored session, or a
        name/attribute spelled like one (``sess``, ``self.session``, ``mon_sess``)."""
        if _depth > 4:
            return False
        if isinstance(expr, cst.Call):
            name = self.context.call_name(expr)
            if name in SESSION_CLASSES or name in SESSION_FACTORIES:
                return True
            func = expr.func
            if name is None and isinstance(func, (cst.Name, cst.Attribute)) and SESSION_NAME(
                    func.value if isinstance(func, cst.Name) else func.attr.value):
                return True  # a project's own accessor: model.enquire_session(), get_session()
            return (isinstance(func, cst.Attribute) and func.attr.value in ("as_default", MANAGED_SESSION)
                    and (func.attr.value == MANAGED_SESSION or self.is_session(func.value, _depth + 1)))
        if isinstance(expr, cst.BooleanOperation):  # `sess = sess or tf.get_default_session()`
            return self.is_session(expr.left, _depth + 1) or self.is_session(expr.right, _depth + 1)
        if isinstance(expr, cst.Name) or (isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name)
                                          and expr.value.value == "self"):
            value = self.context.value_of(expr, AT_POINT)
            if value is not None:  # known: `sess = ort.InferenceSession(...)` is not a TF session
                return self.is_session(value, _depth + 1)
            return bool(SESSION_NAME(expr.value if isinstance(expr, cst.Name) else expr.attr.value))
        return False

    def is_session_run(self, node: cst.CSTNode) -> bool:
        """``sess.run(...)``, ``sess.partial_run(...)``, ``op.run(feed_dict=...)``, ``t.eval(session=s)``,
        and ``t.eval()`` in the default session when ``t`` is known to be a graph tensor
        (``tf.argmax(y, 1).eval()``: ``model.eval()`` of other libraries is not)."""
        if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute):
            return False
        method = node.func.attr.value
        if method in SESSION_RUN_METHODS and self.is_session(node.func.value):
            return True
        if self.context.call_name(node) in KERAS_EVALUATORS and self.keras_backend_era is not None:
            return True  # K.get_value(t): Keras's session runs t
        if method == "eval" and self.is_graph_tensor(node.func.value):
            return True
        return method in FEED_RUN_METHODS and any(
            a.keyword is not None and a.keyword.value in FEED_KEYWORDS for a in node.args)

    def loop_runs_session(self, loop: cst.CSTNode) -> bool:
        """The loop body (nested loops included, nested defs not) runs a TF1 session."""
        return any_call(self._loops, self.context, loop, "session", self.is_session_run)

    def creates_graph_ops(self, node: cst.CSTNode) -> bool:
        """A call that adds operations to the default TF1 graph each time it runs: any TensorFlow
        op, ``tf.Variable``, initializers, ``tf.train.Saver()``, an optimizer's ``minimize``."""
        if not isinstance(node, cst.Call):
            return False
        context = self.context
        name = context.call_name(node)
        if name is not None:
            return op_creating_name(name) and (not name.startswith(KERAS_BACKEND) or self.keras_backend_era is not None)
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in OPTIMIZER_GRAPH_METHODS:
            optimizer = context.value_of(func.value, AT_POINT)
            built_by = (context.call_name(optimizer) or "") if optimizer is not None else ""
            return built_by.startswith("tensorflow.train.") and built_by.endswith("Optimizer")
        if assigns_a_variable(node):
            return self.is_graph_variable(func.value)
        return False

    def _made_as_variable(self, expr: cst.BaseExpression) -> bool:
        """``tf.Variable(...)`` / ``tf.get_variable(...)``, or a name bound once to one."""
        value = self.context.value_of(expr) if isinstance(expr, cst.Name) else expr
        return isinstance(value, cst.Call) and self.context.call_name(value) in _VARIABLE_CLASSES

    def is_graph_variable(self, expr: cst.BaseExpression) -> bool:
        """``expr`` is a graph variable: bound to ``tf.Variable``/``tf.get_variable``, or the target
        of a loop over the graph's variables (``for var in tf.trainable_variables():``)."""
        if self._made_as_variable(expr):
            return True
        if not isinstance(expr, cst.Name):
            return False
        for loop in reversed(self.context.open_loops):
            if isinstance(loop, cst.For) and isinstance(loop.target, cst.Name) and loop.target.value == expr.value:
                listed = self.context.value_of(loop.iter) if isinstance(loop.iter, cst.Name) else loop.iter
                return isinstance(listed, cst.Call) and is_variable_listing(self.context.call_name(listed))
        return False

    def is_graph_tensor(self, expr: cst.BaseExpression) -> bool:
        """``expr`` is known to be a graph tensor or variable: a TF op's result, a ``tf.Variable``,
        an arithmetic of those (names through their one binding)."""
        context = self.context
        if context.value_kind(expr) is Kind.TENSOR or self._made_as_variable(expr):
            return True
        return isinstance(expr, cst.Name) and self._unpacked_graph_tensor(expr)

    def _unpacked_graph_tensor(self, name: cst.Name) -> bool:
        """``epoch, labels, images = input_pipeline(32)`` where this module's ``input_pipeline``
        returns ``epoch, labels, images`` and its ``epoch`` is a ``tf.Variable`` or a TF op's
        result: the TF1 layout that builds the graph in one function and runs it in another."""
        context = self.context
        found = context.binding(name.value, AT_POINT)
        if found is None or not found.unpacked or not isinstance(found.value, cst.Call):
            return False
        call = found.value
        frame = context.function
        where = frame.node if frame is not None else None
        index = next((position for node in context.nodes_in(where or context.module)
                      if isinstance(node, cst.Assign) and node.value is call and len(node.targets) == 1
                      for position in [_position(node.targets[0].target, name.value)] if position is not None), None)
        resolved = context.functions.resolve(call, where) if index is not None else None
        if resolved is None:
            return False
        definition = resolved[1]
        scope = context.scopes.get(definition)
        for statement in context.nodes_in(definition.body):
            if not (isinstance(statement, cst.Return) and isinstance(statement.value, cst.Tuple)):
                continue
            elements = statement.value.elements
            if index >= len(elements) or any(isinstance(e, cst.StarredElement) for e in elements):
                return False
            element = elements[index].value
            if isinstance(element, cst.Name) and scope is not None:
                element = scope.only_value(element.value)
            if isinstance(element, cst.Call) and (context.call_name(element) in _VARIABLE_CLASSES
                                                  or self.creates_graph_ops(element)):
                return True
            return False
        return False

    def ops_in_fetch(self, run: cst.Call, follow_calls: bool = True) -> list[tuple[cst.CSTNode, str]]:
        """Expressions in the fetches of session run call ``run`` that build new ops each time they
        are evaluated: a TF op call (``sess.run(tf.argmax(y, 1))``), an operator or a slice applied
        to a graph tensor (``sess.run(-product)``, ``sess.run(t[0])``), and, when
        ``follow_calls``, a call of a function of the project that adds ops
        (``sess.run(model.get_cost())``). Each with the words a message names it by."""
        return self._ops_in(fetches_of(run), follow_calls)

    def ops_filled_into_fetch(self, run: cst.Call, function: cst.CSTNode,
                              follow_calls: bool = True) -> list[tuple[cst.CSTNode, str]]:
        """Ops built into a list of ``function`` (a def) that the session run ``run`` then fetches:
        ``restores = []``, ``restores.append(v.assign(d))`` (in a loop over the variables, or
        ``.extend``), ``sess.run(restores)``: every call of the function builds them again."""
        scope = self.context.scopes.get(function)
        if scope is None:
            return []
        found: list[tuple[cst.CSTNode, str]] = []
        for fetch in fetches_of(run):
            if isinstance(fetch, (cst.List, cst.Tuple)):  # sess.run([restores, loss])
                names = [e.value for e in fetch.elements if isinstance(e.value, cst.Name)]
            else:
                names = [fetch] if isinstance(fetch, cst.Name) else []
            for name in names:
                values = scope.all_values(name.value) if name.value not in scope.declared_global else None
                if not values or not all(makes_list(value) for value in values):
                    continue
                filled = [call.args[0].value for call in self.context.calls_in(function)
                          if isinstance(call.func, cst.Attribute) and call.func.attr.value in LIST_FILLING_METHODS
                          and isinstance(call.func.value, cst.Name) and call.func.value.value == name.value
                          and call.args]
                found.extend((op, f"{what} (through the list {name.value})")
                             for op, what in self._ops_in(filled, follow_calls))
        return found

    def _ops_in(self, fetches: list[cst.BaseExpression], follow_calls: bool) -> list[tuple[cst.CSTNode, str]]:
        found: list[tuple[cst.CSTNode, str]] = []
        stack = list(reversed(fetches))
        while stack:
            expr = stack.pop()
            if isinstance(expr, cst.Call):
                if self.creates_graph_ops(expr) or assigns_a_variable(expr) and expr.args:
                    # What a session fetches is a graph element: `v.assign(x)` there is a
                    # variable's, a new assign op on every run.
                    found.append((expr, code_of(expr.func) + "()"))
                elif follow_calls and self.context.functions.reach(expr, OPS) is not None:
                    found.append((expr, code_of(expr.func) + "()"))
                elif isinstance(expr.func, cst.Name) and expr.func.value in ("list", "tuple", "dict"):
                    stack.extend(reversed([a.value for a in expr.args]))
            elif isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
                stack.extend(reversed([e.value for e in expr.elements]))
            elif isinstance(expr, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
                stack.append(expr.elt)  # [tf.assign(t, e) for t, e in zip(targets, sources)]
            elif isinstance(expr, cst.Dict):
                stack.extend(reversed([e.value for e in expr.elements if isinstance(e, cst.DictElement)]))
            elif isinstance(expr, cst.Attribute) and expr.attr.value in ("op", "values", "indices"):
                stack.append(expr.value)  # tf.assign_add(step, 1).op
            elif isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, _TENSOR_UNARY) \
                    and self.is_graph_tensor(expr.expression):
                found.append((expr, code_of(expr)))
            elif isinstance(expr, cst.BinaryOperation) and (
                    self.is_graph_tensor(expr.left) or self.is_graph_tensor(expr.right)):
                found.append((expr, code_of(expr)))
            elif isinstance(expr, cst.Subscript) and self.is_graph_tensor(expr.value):
                found.append((expr, code_of(expr)))
        return found

    # A new graph: what keeps the ops a place adds from piling up in one default graph ---------
    def resets_graph(self, node: cst.CSTNode) -> bool:
        """``tf.reset_default_graph()``, ``clear_session()``, or a local helper that calls one."""
        return self.context.functions.calls_through_helpers(node, GRAPH_RESETS, "resets")

    def loop_resets_graph(self, loop: cst.CSTNode) -> bool:
        """The loop starts a new default graph each iteration (``tf.reset_default_graph()``,
        ``keras.backend.clear_session()``)."""
        return any_call(self._loops, self.context, loop, "reset", self.resets_graph)

    def scope_starts_new_graph(self, scope: cst.CSTNode) -> bool:
        """``scope`` (a handler, a function) creates a ``tf.Graph()`` or resets the default graph:
        the ops it adds do not pile up across its calls. (A loop that only creates a graph still
        adds to the default one outside its ``with`` blocks: ``loop_resets_graph``.)"""
        context = self.context
        return any(context.call_name(call) == GRAPH_CLASS or self.resets_graph(call)
                   for call in context.calls_in(scope))

    def makes_fresh_graph(self, item: cst.BaseExpression, loop: cst.CSTNode) -> bool:
        """A ``with`` item in ``loop`` that makes a graph created in the loop the default:
        ``tf.Graph().as_default()``, ``g.as_default()`` or ``tf.Session(graph=g)`` with
        ``g = tf.Graph()`` in the loop (the binding in force at this point of the walk)."""
        graph = self.graph_installed_by(item)
        if isinstance(graph, cst.Name):
            value = self.context.value_of(graph, AT_POINT)
            if value is None or not any(value is n for n in self.context.nodes_in(loop)):
                return False
            graph = value
        return graph is not None and self.context.call_name(graph) == GRAPH_CLASS

    def def_makes_fresh_graph(self, item: cst.BaseExpression, definition: cst.CSTNode) -> bool:
        """A ``with`` item in the def ``definition`` that makes a new graph the default:
        ``tf.Graph().as_default()``, ``g.as_default()`` or ``tf.Session(graph=g)`` where some
        binding of ``g`` in the def is ``tf.Graph()`` (a summary is not made at a point of the
        walk: every binding counts)."""
        graph = self.graph_installed_by(item)
        if graph is None:
            return False
        values = [graph]
        if isinstance(graph, cst.Name):
            scope = self.context.scopes.get(definition)
            values = [v for v in (scope.assignments.get(graph.value, []) if scope is not None else [])
                      if v is not None]
        return any(self.context.call_name(v) == GRAPH_CLASS for v in values)

    def graph_installed_by(self, item: cst.BaseExpression) -> cst.BaseExpression | None:
        """The graph a ``with`` item makes the default, as written: the receiver of
        ``.as_default()``, or the ``graph=`` argument of a session created there (entering a
        session enters its graph too)."""
        if isinstance(item, cst.Call) and isinstance(item.func, cst.Attribute) \
                and item.func.attr.value == "as_default":
            return item.func.value
        if self.is_session_creation(item):
            return next((a.value for a in item.args  # type: ignore[attr-defined]
                         if a.keyword is not None and a.keyword.value == "graph"), None)
        return None


# Initializers run once by design: `sess.run(tf.global_variables_initializer())` outside a loop is
# set-up, not growth.
INITIALIZER_SUFFIXES = ("initializer", "initialize_all_variables", "initialize_variables",
                        "initialize_local_variables")
# Operators that TensorFlow overloads on a tensor: each use builds a new op.
_TENSOR_UNARY = (cst.Minus, cst.BitInvert)


def is_initializer(name: str | None) -> bool:
    return bool(name) and name.rsplit(".", 1)[-1].endswith(INITIALIZER_SUFFIXES)  # type: ignore[union-attr]


def fetches_of(run: cst.Call) -> list[cst.BaseExpression]:
    """What a session run call evaluates: ``sess.run(fetches, ...)`` (``fetches=``),
    ``sess.partial_run(handle, fetches)``, and the receiver of ``t.eval(...)`` / ``op.run(...)``."""
    func = run.func
    if not isinstance(func, cst.Attribute):
        return []
    method = func.attr.value
    if method == "eval" or (method == "run" and not run.args) or (
            method == "run" and all(a.keyword is not None and a.keyword.value in FEED_KEYWORDS
                                    for a in run.args)):
        return [func.value]
    keyword = next((a.value for a in run.args if a.keyword is not None and a.keyword.value == "fetches"), None)
    if keyword is not None:
        return [keyword]
    positional = [a.value for a in run.args if a.keyword is None and not a.star]
    index = 1 if method == "partial_run" else 0
    return [positional[index]] if len(positional) > index else []


def _position(target: cst.BaseExpression, name: str) -> int | None:
    """Where ``name`` stands in an unpacking target ``a, b, c`` (no starred element before it)."""
    if not isinstance(target, (cst.Tuple, cst.List)):
        return None
    for position, element in enumerate(target.elements):
        if isinstance(element, cst.StarredElement):
            return None
        if isinstance(element.value, cst.Name) and element.value.value == name:
            return position
    return None
