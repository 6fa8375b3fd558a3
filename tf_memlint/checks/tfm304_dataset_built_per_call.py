"""TFM304 dataset-built-per-call: a ``tf.data`` pipeline built from in-memory values inside a
function that runs once per request, per item of its caller's loop, or per call of an entry
point made to be called repeatedly (``predict``/``encode``/``__call__`` of a class)."""

from __future__ import annotations

import dataclasses

import libcst as cst

from tf_memlint.evidence import ONCE_HERE, PER_REQUEST, UNKNOWN, Repetition, evidence_at
from tf_memlint.facts.callers import ENTRY_POINTS, CallerFacts, name_only, takes_input
from tf_memlint.facts.repetition import first_time
from tf_memlint.gate import InCalledDef
from tf_memlint.rule import Rule, register
from tf_memlint.syntax import code_of

# Dataset sources that wrap values the caller already holds: built for one input, they cost a
# pipeline (and, for from_generator, a registered Python function) per call.
DATASET_SOURCES = frozenset({
    "tensorflow.data.Dataset.from_generator", "tensorflow.data.Dataset.from_tensor_slices",
    "tensorflow.data.Dataset.from_tensors", "tensorflow.contrib.data.Dataset.from_generator",
    "tensorflow.contrib.data.Dataset.from_tensor_slices", "tensorflow.contrib.data.Dataset.from_tensors"})
# Defs that build the input of a whole training or evaluation run: called per epoch or per fold
# at most, a pipeline each is the design, not a cost per input.
_INPUT_BUILDER_WORDS = ("dataset", "input_fn", "loader", "load_data", "pipeline", "get_data", "make_data",
                        "build_data", "prepare", "train", "fit", "evaluate")


@register
class DatasetBuiltPerCall(Rule):
    """A ``tf.data.Dataset`` built from in-memory values in a function that runs per input.

    Bad::

        class Scorer:
            def __init__(self):
                self.model = tf.keras.models.load_model("scorer.keras")

            def predict(self, features):
                ds = tf.data.Dataset.from_tensor_slices(features[None]).batch(1)
                return self.model(next(iter(ds)))

    Good::

        class Scorer:
            def predict(self, features):
                return self.model(tf.convert_to_tensor(features[None]))

    Each call builds the pipeline's ops and an iterator (``from_generator`` also registers its
    generator with the runtime): milliseconds and some memory per call, paid for one input.
    Reported where the pipeline is built, with the call that repeats it (a loop of this module
    or a request handler calling the function; ``predict``/``encode``/``__call__``... of a
    class, graded medium: the caller is not in sight).
    """

    code = "TFM304"
    name = "dataset-built-per-call"
    summary = "tf.data.Dataset.from_generator/from_tensor_slices built in a function that runs per input"
    triggers = DATASET_SOURCES
    # the pipeline is built in a def (not __init__, not in its loops) that may run per input; a
    # def named as a run's input builder only with from_generator, which the project may call per input
    structure = InCalledDef(DATASET_SOURCES, lambda name: name != "__init__" and not _builds_run_input(name)) \
        | InCalledDef({s for s in DATASET_SOURCES if s.endswith(".from_generator")}, lambda name: name != "__init__")
    reaches_across_modules = True  # its reach path: _entry_point_caller (the project's method index)

    def __init__(self, context, settings) -> None:
        super().__init__(context, settings)
        self._callers = context.facts_of(CallerFacts)
        self._sites: list[tuple[cst.Call, cst.FunctionDef, object]] = []
        self._places: set[int] = set()

    def visit_Call(self, node: cst.Call) -> None:
        context = self.context
        self._callers.observe(node)
        if context.call_name(node) not in DATASET_SOURCES or context.in_traced_function:
            return
        if context.loops_running(node):
            return  # a pipeline per iteration of a loop here is per file or per fold: the design
        frame = context.function
        if frame is None or not isinstance(frame.node, cst.FunctionDef) or frame.node.name.value == "__init__":
            return
        if id(node) in context.functions.guarded(frame.node) \
                or (_fed_whole_to_model(context, frame.node, node) and not _from_generator(context, node)):
            return
        builder = _builds_run_input(frame.node.name.value)
        if builder and not (_from_generator(context, node) and context.project):
            return  # a run's input, built per epoch at most, unless the project calls it per input
        owner = context.functions.class_of_def(frame.node)
        self._sites.append((node, frame.node, owner.name.value if owner is not None else None, builder,
                            evidence_at(context, node, ONCE_HERE)))

    def leave_Module(self, node: cst.Module) -> None:
        keras = self.context.keras
        for call, definition, owner, builder, evidence in self._sites:
            # A method called from another module's entry point (the command's method index).
            through = _entry_point_caller(self.context, owner, definition.name.value)
            if builder:
                # Named as a run's input builder: only a caller that runs per input says otherwise.
                repetition = through
            else:
                repetition = self._callers.repetition_of_def(definition, keras.is_model_build) or through
            if repetition is None and _from_generator(self.context, call) and _entry_point_name(definition.name.value) \
                    and takes_input(definition):
                # A library's predict(items) wrapping what it is given in from_generator: each call
                # registers another generator with the runtime, whoever calls it (rasa#5529, alfabet#14).
                repetition = Repetition(UNKNOWN, basis=f"{definition.name.value}() is called once per input by "
                                                       f"its users; each call registers another generator",
                                        known=False)
            if repetition is None or not first_time(self._places, definition):
                continue
            name = definition.name.value
            if repetition.kind == PER_REQUEST and _entry_point_name(name) \
                    and "called at" not in repetition.basis:
                # An entry point says it is made to be called per input; who calls it is not seen.
                # A pipeline over values costs milliseconds a call, which a caller out of sight may
                # pay once per model call or once per file: only a registered generator (kept by
                # the runtime) is a cost the name alone makes worth reading.
                repetition = dataclasses.replace(repetition, known=False) if _from_generator(self.context, call) \
                    else name_only(repetition, "its callers")
            message = (f"{code_of(call.func)}() builds a new dataset on every call of {name}(): each build "
                       f"costs the pipeline's ops and an iterator for one input; convert the input to a "
                       f"tensor and call the model on it, or build the dataset once over all inputs")
            self.findings.append((call, message, dataclasses.replace(evidence, repetition=repetition)))


def _entry_point_caller(context, owner: str | None, method: str) -> Repetition | None:
    """``owner.method`` builds a generator-fed pipeline and the project calls it from an entry point
    made to be called once per input (``predict_data.as_tf_dataset()`` in a model's ``predict``,
    rasa#5529), or from a loop: the project's method index (project.py), command only. The
    caller's own callers are out of sight: graded medium."""
    for caller, filename, line, looped in context.functions.project_callers(owner, method) if owner else ():
        name = caller.rpartition(".")[2]
        if _entry_point_name(name) or looped:
            why = "in a loop of" if looped else "from the entry point"
            return Repetition(UNKNOWN, basis=f"called {why} {caller}() at {filename}:{line}; each call registers "
                                             f"another generator", known=False)
    return None


def _entry_point_name(name: str) -> bool:
    return name == "__call__" or name.lstrip("_") in ENTRY_POINTS


def _from_generator(context, call: cst.Call) -> bool:
    return (context.call_name(call) or "").endswith(".from_generator")


def _builds_run_input(name: str) -> bool:
    lowered = name.lower()
    return any(word in lowered for word in _INPUT_BUILDER_WORDS)


_WHOLE_INPUT_METHODS = frozenset({"predict", "fit", "evaluate", "predict_on_batch"})


def _fed_whole_to_model(context, definition: cst.FunctionDef, call: cst.Call) -> bool:
    """The def hands the dataset it builds to ``model.predict(ds)`` (fit, evaluate): one pipeline
    for all the data it is given, whose cost is paid once per batch of work, not per input."""
    names = set()
    for node in context.nodes_in(definition.body):
        if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) \
                and (node.value is call or any(n is call for n in context.nodes_in(node.value))):
            names.add(node.targets[0].target.value)
    if not names:
        return False
    for node in context.nodes_in(definition.body):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and node.func.attr.value in _WHOLE_INPUT_METHODS and node.args \
                and any(isinstance(a.value, cst.Name) and a.value.value in names for a in node.args):
            return True
    return False
