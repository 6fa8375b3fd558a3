"""Keras models, eager training loops, gradient tapes and eager tensors (TFM4xx).

Names resolve at this point of the walk: a notebook that rebinds ``model`` from a scikit-learn
estimator to a Keras model is judged at each use.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Iterable, Iterator, Optional, Tuple

import libcst as cst

from tf_memlint.facts.base import RETURNS_MODEL, any_call
from tf_memlint.names import canonical
from tf_memlint.scopes import AT_POINT
from tf_memlint.syntax import STORING_METHODS, Kind, all_params, code_of, dotted_name, is_self_attribute, target_names

if TYPE_CHECKING:
    from tf_memlint.context import TFContext

GRADIENT_TAPE = "tensorflow.GradientTape"
TAPE_NAME = re.compile(r"^(g?tape|tape_\w+|\w+_tape)$").search
KERAS_BASE_CLASSES = frozenset({"keras.Model", "keras.layers.Layer", "keras.Sequential"})
KERAS_MODEL_BASES = frozenset({"keras.Model", "keras.Sequential"})
KERAS_SEQUENCE_BASES = frozenset({"keras.utils.Sequence", "keras.utils.data_utils.Sequence", "keras.utils.PyDataset"})
KERAS_MODEL_BUILDERS = frozenset({
    "keras.Sequential", "keras.Model", "keras.models.load_model", "keras.saving.load_model",
    "keras.models.clone_model", "keras.models.model_from_json", "keras.models.model_from_yaml",
    "keras.models.model_from_config", "keras.experimental.load_from_saved_model",
})
# The builders that load a saved model (TFM408's loads, and what a caller's path may choose).
KERAS_LOADERS = frozenset({"keras.models.load_model", "keras.saving.load_model",
                           "keras.experimental.load_from_saved_model", "keras.models.model_from_json"})
KERAS_APPLICATIONS = "keras.applications"  # keras.applications.ResNet50(...) builds a model
# Gate triggers of ``is_model_build``: a builder, an application, a subclass of a model base
# (a local factory returning one of these names one of them too).
MODEL_BUILD_TRIGGERS = KERAS_MODEL_BUILDERS | KERAS_MODEL_BASES | {KERAS_APPLICATIONS}
CLEAR_SESSION_CALLS = frozenset({"keras.backend.clear_session", "keras.utils.clear_session"})
FIT_METHODS = frozenset({"fit", "fit_generator", "train_on_batch"})
# One optimisation step (``is_training_call``): these methods, ``minimize`` on a non-SciPy
# optimizer, anything named like a train step, or a local function doing one of these.
TRAINING_STEP_METHODS = frozenset({"apply_gradients", "train_on_batch", "assign_sub"})
MINIMIZE = "minimize"
TRAIN_STEP_WORD = "train_step"
DISTRIBUTED_RUN = "run"  # strategy.run(step): a step if the function it is given is one
TRAINING_TRIGGERS = frozenset({"." + m for m in TRAINING_STEP_METHODS | {MINIMIZE}} | {"~" + TRAIN_STEP_WORD})

# Which Keras ``predict`` is: TF2's tf.keras and Keras 3 run eagerly and build a dataset and a
# predict function on every call (TFM404's measured cost). Keras 2.3 and older over TF1, and
# tf.keras in TF1 graph mode, build one predict function per model and reuse it: a loop of
# ``predict`` calls pays no per-call set-up there. Seen on real code: bert4keras (keras<=2.3.1),
# Flask apps calling ``model._make_predict_function()``, keon/deep-q-learning and keras-contrib
# (``Adam(lr=...)``, ``keras.layers.merge``), the first edition of fchollet's notebooks.
# A module shows TF2 Keras by importing it through TensorFlow (these import paths)...
TF2_KERAS_IMPORTS = ("tensorflow.keras", "tensorflow.python.keras", "tf_keras")
# ...or by Keras 3's own modules and companions (standalone ``import keras`` is either era)...
KERAS3_MODULES = ("keras.ops", "keras.random", "keras_hub", "keras_nlp", "keras_cv", "keras_core")
# ...or by TF2 APIs called beside standalone Keras; and shows graph mode by these calls.
TF2_CALLS = frozenset({"tensorflow.GradientTape", "tensorflow.function"})
GRAPH_MODE_KERAS_METHODS = frozenset({"_make_predict_function", "get_session", "set_session"})
TF1_ONLY_CALLS = frozenset({"tensorflow.Session", "tensorflow.InteractiveSession", "tensorflow.placeholder",
                            "tensorflow.get_default_graph"})  # as imported: no compat.v1 in the path
EAGER_OFF_CALLS = frozenset({"tensorflow.disable_eager_execution", "tensorflow.disable_v2_behavior"})


# A call as the era tests read it: its name as imported, its canonical name, and the attribute
# it calls (``K.get_session()``: "get_session"). facts on a LibCST tree and project.py on a stdlib
# tree each spell their calls this way and ask the same two questions.
CallNames = Tuple[Optional[str], Optional[str], Optional[str]]


def tf2_keras(imported_modules: Iterable[str], calls: Iterable[CallNames]) -> bool:
    """The module's Keras is TF2's: it imports tf.keras or Keras 3 (its own modules or companions),
    calls ``tf.keras.<...>``, or calls a TF2 API beside standalone Keras."""
    if any(m == p or m.startswith(p + ".") for m in imported_modules for p in TF2_KERAS_IMPORTS + KERAS3_MODULES):
        return True
    return any((imported or "").startswith("tensorflow.keras.")  # tf.keras.Sequential(...)
               or name in TF2_CALLS or (name or "").startswith(KERAS3_MODULES) for imported, name, _ in calls)


def graph_mode_keras(calls: Iterable[CallNames]) -> bool:
    """The module's own graph-mode markers. Its own only: a repository of tutorials mixes TF1 and
    TF2 files, and the flake8 plugin, which sees one file, must decide as the command does. A
    ``tf.compat.v1.Session()`` in TF2 code leaves Keras eager: only TF1's own spellings, eager
    turned off, or Keras handed a session count."""
    return any(attribute in GRAPH_MODE_KERAS_METHODS or imported in TF1_ONLY_CALLS or name in EAGER_OFF_CALLS
               for imported, name, attribute in calls)


# A functional model over the tensors of a model that exists (grad-CAM, a feature extractor,
# ``Model(model.inputs, layer.output)``) adds no weights: building one per item keeps a small
# wrapper, not a model. Read off the text of its inputs argument, so the stdlib-AST twin
# (project.py) asks the same question of ``ast.unparse``. An object's own ``self.inputs`` is not
# another model's: builders keep the ``Input`` layer they just made there
# (``self.inputs = layers.Input(...)``, then ``keras.Model(inputs=self.inputs, ...)``).
_OTHER_MODELS_INPUTS = re.compile(r"^\[?\s*(?!self\.inputs?\s*,?\s*\]?$)[\w.]+\.inputs?\s*,?\s*\]?$")


def is_view_inputs(name: str | None, inputs_text: str | None) -> bool:
    return name == "keras.Model" and inputs_text is not None and bool(_OTHER_MODELS_INPUTS.match(inputs_text))


class KerasFacts:
    def __init__(self, context: TFContext, classes: list[cst.ClassDef], calls: list) -> None:
        self.context = context
        self._calls = calls
        self._eager_predict: bool | None = None
        self._era_elsewhere: bool | None = None  # era_is_elsewhere, once
        self.layer_classes = context.subclasses_of(classes, KERAS_BASE_CLASSES)  # layers and models
        self.model_classes = context.subclasses_of(classes, KERAS_MODEL_BASES)
        self.sequence_classes = context.subclasses_of(classes, KERAS_SEQUENCE_BASES)  # yield batches
        self._facts: dict[tuple[int, str], bool] = {}
        self._changing: dict[int, set[str]] = {}

    def _any_call(self, node: cst.CSTNode, fact: str, test) -> bool:
        return any_call(self._facts, self.context, node, fact, test)

    # Eager training loops ------------------------------------------------------------------
    def is_gradient_tape(self, expr: cst.BaseExpression) -> bool:
        context = self.context
        value = context.value_of(expr, AT_POINT)
        if value is not None and context.call_name(value) == GRADIENT_TAPE:
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
            if method in TRAINING_STEP_METHODS or TRAIN_STEP_WORD in method:
                return True
            if method == MINIMIZE:
                return self.context.call_name(node) is None \
                    and dotted_name(func.value) not in ("optimize", "scipy.optimize")
            if method == DISTRIBUTED_RUN and isinstance(func.value, (cst.Name, cst.Attribute)) \
                    and node.args and isinstance(node.args[0].value, cst.Name):
                return self._is_training_function(node.args[0].value.value, _depth)  # strategy.run(step)
            return False
        if isinstance(func, cst.Name):
            return TRAIN_STEP_WORD in func.value or self._is_training_function(func.value, _depth)
        return False

    def _is_training_function(self, name: str, _depth: int) -> bool:
        definition = self.context.functions.definition(name)
        if definition is None or _depth > 2:
            return False
        return self._any_call(definition.body, "training", lambda call: self.is_training_call(call, _depth + 1))

    def loop_is_training(self, loop: cst.CSTNode) -> bool:
        """The loop body takes optimisation steps (see ``is_training_call``)."""
        return self._any_call(loop, "training", self.is_training_call)

    def loop_fits_model(self, loop: cst.CSTNode) -> bool:
        """The loop trains a Keras model with ``fit`` / ``fit_generator`` / ``train_on_batch``."""
        return self._any_call(loop, "fit", lambda call: isinstance(call.func, cst.Attribute)
                              and call.func.attr.value in FIT_METHODS)

    def is_eager_tensor(self, expr: cst.BaseExpression, _depth: int = 0) -> bool:
        """``expr`` is proven to be a tensor (or a structure of tensors) in eager code: a TF op,
        a Keras loss/op/metric result, ``tape.gradient``, the result of a ``tf.function`` or of
        calling a Keras model. ``float(x)``, ``x.numpy()``, ``x.item()`` are not."""
        context = self.context
        if _depth > 6:
            return False
        if isinstance(expr, cst.Name):
            found = context.binding(expr.value, AT_POINT)
            if found is None or found.value is None:
                return False
            if found.unpacked:  # `loss, logits = train_step(x)`: every output of a tf.function is a tensor
                return isinstance(found.value, cst.Call) and context.tracing.is_traced_callable(found.value.func)
            return self.is_eager_tensor(found.value, _depth + 1)
        if isinstance(expr, cst.Subscript):
            return self.is_eager_tensor(expr.value, _depth + 1)
        if isinstance(expr, cst.BinaryOperation):
            return self.is_eager_tensor(expr.left, _depth + 1) or self.is_eager_tensor(expr.right, _depth + 1)
        if not isinstance(expr, cst.Call):
            return False
        name = context.call_name(expr)
        if name is not None:
            path = name.split(".")
            if name.startswith(("keras.losses.", "keras.ops.", "keras.activations.")) \
                    and path[-1][:1].islower():
                return True
            return context.value_kind(expr) is Kind.TENSOR
        func = expr.func
        if isinstance(func, cst.Attribute):
            if func.attr.value == "gradient":
                return self.is_gradient_tape(func.value)
            if func.attr.value == "result":
                metric = context.value_of(func.value, AT_POINT)
                return metric is not None and (context.call_name(metric) or "").startswith("keras.metrics.")
            return False
        if context.tracing.is_traced_callable(func):
            return True
        if isinstance(func, cst.Name) and self._returns_tensor_op(func.value):
            return True
        callee = context.value_of(func, AT_POINT)
        if callee is None or callee is func:
            return False
        callee_name = context.call_name(callee) or ""
        return (callee_name.startswith("keras.losses.") and callee_name.split(".")[-1][:1].isupper()) \
            or self.is_model_build(callee)

    def _returns_tensor_op(self, name: str) -> bool:
        """A local function whose every ``return`` is a TensorFlow op or Keras loss/op call
        (``def mse(p, y): return tf.reduce_mean(tf.square(p - y))``): its result is a tensor."""
        context = self.context
        definition = context.functions.definition(name)
        if definition is None or context.binding(name) is None:
            return False
        returned = [n.value for n in context.nodes_in(definition.body) if isinstance(n, cst.Return)]
        if not returned or any(v is None for v in returned):
            return False
        for value in returned:
            called = context.call_name(value) if isinstance(value, cst.Call) else None
            if called is None:
                return False
            if not (context.value_kind(value) is Kind.TENSOR or (  # type: ignore[arg-type]
                    called.startswith(("keras.losses.", "keras.ops."))
                    and called.split(".")[-1][:1].islower())):
                return False
        return True

    def consumed_by_tf(self, name: str) -> bool:
        """The list ``name`` is handed whole to a TensorFlow/Keras call in the current scope
        (``tf.concat(parts)``, ``tf.stack(parts)``): its elements are meant to be tensors."""
        context = self.context
        frame = context.function
        for node in context.calls_in(frame.node if frame is not None else context.module):
            called = context.call_name(node)
            if called is not None and any(isinstance(a.value, cst.Name) and a.value.value == name
                                          for a in node.args):
                return True
        return False

    # Keras models --------------------------------------------------------------------------
    def is_view_model(self, call: cst.Call) -> bool:
        """``keras.Model(model.inputs, ...)``: a view over another model's tensors (no weights)."""
        inputs = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "inputs"),
                      call.args[0].value if call.args and call.args[0].keyword is None else None)
        return inputs is not None and is_view_inputs(self.context.call_name(call), code_of(inputs))

    def is_model_build(self, node: cst.CSTNode, _depth: int = 0) -> bool:
        """A call that builds or loads a Keras model: ``keras.Sequential``, ``keras.Model``,
        ``load_model``, ``clone_model``, ``keras.applications.ResNet50``, a ``keras.Model``
        subclass, a local function that returns one of these, or (in the command) a factory of
        another module of the project."""
        if isinstance(node, cst.IfExp):
            # `load_model(path) if evaluating else self._build()`: a model either way
            return self.is_model_build(node.body, _depth) and self.is_model_build(node.orelse, _depth)
        if not isinstance(node, cst.Call):
            return False
        func = node.func
        name = self.context.call_name(node)
        if name is not None:
            local = name in KERAS_MODEL_BUILDERS or (
                name.startswith(KERAS_APPLICATIONS + ".") and name.split(".")[-1][:1].isupper())
        elif isinstance(func, cst.Name):
            local = func.value in self.model_classes or _depth < 2 and self._is_model_factory(func.value, _depth)
        elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
            return _depth < 2 and self._is_model_factory(func.attr.value, _depth, method=True)  # self._build_model()
        else:
            local = False
        return local or self._project_factory(node)

    def _project_factory(self, call: cst.Call) -> bool:
        """``build_model()`` / ``models.build_model()`` imported from a module of the linted
        project that returns a Keras model it builds (the command's tables; never in the plugin)."""
        if not getattr(self.context, "project", None):
            return False
        found = self.context.functions.project_summary(call)
        return bool(found) and RETURNS_MODEL in found

    def _is_model_factory(self, name: str, _depth: int, method: bool = False) -> bool:
        context = self.context
        definition = context.functions.definition(name)
        if definition is None or (not method and context.binding(name) is None):
            return False
        key = (id(definition), "factory")
        if key not in self._facts:
            self._facts[key] = False  # recursion guard
            scope = context.scopes[definition]
            returned = [n.value for n in context.nodes_in(definition.body)
                        if isinstance(n, cst.Return) and n.value is not None]
            found = False
            for value in returned:
                if isinstance(value, cst.Name):
                    candidates = scope.assignments.get(value.value) or []
                    found = any(v is not None and self.is_model_build(v, _depth + 1) for v in candidates)
                else:
                    found = self.is_model_build(value, _depth + 1)
                if found:
                    break
            self._facts[key] = found
        return self._facts[key]

    @property
    def predict_builds_per_call(self) -> bool:
        """This module's Keras is TF2's (tf.keras on TF2, Keras 3): each ``predict`` call builds its
        own dataset and function. False in TF1 graph mode (TF1's own ``tf.Session``/``tf.placeholder``,
        eager turned off), where Keras hands its session around (``_make_predict_function()``,
        ``K.get_session()``), and for standalone ``keras`` with nothing that dates it to TF2."""
        if self._eager_predict is None:
            # A module that imports no Keras and predicts on a model another module of the project
            # builds: the era is the builder's, and the tables name only TF2 Keras's models.
            self._eager_predict = self._tf2_keras() and not self._graph_mode_keras() or self.era_is_elsewhere and any(
                isinstance(entry, dict) and RETURNS_MODEL in entry
                for entry in (getattr(self.context, "project", None) or {}).values())
        return self._eager_predict

    @property
    def era_is_elsewhere(self) -> bool:
        """This module imports no Keras and shows no graph-mode marker: the era of a ``predict``
        it reaches through another module's helper is that module's (project.py decides it)."""
        if self._era_elsewhere is None:
            self._era_elsewhere = not any((canonical(m) or "").split(".")[0] == "keras"
                                          for m in self.context.aliases.values()) and not self._graph_mode_keras()
        return self._era_elsewhere

    @property
    def shows_graph_mode(self) -> bool:
        """The module's own graph-mode markers (``graph_mode_keras``)."""
        return self._graph_mode_keras()

    def _tf2_keras(self) -> bool:
        return tf2_keras(self.context.aliases.values(), self._call_names())

    def _graph_mode_keras(self) -> bool:
        return graph_mode_keras(self._call_names())

    def _call_names(self) -> Iterator[CallNames]:
        context = self.context
        for call, _ in self._calls:
            func = call.func
            yield (context.imported_name(func), context.call_name(call),
                   func.attr.value if isinstance(func, cst.Attribute) else None)

    def is_model(self, expr: cst.BaseExpression) -> bool:
        """``expr`` holds a Keras model: the value bound to it at this point builds or loads one."""
        context = self.context
        value = context.value_of(expr, AT_POINT)
        if isinstance(value, cst.Name) and is_self_attribute(expr) and context.enclosing_class is not None:
            return context.functions.passed_to_constructor(context.enclosing_class, value)  # Agent(model)
        if value is None and isinstance(expr, cst.Name) and context.function is not None \
                and isinstance(context.function.node, cst.FunctionDef):
            return context.functions.parameter_given_models(context.function.node, expr.value)  # f(build())
        return value is not None and self.is_model_build(value)

    def load_chosen_by_caller(self, definition: cst.FunctionDef, load: cst.Call) -> set[str]:
        """The parameters of ``definition`` the path of ``load`` (a model load in it) comes from
        (``load_model(modelfile)``, ``load_model(folder + "/model.h5")``): its caller chooses which
        model. Empty when the path is the def's own."""
        params = {p.name.value for p in all_params(definition.params)} - {"self", "cls"}
        return self.context.functions.names_feeding(definition, load) & params

    def one_model_per_pass(self, definition: cst.FunctionDef, load: cst.Call, site: cst.CSTNode,
                           loops: list) -> bool:
        """A call ``site`` of ``definition``, run by ``loops``, loads a different model on each pass:
        the load reads a path the caller chooses (``load_chosen_by_caller``) and the site passes for
        it what its one loop changes (``for folder in results: evaluate(folder + "/model.h5")``).
        Under a second loop (per chunk, per epoch) the same models are loaded again."""
        if not isinstance(site, cst.Call):
            return False
        for param in self.load_chosen_by_caller(definition, load):
            arg = self.context.functions.argument_at(definition, param, site)
            if arg is not None and self.changes_each_pass(arg, loops):
                return True
        return False

    def changes_each_pass(self, expr: cst.BaseExpression, loops: list) -> bool:
        """``expr`` reads a name that the one loop of ``loops`` rebinds on each pass (a different
        value every pass); under a second loop (per chunk, per epoch) the same values come again."""
        if len(loops) != 1:
            return False
        changing = self.names_changing_in(loops[0])
        return any(isinstance(n, cst.Name) and n.value in changing for n in [expr, *self.context.nodes_in(expr)])

    def loads_a_model_per_pass(self, definition: cst.FunctionDef, site: cst.CSTNode, loops: list) -> bool:
        """``site``, a call of ``definition`` run by ``loops``, loads a different model on each pass
        through one of the def's Keras loads (``one_model_per_pass``): its other loads, alternatives
        to that one (`if mode == "h5": ... else: model_from_json(...)`), are the same choice. What
        TFM403 reports (a model per pass) and TFM408 leaves (it is not the same model reloaded)."""
        context = self.context
        return any(self.one_model_per_pass(definition, load, site, loops)
                   for load in context.calls_in(definition) if context.call_name(load) in KERAS_LOADERS)

    def overrides(self, expr: cst.BaseExpression, method: str) -> bool:
        """``expr`` holds an instance of a class of this module that defines ``method`` itself
        (a Keras subclass with its own ``predict`` is not Keras's ``predict``)."""
        value = self.context.value_of(expr, AT_POINT)
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)):
            return False
        return any(isinstance(node, cst.ClassDef) and node.name.value == value.func.value
                   and any(isinstance(statement, cst.FunctionDef) and statement.name.value == method
                           for statement in node.body.body)
                   for node in self.context.scopes)

    def clears_session(self, node: cst.CSTNode) -> bool:
        """``keras.backend.clear_session()`` (any spelling), or a local helper that calls it."""
        return self.context.functions.calls_through_helpers(node, CLEAR_SESSION_CALLS, "clears")

    def loop_clears_session(self, loop: cst.CSTNode) -> bool:
        return self._any_call(loop, "clear_session", self.clears_session)

    def is_kept(self, call: cst.Call, loop: cst.CSTNode) -> bool:
        """The value of ``call`` is stored in a container that outlives the iteration:
        ``models.append(build())``, or ``m = build()`` then ``models.append(m)`` / ``d[k] = m``."""
        nodes = self.context.nodes_in(loop)
        names: set[str] = set()
        for node in nodes:
            if isinstance(node, cst.Assign) and node.value is call:
                names.update(n for t in node.targets for n in target_names(t.target))

        def stored(expr: cst.BaseExpression) -> bool:  # the value itself, or inside a literal
            if expr is call or (isinstance(expr, cst.Name) and expr.value in names):
                return True
            if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
                return any(stored(e.value) for e in expr.elements)
            if isinstance(expr, cst.Dict):
                return any(isinstance(e, cst.DictElement) and stored(e.value) for e in expr.elements)
            return False

        for node in nodes:
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                    and node.func.attr.value in STORING_METHODS:
                if any(stored(arg.value) for arg in node.args):
                    return True
            if isinstance(node, cst.Assign) and stored(node.value) \
                    and any(isinstance(t.target, cst.Subscript) for t in node.targets):
                return True
        return False

    def same_model_loops(self, receiver: cst.BaseExpression, loops: list) -> list:
        """The loops around a call on ``receiver`` that do not (re)bind the model: it is the same
        model on every one of their iterations."""
        value = self.context.value_of(receiver, AT_POINT)
        if value is None:
            if isinstance(receiver, cst.Name) and self.is_model(receiver):  # a parameter its callers fill
                return [loop for loop in loops if receiver.value not in self.names_changing_in(loop)]
            return []
        return [loop for loop in loops if not any(value is n for n in self.context.nodes_in(loop))]

    def names_changing_in(self, loop: cst.For | cst.While) -> set[str]:
        """Names the loop rebinds on each iteration: its target and every name assigned in it."""
        cached = self._changing.get(id(loop))
        if cached is None:
            targets: list[cst.BaseExpression] = [loop.target] if isinstance(loop, cst.For) else []
            for node in self.context.nodes_in(loop):
                if isinstance(node, cst.Assign):
                    targets.extend(t.target for t in node.targets)
                elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor)):
                    targets.append(node.target)
                elif isinstance(node, cst.WithItem) and node.asname is not None:
                    targets.append(node.asname.name)
                elif isinstance(node, cst.NamedExpr):
                    targets.append(node.target)
            cached = {name for target in targets for name in target_names(target)}
            self._changing[id(loop)] = cached
        return cached
