"""TFM401 persistent-tape-not-released: a persistent GradientTape kept after its last gradient() call."""

from __future__ import annotations

import libcst as cst

from tf_memlint.evidence import PER_STEP, Repetition
from tf_memlint.facts.keras import GRADIENT_TAPE
from tf_memlint.gate import ANYWHERE, Inside
from tf_memlint.rule import Rule, register
from tf_memlint.syntax import code_of, contains


def _self_attribute(expr: cst.BaseExpression) -> str | None:
    """``x`` for ``self.x``."""
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        return expr.attr.value
    return None


def _is_true(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"


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
    once_confidence = "medium"

    name = "persistent-tape-not-released"
    summary = "persistent GradientTape not deleted after its last gradient() call"
    triggers = frozenset({GRADIENT_TAPE})
    structure = Inside(ANYWHERE, {GRADIENT_TAPE + "(persistent=True)"})  # the rule reads this literal only

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None and isinstance(node.asname.name, cst.Name):
            self._check(node.item, node.asname.name.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            self._check(node.value, node.targets[0].target.value)
        elif len(node.targets) == 1 and _self_attribute(node.targets[0].target) is not None \
                and self._is_persistent_tape(node.value):
            self._check_kept_on_object(node.value, _self_attribute(node.targets[0].target))

    def _is_persistent_tape(self, call: cst.BaseExpression) -> bool:
        return (isinstance(call, cst.Call) and self.context.call_name(call) == GRADIENT_TAPE
                and any(a.keyword is not None and a.keyword.value == "persistent" and _is_true(a.value)
                        for a in call.args))

    def _check_kept_on_object(self, call: cst.Call, attribute: str) -> None:
        """``self._tape = tf.GradientTape(persistent=True)`` once, then ``with self._tape:`` in a
        method: entering a persistent tape again records onto the same tape, so every call of
        that method adds its operations to what the object already holds."""
        context = self.context
        cls = context.enclosing_class
        if cls is None:
            return
        entered_in: list[cst.FunctionDef] = []
        for method in (n for n in context.nodes_in(cls, into_functions=True) if isinstance(n, cst.FunctionDef)):
            for node in context.nodes_in(method):
                if isinstance(node, cst.WithItem) and _self_attribute(node.item) == attribute:
                    entered_in.append(method)
                    break
        if not entered_in:
            return
        creator = context.function.node if context.function is not None else None
        for node in context.nodes_in(cls, into_functions=True):
            if isinstance(node, cst.Assign) and node.value is not call and any(
                    _self_attribute(t.target) == attribute for t in node.targets) \
                    and not (creator is not None and contains(creator, node)):
                return  # a fresh tape (or None) bound again in another method: released between uses
            if isinstance(node, cst.Del) and _self_attribute(node.target) == attribute:
                return
        method = entered_in[0]
        steps = any(isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == "gradient"
                    and _self_attribute(n.func.value) == attribute for n in context.nodes_in(method))
        self.report(call, f"persistent GradientTape kept as self.{attribute} and entered again in "
                          f"{method.name.value}(): each `with` records onto the same tape, so it holds every "
                          f"call's intermediates; open a new tape per step (`with tf.GradientTape() as tape:`)",
                    repetition=Repetition(PER_STEP, basis=f"every call of {method.name.value}()", known=steps))

    def _check(self, call: cst.BaseExpression, name: str) -> None:
        context = self.context
        if not self._is_persistent_tape(call):
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
