"""TFM409 summary-writer-per-call: a TensorBoard summary writer opened on every iteration of a
loop, or on every call of a function that a loop or a handler repeats, or bound to ``self`` by a
method that opens a new one each call without closing the last."""

from __future__ import annotations

import dataclasses

import libcst as cst

from tf_memlint.evidence import COUNT, GROWS, ONCE, ONCE_HERE, SMALL, UNKNOWN, Repetition, evidence_at, repetition_at
from tf_memlint.facts.callers import ENTRY_POINTS, CallerFacts
from tf_memlint.facts.repetition import first_time, runs_fewer_than
from tf_memlint.gate import IN_DEF_OR_LOOP, REPEATED, SELF_BOUND, Inside
from tf_memlint.rule import Rule, register
from tf_memlint.syntax import all_params, code_of, is_self_attribute, target_names

# TF1 writers start a thread and hold their events file open until close(): one left behind per
# call is a thread and a file handle for the rest of the process.
TF1_WRITERS = frozenset({"tensorflow.summary.FileWriter", "tensorflow.train.SummaryWriter"})
# TF2 writers close when dropped, but each one starts a new events file in the log directory.
TF2_WRITERS = frozenset({"tensorflow.summary.create_file_writer", "tensorflow.contrib.summary.create_file_writer"})
WRITERS = TF1_WRITERS | TF2_WRITERS
MIN_ITERATIONS = 10  # a writer per mode or per run of a short sweep is set-up, not a leak
FEW_WRITERS = 100  # known counts below this leave a bounded handful of threads: graded low
# Methods a training loop or a user calls again and again on the same object (tflearn's
# Trainer.fit, an Evaluator's evaluate() per checkpoint), beside the per-input entry points.
REPEATED_METHODS = frozenset({"fit", "evaluate", "eval", "__call__"})


@register
class SummaryWriterPerCall(Rule):
    """A summary writer opened again and again.

    Bad::

        class Trainer:
            def fit(self, feed):
                self.writer = tf.compat.v1.summary.FileWriter(self.logdir, self.graph)
                ...                                    # never closed: a thread and a file per fit()

    Good::

        class Trainer:
            def __init__(self, logdir, graph):
                self.writer = tf.compat.v1.summary.FileWriter(logdir, graph)

            def fit(self, feed):
                ...                                    # reuses self.writer

    A TF1 ``FileWriter`` starts a thread and keeps its events file open until ``close()``; a
    TF2 ``create_file_writer`` closes when dropped but starts a new events file each time.
    """

    code = "TFM409"
    name = "summary-writer-per-call"
    summary = "summary FileWriter / create_file_writer opened per iteration or per call"
    triggers = WRITERS
    # a writer in a loop or in a def the loops or handlers run (repetition_of_def follows the calls
    # REPEATED follows), or a TF1 writer kept on self in a def (_rebound: reported whoever calls it)
    structure = Inside(REPEATED, WRITERS) | Inside(IN_DEF_OR_LOOP, {SELF_BOUND + name for name in TF1_WRITERS})

    def __init__(self, context, settings) -> None:
        super().__init__(context, settings)
        self._callers = context.facts_of(CallerFacts)
        self._sites: list[tuple[cst.Call, str, cst.FunctionDef, object]] = []
        self._rebound: list[tuple[cst.Call, str, cst.FunctionDef, object]] = []
        self._places: set[int] = set()
        self._with_items: set[int] = set()

    def visit_WithItem(self, node: cst.WithItem) -> None:
        self._with_items.add(id(node.item))  # `with FileWriter(d) as w:` closes it

    def visit_Call(self, node: cst.Call) -> None:
        context = self.context
        self._callers.observe(node)
        name = context.call_name(node)
        if name not in WRITERS or context.in_traced_function or id(node) in self._with_items:
            return
        tf1 = name in TF1_WRITERS
        target = _bound_to(context, node)
        if target is False:
            return  # kept in a container: one writer per run or mode, on purpose
        loops = context.loops_running(node)
        frame = context.function
        definition = frame.node if frame is not None and isinstance(frame.node, cst.FunctionDef) else None
        if loops:
            if runs_fewer_than(context, loops, MIN_ITERATIONS) or not first_time(self._places, loops[-1]):
                return
            leaks = tf1 and not _closed_in(context, loops[-1], target)
            if not leaks and _mentions(context, node, _names_bound_in(context, loops)):
                return  # a log directory per run of a sweep: one writer per run is the design
            self.report(node, f"{code_of(node.func)}() opens a new summary writer on every iteration"
                              f"{_what_each(leaks)}; open it once before the loop",
                        repetition=_capped(_few(repetition_at(context, node)), leaks))
            return
        if definition is None or definition.name.value == "__init__" \
                or id(node) in context.functions.guarded(definition):
            return
        leaks = tf1 and not _closed_in(context, definition, target)
        if not leaks and _mentions(context, node, {p.name.value for p in all_params(definition.params)} - {"self"}):
            return  # the caller names the run's log directory: one writer per run
        if tf1 and isinstance(target, cst.Attribute) and not _closes(context, target.attr.value):
            self._rebound.append((node, target.attr.value, definition, evidence_at(context, node, ONCE_HERE)))
            return
        self._sites.append((node, leaks, definition, evidence_at(context, node, ONCE_HERE)))

    def leave_Module(self, node: cst.Module) -> None:
        for call, attr, definition, evidence in self._rebound:
            if not first_time(self._places, definition):
                continue
            method = definition.name.value
            repetition = self._callers.repetition_of_def(definition)
            if repetition is None and (method in REPEATED_METHODS or method.lstrip("_") in ENTRY_POINTS):
                repetition = Repetition(UNKNOWN, basis=f"{method}() is made to be called again", known=False)
            elif repetition is None:
                repetition = Repetition(ONCE, basis=f"{method}() may be called again")
            message = (f"{code_of(call.func)}() opens a new summary writer on every call of {method}() and "
                       f"binds it to self.{attr} without closing the last one: each call leaves a thread and "
                       f"an open file; open it once in __init__, or close it at the end of {method}()")
            self.findings.append((call, message, dataclasses.replace(evidence, repetition=_few(repetition))))
        for call, leaks, definition, evidence in self._sites:
            repetition = self._callers.repetition_of_def(definition)
            if repetition is None or not first_time(self._places, definition):
                continue
            fname = definition.name.value
            message = (f"{code_of(call.func)}() opens a new summary writer on every call of {fname}()"
                       f"{_what_each(leaks)}; open it once and pass it in")
            self.findings.append((call, message, dataclasses.replace(evidence, repetition=_capped(_few(repetition), leaks))))


def _what_each(leaks: bool) -> str:
    return ": each holds a thread and an open file until closed" if leaks else ": each starts another events file"


def _few(repetition: Repetition) -> Repetition:
    """A few dozen writers left open are a few dozen threads: bounded, not a leak to act on."""
    if repetition.kind == COUNT and repetition.count is not None and repetition.count < FEW_WRITERS:
        return Repetition(SMALL, repetition.count, repetition.basis, repetition.known)
    return repetition


def _names_bound_in(context, loops) -> set[str]:
    """The loops' targets and the names their bodies bind (``run += 1``, ``name = f"run_{i}"``)."""
    names = {n for loop in loops if isinstance(loop, cst.For) for n in target_names(loop.target)}
    for node in context.nodes_in(loops[0]):
        if isinstance(node, cst.Assign):
            names.update(n for t in node.targets for n in target_names(t.target))
        elif isinstance(node, cst.AugAssign):
            names.update(target_names(node.target))
    return names


def _mentions(context, node: cst.CSTNode, names: set[str]) -> bool:
    return any(isinstance(n, cst.Name) and n.value in names for n in context.nodes_in(node))


def _closed_in(context, scope: cst.CSTNode, target) -> bool:
    """``<target>.close()`` in ``scope`` (the loop body or the function that opens it)."""
    if not isinstance(target, cst.Name):
        return False
    return any(isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == "close"
               and isinstance(n.func.value, cst.Name) and n.func.value.value == target.value
               for n in context.nodes_in(scope))


def _capped(repetition: Repetition, leaks: bool) -> Repetition:
    """A writer that is closed (a TF2 one when dropped) costs an events file and a few
    milliseconds per call, not memory: medium at most."""
    if leaks:
        return repetition
    if repetition.kind in GROWS:
        return dataclasses.replace(repetition, known=False)
    if repetition.kind == COUNT and (repetition.count or 0) > 1:
        return Repetition(UNKNOWN, repetition.count, repetition.basis, known=False)
    return repetition


def _bound_to(context, call: cst.Call):
    """The target ``call``'s value is bound to (a Name or ``self.attr``), None when not bound by a
    plain assignment, False when it is stored in a container (``writers[mode] = ...``, ``.append``)."""
    scope = context.function.node if context.function is not None else context.module
    for node in context.nodes_in(scope):
        if isinstance(node, cst.Assign) and node.value is call:
            target = node.targets[0].target
            if isinstance(target, cst.Subscript):
                return False
            if isinstance(target, cst.Name) or is_self_attribute(target):
                return target
            return None
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and node.func.attr.value in ("append", "add", "extend") and any(a.value is call for a in node.args):
            return False
        if isinstance(node, cst.DictElement) and node.value is call:
            return False
    return None


def _closes(context, attr: str) -> bool:
    """``self.<attr>.close()`` somewhere in the class being walked."""
    cls = context.enclosing_class
    if cls is None:
        return False
    for node in context.nodes_in(cls, into_functions=True):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "close" \
                and is_self_attribute(node.func.value) and node.func.value.attr.value == attr:
            return True
    return False
