"""TFM406 compile-in-loop: Keras compile() in a loop on the same model."""

from __future__ import annotations

import libcst as cst

from tf_memlint.facts.keras import MODEL_BUILD_TRIGGERS
from tf_memlint.facts.repetition import runs_fewer_than
from tf_memlint.gate import LOOP, Inside
from tf_memlint.rule import Rule, register
from tf_memlint.syntax import code_of


@register
class CompileInLoop(Rule):
    """``model.compile(...)`` inside a loop on the same Keras model.

    Bad::

        model = build_model()
        for episode in range(episodes):
            model.compile(optimizer="adam", loss="mse")
            model.fit(x, y, epochs=1, verbose=0)

    Good::

        model = build_model()
        model.compile(optimizer="adam", loss="mse")
        for episode in range(episodes):
            model.fit(x, y, epochs=1, verbose=0)

    Each ``compile`` drops the model's compiled train/test/predict functions, so the next
    ``fit``/``train_on_batch`` traces them again. Fires only when the receiver is known to be a
    Keras model bound outside the loop. Silent when the loop builds the model it compiles, when
    it changes a layer's ``trainable`` flag (a recompile is what makes that take effect), and for
    loops known to run fewer than ``compile_loop_min_iterations`` times.
    """

    code = "TFM406"
    name = "compile-in-loop"
    summary = "Keras compile() called in a loop on the same model: every call retraces the train function"
    triggers = frozenset(".compile&" + build for build in MODEL_BUILD_TRIGGERS)
    structure = Inside(LOOP, {".compile"})
    options = {
        "compile_loop_min_iterations": (
            10, "loops known to run fewer times than this are not reported"),
    }

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "compile"):
            return
        context = self.context
        if context.in_traced_function or not context.keras.is_model(func.value) \
                or context.keras.overrides(func.value, "compile"):
            return
        loops = context.loops_running(node)
        if not loops or runs_fewer_than(context, loops, self.settings["compile_loop_min_iterations"]):
            return
        same = context.keras.same_model_loops(func.value, loops)
        same = [loop for loop in same if not _changes_trainable(context, loop)]
        if not same:
            return
        model = code_of(func.value)
        self.report(node, f"{model}.compile() in a loop on the same model: each call drops the compiled "
                          f"train function and the next fit() traces it again; compile once before the loop")


def _changes_trainable(context, loop) -> bool:
    for node in context.nodes_in(loop):
        if isinstance(node, cst.Assign) and any(
                isinstance(t.target, cst.Attribute) and t.target.attr.value == "trainable" for t in node.targets):
            return True
    return False
