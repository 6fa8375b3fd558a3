"""TFM105 tf-function-created-in-loop: tf.function created inside a loop, traced again every iteration."""

from __future__ import annotations

import dataclasses

import libcst as cst

from tf_memlint.evidence import ONCE_HERE, evidence_at, repetition_of_loops
from tf_memlint.facts.callers import CallerFacts
from tf_memlint.facts.tracing import TF_FUNCTION
from tf_memlint.gate import IN_DEF_OR_LOOP, TF_FUNCTION_MADE, Inside
from tf_memlint.syntax import target_names
from tf_memlint.rule import Rule, register
from tf_memlint.walk import walk


@register
class TfFunctionCreatedInLoop(Rule):
    """``tf.function(...)`` or a ``@tf.function`` def inside a loop body.

    Bad::

        for batch in batches:
            step = tf.function(normalise)    # a new function, traced again, every iteration
            out = step(batch)

    Good::

        step = tf.function(normalise)        # created (and traced) once
        for batch in batches:
            out = step(batch)
    """

    code = "TFM105"

    name = "tf-function-created-in-loop"
    summary = "tf.function created inside a loop is traced again on every iteration"
    triggers = frozenset({TF_FUNCTION})  # tf.function in a loop: the only thing it fires on, decorator or call
    # a tf.function(f) call in a def or a loop; a @tf.function def nested in a def or in a loop
    structure = Inside(IN_DEF_OR_LOOP, {TF_FUNCTION_MADE})

    def __init__(self, context, settings) -> None:
        super().__init__(context, settings)
        self._decorators: set[int] = set()
        self._callers = context.facts_of(CallerFacts)
        # tf.functions created in a def with no loop around them: reported after the walk if
        # the def itself runs per call (its callers' loops, a handler, an entry point).
        self._per_call: list[tuple[cst.CSTNode, str, cst.FunctionDef, object]] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        decorator = self.context.tracing.tf_function_decorator(node)
        if decorator is None:
            return
        self._decorators.add(id(decorator))
        frames = self.context.frames  # the def's own frame is already pushed
        loops = frames[-2].loops if len(frames) > 1 else self.context.module_loops
        if not loops:
            if len(frames) > 1:
                self._created_in(node.name, f"@tf.function def {node.name.value}", frames[-2])
            return
        own = self.context.scopes[node]
        varying = {name for name in _names_bound_in(loops) if not own.binds(name)} - {node.name.value}
        if _mentions(node.body, varying):
            return  # closes over a value of this iteration: a different function each time
        # The def's own frame is open here: the loops that repeat it are its parent's.
        self.report(node.name, f"@tf.function def {node.name.value} inside a loop creates a new "
                               f"function that is traced again on every iteration; define it once "
                               f"before the loop and pass what changes as tensor arguments",
                    repetition=repetition_of_loops(self.context, loops))

    def _created_in(self, node: cst.CSTNode, what: str, frame) -> None:
        """A tf.function created in ``frame``'s def, outside any loop of it."""
        owner = frame.node
        if frame.traced or not isinstance(owner, cst.FunctionDef) or owner.name.value == "__init__":
            return  # traced once itself; built once per object
        if id(node) in self.context.functions.guarded(owner):
            return  # `if self._step is None:`: created once, then kept
        self._per_call.append((node, what, owner, evidence_at(self.context, node, ONCE_HERE)))

    def leave_Module(self, node: cst.Module) -> None:
        keras = self.context.keras
        done: set[int] = set()
        for where, what, owner, evidence in self._per_call:
            repetition = self._callers.repetition_of_def(owner, keras.is_model_build)
            if repetition is None or id(owner) in done:
                continue
            done.add(id(owner))
            name = owner.name.value
            self.findings.append((where, f"{what} inside {name}() creates a new function, traced again, on every "
                                         f"call of {name}(); define it once (at module level or in __init__) and "
                                         f"pass what changes as tensor arguments",
                                  dataclasses.replace(evidence, repetition=repetition)))

    def visit_Call(self, node: cst.Call) -> None:
        self._callers.observe(node)
        loops = self.context.open_loops
        if loops and self.context.tracing.is_tf_function_call(node.func):
            # tf.function(f)(jd, ...) with a value bound in the loop: if that value is a Python
            # object (a model, a distribution), it retraces even when hoisted; nothing to gain.
            if any(_mentions(arg.value, _names_bound_in(loops)) for arg in node.args):
                self._decorators.add(id(node.func))
        if id(node) in self._decorators or not self.context.tracing.is_tf_function_call(node):
            return
        if not loops:
            frame = self.context.function
            if frame is not None and _in_statement_of_def(self.context, node):
                self._created_in(node, "tf.function(...)", frame)
            return
        wrapped = node.args[0].value if node.args else None
        if wrapped is not None and _mentions(wrapped, _names_bound_in(loops)):
            return  # a different function every iteration (tf.function(model.call) for each model)
        self.report(node, "tf.function(...) inside a loop creates a new function that is traced again "
                          "on every iteration; create it once before the loop")


def _in_statement_of_def(context, node: cst.Call) -> bool:
    """``step = tf.function(f)`` in a def body (not a decorator, not a call of the result at once,
    ``tf.function(f)(x)``, which TFM104/107 judge)."""
    parent = context.function
    return parent is not None and any(isinstance(n, cst.Assign) and n.value is node
                                      for n in context.nodes_in(parent.node))


def _names_bound_in(loops: list[cst.For | cst.While]) -> set[str]:
    names: set[str] = set()

    class Binder(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                names.update(target_names(target.target))

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            names.update(target_names(node.target))

        def visit_For(self, node: cst.For) -> None:
            names.update(target_names(node.target))

        def visit_WithItem(self, node: cst.WithItem) -> None:
            if node.asname is not None:
                names.update(target_names(node.asname.name))

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            names.add(node.name.value)
            return False

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

    for loop in loops:
        walk(loop, Binder())
    return names


def _mentions(expr: cst.BaseExpression, names: set[str]) -> bool:
    found = False

    class Finder(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            nonlocal found
            found = found or node.value in names

        def visit_Attribute(self, node: cst.Attribute) -> bool:
            walk(node.value, self)  # the attribute name itself is not a variable
            return False

    walk(expr, Finder())
    return found
