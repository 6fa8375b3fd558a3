"""Repeated scopes beyond ``for`` and ``while``: functions that run once per event.

A web request handler, a gRPC servicer method or a Keras callback's per-batch hook runs again
and again in a process that lives on: what it builds, loads or opens on every call grows like
the body of a loop. ``repetition(def)`` says how often a def runs, as the unit a message names:

    "request"  Flask ``@app.route`` / ``@bp.route``, FastAPI/Starlette ``@app.get|post|...``
               (a path string as first argument), ``get``/``post``/... methods of Flask-RESTful,
               Django, DRF, Tornado and Starlette views, gRPC servicer methods, Django function
               views (``def view(request, ...)`` in a module importing django)
    "batch"    Keras ``Callback.on_*batch_begin/end``
    "epoch"    Keras ``Callback.on_epoch_begin/end`` (rules decide what matters per epoch:
               a single ``predict`` per epoch is monitoring, not a finding)
    "trial"    a hyper-parameter search's objective, handed to Optuna's ``study.optimize``,
               hyperopt's ``fmin``, hyperas's ``optim.minimize(model=...)`` or scikit-optimize's
               ``gp_minimize``: it runs once per trial, in one process, and builds its model there
    "step"     ``step`` of a Gym / Gymnasium environment (``_step`` of a TF-Agents
               ``PyEnvironment``): the agent's trainer calls it once per environment step,
               millions of times, from a loop in the RL library

Nothing is known about anything else: None.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from tf_memlint.scopes import AT_POINT
from tf_memlint.syntax import DICT_VIEWS, all_params, dotted_name

if TYPE_CHECKING:
    from tf_memlint.context import TFContext

REQUEST, BATCH, EPOCH, TRIAL, STEP = "request", "batch", "epoch", "trial", "step"
ROUTE_DECORATORS = frozenset({"route", "get", "post", "put", "delete", "patch", "api_route",
                              "websocket", "head", "options"})
HTTP_METHODS = frozenset({"get", "post", "put", "delete", "patch", "head"})
# Base classes (by their last name) whose get/post/... methods handle one request each.
VIEW_BASES = frozenset({"Resource", "MethodView", "View", "APIView", "GenericAPIView", "ViewSet",
                        "ModelViewSet", "RequestHandler", "HTTPEndpoint", "TemplateView"})
KERAS_CALLBACK = "keras.callbacks.Callback"
BATCH_HOOKS = frozenset({"on_batch_begin", "on_batch_end", "on_train_batch_begin", "on_train_batch_end",
                         "on_test_batch_begin", "on_test_batch_end", "on_predict_batch_begin",
                         "on_predict_batch_end"})
EPOCH_HOOKS = frozenset({"on_epoch_begin", "on_epoch_end"})
# An environment's step method, by the package its class comes from (the qualified name of a
# direct base) and the method that package's trainers call per step.
ENVIRONMENT_STEP_METHODS = {"gym.": "step", "gymnasium.": "step", "tf_agents.environments.": "_step"}
# What a base is called in those packages (``gym.Env``, ``CartPoleEnv``, ``gym.Wrapper``,
# ``PyEnvironment``): the gate's stdlib twin reads the last name, which it can without imports.
ENVIRONMENT_BASE_SUFFIXES = ("Env", "Environment", "Wrapper")
# Gate words: a module with none of these has no repeated scope (see facts/repetition.py).
EVENT_WORDS = ROUTE_DECORATORS | BATCH_HOOKS | EPOCH_HOOKS | {"Servicer", "request"} | VIEW_BASES


def _base_names(cls: cst.ClassDef) -> list[str]:
    return [(dotted_name(base.value) or "").rsplit(".", 1)[-1] for base in cls.bases]


def is_environment_step(name: str, base_names: list[str], qualified_bases: list[str | None]) -> bool:
    """``name`` is the per-step method of a class with these direct bases (last names, and
    qualified names where imports resolve them): an environment of Gym, Gymnasium or TF-Agents."""
    return any(base.endswith(ENVIRONMENT_BASE_SUFFIXES) and qualified is not None and any(
        qualified.startswith(package) and name == method for package, method in ENVIRONMENT_STEP_METHODS.items())
        for base, qualified in zip(base_names, qualified_bases))


def repetition(context: TFContext, node: cst.CSTNode, cls: cst.ClassDef | None) -> str | None:
    """How often ``node`` (a def) runs: REQUEST, BATCH, EPOCH, TRIAL, STEP, or None when not known
    to repeat."""
    if not isinstance(node, cst.FunctionDef):
        return None
    for decorator in node.decorators:
        call = decorator.decorator
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) \
                and call.func.attr.value in ROUTE_DECORATORS and context.qualified_name(call.func) is None:
            first = call.args[0].value if call.args and call.args[0].keyword is None else None
            if isinstance(first, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
                return REQUEST
    name = node.name.value
    objectives = context.facts_of(SearchObjectives)
    if name in (objectives.names if cls is None else objectives.methods):
        return TRIAL
    if cls is not None:
        bases = _base_names(cls)
        if name in HTTP_METHODS and any(b in VIEW_BASES or b.endswith("Handler") for b in bases):
            return REQUEST
        if any(b.endswith("Servicer") for b in bases) and not name.startswith("_"):
            return REQUEST
        if is_environment_step(name, bases, [context.imported_name(base.value) for base in cls.bases]):
            return STEP
        if name in BATCH_HOOKS or name in EPOCH_HOOKS:
            if any(context.qualified_name(base.value) == KERAS_CALLBACK for base in cls.bases) \
                    or "Callback" in bases:
                return BATCH if name in BATCH_HOOKS else EPOCH
        return None
    params = [p.name.value for p in all_params(node.params)]
    if params and params[0] == "request" and any(m.split(".")[0] == "django" for m in context.aliases.values()):
        return REQUEST
    return None


# Loops a person drives: over the files someone uploads to a notebook (google.colab's
# ``files.upload()``), or in a widget's event callback (``uploader.observe(on_upload)``). They
# run a handful of times at human pace, so a per-call cost there is invisible (TFM404; seen in
# Laurence Moroney's course notebooks, both the dlaicourse and the deeplearning-ai editions).
UPLOADS = frozenset({"google.colab.files.upload"})
WIDGET_EVENT_METHODS = frozenset({"observe", "on_click", "on_submit"})


def user_paced(context: TFContext, loops: list) -> bool:
    """A loop in ``loops`` iterates over uploaded files, or runs inside a widget event callback."""
    callbacks = context.facts_of(WidgetCallbacks).names
    if any(isinstance(frame.node, cst.FunctionDef) and frame.node.name.value in callbacks for frame in context.frames):
        return True
    for loop in loops:
        if isinstance(loop, cst.For) and _is_upload(context, loop.iter):
            return True
    return False


def _is_upload(context: TFContext, expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in DICT_VIEWS:
        expr = expr.func.value  # uploaded.keys()
    if isinstance(expr, cst.Name):
        expr = context.value_of(expr, AT_POINT)
    return isinstance(expr, cst.Call) and context.imported_name(expr.func) in UPLOADS


class WidgetCallbacks:
    """Names of the functions this module hands to a widget as event callbacks (built once per
    module, on first use: ``context.facts_of(WidgetCallbacks)``)."""

    def __init__(self, context: TFContext) -> None:
        self.names = frozenset(
            call.args[0].value.value for call in context.calls_in(context.module)  # type: ignore[attr-defined]
            if isinstance(call.func, cst.Attribute) and call.func.attr.value in WIDGET_EVENT_METHODS
            and call.args and isinstance(call.args[0].value, cst.Name))


# The calls of a search library that run an objective once per trial: the call's last name ->
# (the package it must come from, the keyword naming the objective, whether the first positional
# argument is it). hyperas's `optim.minimize` takes it only as `model=`: a TF optimizer's
# `minimize(loss)` is no search.
SEARCH_RUNNERS = {
    "optimize": ("optuna", "func", True),
    "fmin": ("hyperopt", "fn", True),
    "minimize": ("hyperas", "model", False),
    "gp_minimize": ("skopt", "func", True),
    "forest_minimize": ("skopt", "func", True),
    "gbrt_minimize": ("skopt", "func", True),
}


def handed_objective(runner: str, position: int | None, keyword: str | None) -> bool:
    """The argument at ``position`` (or named ``keyword``) of a call named ``runner`` is a search's
    objective (SEARCH_RUNNERS)."""
    _, objective_keyword, positional = SEARCH_RUNNERS[runner]
    return keyword == objective_keyword if keyword is not None else positional and position == 0


class SearchObjectives:
    """Names of the functions (``names``) and of this module's methods handed as ``self.name``
    (``methods``) that a search library's runner calls once per trial (SEARCH_RUNNERS), built
    once per module on first use: ``context.facts_of(SearchObjectives)``."""

    def __init__(self, context: TFContext) -> None:
        names: set[str] = set()
        methods: set[str] = set()
        packages = {module.split(".")[0] for module in context.aliases.values()}
        runners = {name for name, (package, _, _) in SEARCH_RUNNERS.items() if package in packages}
        if runners:
            # Every call, in defs too: `study.optimize(objective)` is often in main().
            for call in context.nodes_in(context.module, into_functions=True):
                if type(call) is not cst.Call:
                    continue
                func = call.func
                runner = func.attr.value if isinstance(func, cst.Attribute) else \
                    func.value if isinstance(func, cst.Name) else None
                if runner not in runners:
                    continue
                for position, arg in enumerate(call.args):
                    if not handed_objective(runner, position, arg.keyword.value if arg.keyword else None):
                        continue
                    if isinstance(arg.value, cst.Name):
                        names.add(arg.value.value)
                    elif isinstance(arg.value, cst.Attribute) and isinstance(arg.value.value, cst.Name) \
                            and arg.value.value.value == "self":
                        methods.add(arg.value.attr.value)
        self.names = frozenset(names)
        self.methods = frozenset(methods)
