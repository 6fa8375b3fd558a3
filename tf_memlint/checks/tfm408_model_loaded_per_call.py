"""TFM408 model-loaded-per-call: a saved model loaded inside a function that runs per request, per
iteration of its caller's loop, or per call of an entry point made to be called repeatedly."""

from __future__ import annotations

import dataclasses

import libcst as cst

from tf_memlint.evidence import ONCE_HERE, PER_REQUEST, SERVER, UNKNOWN, Repetition, evidence_at, script_rerun
from tf_memlint.facts.callers import CallerFacts
from tf_memlint.facts.functions import is_cache_decorator
from tf_memlint.facts.keras import KERAS_LOADERS, KERAS_MODEL_BUILDERS
from tf_memlint.facts.repetition import first_time, runs_fewer_than_counting_splitters, where_repeated
from tf_memlint.gate import ENTRY_CALLED, REPEATED, RERUN_SCRIPT, BoundAndUsed, Inside
from tf_memlint.rule import Rule, register
from tf_memlint.syntax import all_params, code_of, dotted_name

# Calls that read a whole model from disk (or a hub), as canonical names (Keras's: KERAS_LOADERS)...
SAVED_MODEL_LOADERS = frozenset({"tensorflow.saved_model.load"})
# ...and as imported (packages the canonical names do not cover): TF Hub, keras-ocr's pipeline
# objects, which download and build their detector/recognizer models when constructed.
IMPORTED_LOADERS = frozenset({"tensorflow_hub.load", "tensorflow_hub.KerasLayer",
                              "keras_ocr.pipeline.Pipeline", "keras_ocr.detection.Detector",
                              "keras_ocr.recognition.Recognizer"})
LOADER_TRIGGERS = frozenset(KERAS_LOADERS | SAVED_MODEL_LOADERS | {"~hub", "~keras_ocr"})
# Functions a program runs once: a load there is set-up, whatever they are given.
_RUN_ONCE = frozenset({"main", "run", "cli", "app", "setup", "load", "export", "convert"})
# Predicting on the loaded model: what a function that loads "its" model does with it.
_USES = frozenset({"predict", "predict_classes", "predict_proba", "predict_on_batch", "recognize",
                   "detect", "__call__", "signatures"})


def loader_name(context, node: cst.CSTNode) -> str | None:
    """The loader ``node`` calls, if it loads a model."""
    if not isinstance(node, cst.Call):
        return None
    name = context.call_name(node)
    if name in KERAS_LOADERS or name in SAVED_MODEL_LOADERS:
        return name
    imported = context.imported_name(node.func)
    if imported in IMPORTED_LOADERS:
        return imported
    if imported is not None and imported.startswith("keras_ocr.") \
            and imported.rsplit(".", 1)[-1] in ("Pipeline", "Detector", "Recognizer"):
        return imported
    return None


@register
class ModelLoadedPerCall(Rule):
    """A model loaded from disk or a hub inside a function that runs again and again.

    Bad::

        def embed(texts):
            encoder = hub.load("https://tfhub.dev/google/universal-sentence-encoder/4")
            return encoder(texts)

        for row in rows:
            vectors.append(embed([row.text]))      # loads the encoder for every row

    Good::

        encoder = hub.load("https://tfhub.dev/google/universal-sentence-encoder/4")

        def embed(texts):
            return encoder(texts)

    Each load reads the model, builds its functions and keeps memory that ``del`` does not give
    back: the time and memory grow with the calls. Reported where the load is, with the call
    that repeats it (a loop of this module, a request handler, ``predict``/``__call__``/``act``
    of a class); a load under a cache test (``if self.model is None:``) or in an
    ``@lru_cache`` function runs once.
    """

    code = "TFM408"
    name = "model-loaded-per-call"
    summary = "model loaded (load_model, saved_model.load, hub.load) in a function that runs per call"
    triggers = LOADER_TRIGGERS
    # the load in a loop, a handler or a def they run (where_repeated, repetition_of_def's call sites),
    # in an entry point or a def it runs (repetition_of_def's entry point), or in a def that loads
    # its own model and predicts with it on its parameters (_loads_its_own_model)
    structure = Inside(REPEATED, LOADER_TRIGGERS) | Inside(ENTRY_CALLED, LOADER_TRIGGERS) | Inside(
        RERUN_SCRIPT, LOADER_TRIGGERS) | BoundAndUsed(
        LOADER_TRIGGERS, lambda name: name not in _RUN_ONCE, lambda method: method in _USES or method.startswith("predict"))
    options = {
        "load_loop_min_iterations": (
            10, "loops known to run fewer times than this are not reported"),
    }

    def __init__(self, context, settings) -> None:
        super().__init__(context, settings)
        self._callers = context.facts_of(CallerFacts)
        self._sites: list[tuple[cst.Call, str, cst.FunctionDef, object]] = []
        self._places: set[int] = set()

    def visit_Call(self, node: cst.Call) -> None:
        context = self.context
        self._callers.observe(node)
        loader = loader_name(context, node)
        if loader is None or context.in_traced_function:
            return
        keras_model = loader in KERAS_MODEL_BUILDERS  # TFM403 reports these in a loop or handler
        loops = context.loops_running(node)
        if loops:
            if keras_model or runs_fewer_than_counting_splitters(context, loops, self.settings["load_loop_min_iterations"]) \
                    or context.keras.is_kept(node, loops[-1]) or _loads_what_the_pass_names(context, node, loops):
                return
            if first_time(self._places, loops[-1]):
                self.report(node, f"{code_of(node.func)}() loads a model on every iteration: each load "
                                  f"reads and builds it again and keeps memory; load it once before the loop")
            return
        frame = context.function
        if frame is None:
            rerun = script_rerun(context)
            if rerun is not None and id(node) not in context.functions.guarded(context.module):
                self.report(node, f"{code_of(node.func)}() loads a model in the top-level code of a Streamlit "
                                  f"script, which runs again on every interaction: each rerun loads it again "
                                  f"and keeps memory; load it in a function decorated with @st.cache_resource",
                            repetition=rerun)
            return
        if not isinstance(frame.node, cst.FunctionDef):
            return
        if where_repeated(context, node) is not None:
            if not keras_model and first_time(self._places, frame.node):
                self.report(node, f"{code_of(node.func)}() loads a model in {frame.node.name.value}(), "
                                  f"which handles every request: load it once at start-up and reuse it")
            return
        if id(node) in context.functions.guarded(frame.node) or _cached(frame.node):
            return  # loaded once, then kept
        self._sites.append((node, loader, frame.node, evidence_at(context, node, ONCE_HERE)))

    def leave_Module(self, node: cst.Module) -> None:
        context = self.context
        for call, loader, definition, evidence in self._sites:
            if self._one_model_per_pass(definition):
                continue  # a different model per call: one model per iteration of the caller (TFM403)
            repetition = self._callers.repetition_of_def(definition, self._is_model_value)
            in_server = evidence.lifetime == SERVER
            if repetition is None and (in_server or not self._callers.called_by_script(definition)):
                # Its callers are elsewhere (a library's function, also where its CLI's main()
                # calls it); where the script's own body calls it and no call repeats (`train()`
                # once under __main__), it runs once. A web app's module runs again per request
                # (a Streamlit script reruns its calls).
                repetition = _loads_its_own_model(context, call, definition, in_server)
            if repetition is None or not first_time(self._places, definition):
                continue
            name = definition.name.value
            message = (f"{code_of(call.func)}() loads a model on every call of {name}(): each load reads "
                       f"and builds it again and keeps memory; load it once (at start-up, or in "
                       f"__init__) and reuse it")
            self.findings.append((call, message, dataclasses.replace(evidence, repetition=repetition)))

    def _one_model_per_pass(self, definition: cst.FunctionDef) -> bool:
        """Every call of ``definition`` here loads a different model, chosen by its loop
        (``keras.loads_a_model_per_pass``)."""
        context = self.context
        sites = context.functions.call_sites(definition)
        return bool(sites) and all(context.keras.loads_a_model_per_pass(definition, site, loops)
                                   for site, loops, _ in sites)

    def _is_model_value(self, value: cst.BaseExpression) -> bool:
        return self.context.keras.is_model_build(value) or loader_name(self.context, value) is not None


def _cached(definition: cst.FunctionDef) -> bool:
    return any(is_cache_decorator(dotted_name(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator))
               for d in definition.decorators)


def _loads_its_own_model(context, call: cst.Call, definition: cst.FunctionDef, in_server: bool) -> Repetition | None:
    """A function that loads a fixed model (its path does not come from the parameters) and
    predicts with it on what it is given: a library's predict-style function, which pays the load
    on each call. No caller of this module repeats it, so the repetition is inferred; in a web
    app's module (``in_server``) what predicts on its input serves a request, once per request."""
    params = {p.name.value for p in all_params(definition.params)} - {"self", "cls"}
    if not params or definition.name.value in _RUN_ONCE or _mentions(context, call, params):
        return None
    bound = _bound_name(context, definition, call)
    if bound is None:
        return None
    for node in context.nodes_in(definition.body):
        if not isinstance(node, cst.Call) or not node.args:
            continue
        func = node.func
        on_model = (isinstance(func, cst.Name) and func.value == bound) or (
            isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == bound
            and (func.attr.value in _USES or func.attr.value.startswith("predict")))
        if on_model and context.functions.names_feeding(definition, node) & params:
            if in_server:
                return Repetition(PER_REQUEST, basis=f"{definition.name.value}() loads its model and predicts "
                                                     f"on the request's input")
            return Repetition(UNKNOWN, basis=f"{definition.name.value}() loads its model and predicts on "
                                             f"what it is given, on every call", known=False)
    return None


def _bound_name(context, definition: cst.FunctionDef, call: cst.Call) -> str | None:
    """``model`` in ``model = load_model(...)`` (the call's own statement) inside ``definition``."""
    for node in context.nodes_in(definition.body):
        if isinstance(node, cst.Assign) and node.value is call and len(node.targets) == 1 \
                and isinstance(node.targets[0].target, cst.Name):
            return node.targets[0].target.value
    return None


def _mentions(context, node: cst.CSTNode, names: set[str]) -> bool:
    return any(isinstance(n, cst.Name) and n.value in names for n in context.nodes_in(node))


def _loads_what_the_pass_names(context, load: cst.Call, loops: list) -> bool:
    """The load's path is what its one loop changes (``for name in saved_models: model =
    tf.saved_model.load(os.path.join(root, name))``): a different model each pass, nothing to load
    once before the loop; under a second loop the same models are loaded again. The in-loop form
    of ``keras.one_model_per_pass``."""
    path = load.args[0].value if load.args and load.args[0].keyword is None else None
    return path is not None and context.keras.changes_each_pass(path, loops)
