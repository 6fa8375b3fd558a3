"""Reach: findings at a call site for what the called function does (issue 8, parts 2-3).

No rule lives here. TFM201, TFM202, TFM403 and TFM404 call one of these hooks from their
``visit_Call``; each hook asks ``context.functions.reach(call, effect)`` (the function summaries,
facts/functions.py) and where the call runs (a loop, or a repeated scope: a request handler, a
Keras callback hook, facts/events.py), applies the rule's own conditions for loops, and reports
at the call site with the chain in the message. One reach finding per loop (or handler) per rule.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from tf_memlint.facts.events import BATCH, EPOCH, REQUEST, user_paced
from tf_memlint.facts.functions import Witness, MODEL, OPS, PREDICT, RETURNS_SESSION, RUNS_SESSION, SESSION
from tf_memlint.scopes import AT_POINT
from tf_memlint.syntax import code_of, runs_every_nth

if TYPE_CHECKING:
    from tf_memlint.rule import Rule

_PER = {REQUEST: "per request", BATCH: "per batch", EPOCH: "per epoch"}
_STORING = frozenset({"append", "extend", "insert", "add", "appendleft"})


def where_repeated(rule: Rule, node: cst.CSTNode, units=(REQUEST, BATCH, EPOCH)) -> tuple[object, str] | None:
    """(the loop or handler, "on every iteration" / "per request"...) when ``node`` runs repeatedly,
    else None. Loops first: a loop in a handler is the finer unit."""
    context = rule.context
    if context.in_traced_function:
        return None
    loops = context.loops_running(node)
    if loops:
        return loops[-1], "on every iteration"
    unit = context.repeated_scope
    if unit in units:
        frame = context.function
        if id(node) in context.functions.guarded(frame.node):
            return None  # `if model is None: model = load_model()`: once, then cached
        return frame.node, _PER[unit]
    return None


def _def(rule: Rule) -> cst.CSTNode | None:
    frame = rule.context.function
    return frame.node if frame is not None else None


def _once(rule: Rule, where: object) -> bool:
    seen = rule.__dict__.setdefault("_reach_seen", set())
    if id(where) in seen:
        return False
    seen.add(id(where))
    return True


def _small(rule: Rule, option: str, factor: int = 1) -> bool:
    """The loops around the call are known to run fewer than ``factor`` x the rule's option times."""
    context = rule.context
    loops = context.open_loops
    total = context.iterations(loops)
    return bool(loops) and total is not None and total < rule.settings[option] * factor


def model_reach(rule: Rule, node: cst.Call) -> None:
    """TFM403: a call whose function builds or loads a Keras model, run per iteration/request."""
    context = rule.context
    if not context.functions.possible(MODEL) or context.keras.is_model_build(node):
        return  # the rule's own test covers factories that return a model
    place = where_repeated(rule, node)
    if place is None:
        return
    found = context.functions.reach(node, MODEL)
    if found is None:
        return
    where, per = place
    loops = context.loops_running(node)
    if loops and (any(context.keras.loop_clears_session(loop) for loop in loops)
                  or _small(rule, "model_loop_min_iterations") or context.keras.is_kept(node, loops[-1])):
        return
    if not loops and any(context.keras.clears_session(c) for c in context.calls_in(where)):
        return
    owner = context.enclosing_class
    if owner is not None and owner.name.value in context.keras.layer_classes:
        return
    if not _once(rule, where):
        return
    label, witness = found
    chain = context.functions.describe(witness)
    if loops:
        advice = "build it once before the loop, or call clear_session() at the top of the loop"
    else:
        advice = "build or load it once (at import or start-up) and reuse it"
    rule.report(node, f"{label}() builds or loads a Keras model {per} (calls {chain}); each model's "
                      f"state stays alive; {advice}")


def predict_reach(rule: Rule, node: cst.Call) -> None:
    """TFM404: a call whose function calls ``predict`` on a Keras model, per iteration/request/batch."""
    context = rule.context
    if not context.functions.possible(PREDICT):
        return
    place = where_repeated(rule, node, units=(REQUEST, BATCH))
    if place is None:
        return
    found = context.functions.reach(node, PREDICT)
    func = node.func
    if found is None and isinstance(func, cst.Attribute) and func.attr.value == "predict" and node.args \
            and isinstance(func.value, cst.Attribute) and context.functions.resolve(node, _def(rule)) is None \
            and context.functions.is_model_static(func.value, _def(rule)):
        found = (code_of(func), Witness(code_of(func) + "()"))  # self.actor.model.predict(): another object's model
    if found is None:
        return
    where, per = place
    loops = context.loops_running(node)
    if loops:
        # Through a call, a loop known to be short (`for _ in range(10)` in a replay step) is a
        # constant number of batched predicts per call: only long or open-ended loops count.
        if _small(rule, "predict_loop_min_iterations", factor=10) or user_paced(context, loops) \
                or runs_every_nth(loops[-1], node, rule.settings["predict_loop_min_iterations"]):
            return  # short, driven by a person, or every n-th step (sampling images every 500 steps)
        used = {n.value for arg in node.args for n in [arg.value, *context.nodes_in(arg.value)]
                if isinstance(n, cst.Name)}
        if not any(used & context.keras.names_changing_in(loop) for loop in loops) \
                and any(context.keras.loop_fits_model(loop) for loop in loops):
            return  # the same data once per epoch of a fit loop: monitoring
    if not _once(rule, where):
        return
    label, witness = found
    if not witness.chain:
        rule.report(node, f"{label}() on a Keras model held by another object, {per}, pays predict's "
                          f"set-up cost on every call; call the model directly, model(x, training=False)")
        return
    rule.report(node, f"{label}() calls Keras predict() {per} (calls {context.functions.describe(witness)}); "
                      f"predict pays its set-up cost on every call: call the model directly, "
                      f"model(x, training=False), or predict once on the whole batch")


def predict_in_handler(rule: Rule, node: cst.Call) -> None:
    """TFM404: ``model.predict(x)`` written in a request handler or a per-batch callback hook."""
    context = rule.context
    if context.open_loops:
        return
    place = where_repeated(rule, node, units=(REQUEST, BATCH))
    if place is None:
        return
    where, per = place
    func = node.func
    model = func.value  # type: ignore[attr-defined]
    if not (context.keras.is_model(model) or context.functions.is_model_static(model, where)) \
            or context.keras.overrides(model, "predict"):
        return
    value = context.value_of(model, AT_POINT)
    if value is not None and any(value is n for n in context.nodes_in(where)):
        return  # a model built in the handler: TFM403's finding; one predict per model
    if not _once(rule, where):
        return
    name = code_of(model)
    rule.report(node, f"{name}.predict() {per} pays its set-up cost on every call; call "
                      f"{name}(x, training=False) instead")


def model_in_handler(rule: Rule, node: cst.Call) -> None:
    """TFM403: a model built or loaded directly in a request handler or a callback hook."""
    context = rule.context
    if context.open_loops:
        return
    place = where_repeated(rule, node)
    if place is None:
        return
    where, per = place
    if any(context.keras.clears_session(c) for c in context.calls_in(where)):
        return
    owner = context.enclosing_class
    if owner is not None and owner.name.value in context.keras.layer_classes:
        return
    if not _once(rule, where):
        return
    rule.report(node, f"{code_of(node.func)}() builds or loads a Keras model {per}: each model's state "
                      f"stays alive; build or load it once (at import or start-up) and reuse it")


def _runs_session(rule: Rule, where: cst.CSTNode, node: cst.Call) -> bool:
    """``where`` (a loop or a handler) runs a TF1 session, itself or through the calls it makes,
    or the called function does."""
    context = rule.context
    if context.sessions.loop_runs_session(where):
        return True
    functions = context.functions
    return any(functions.reach(call, RUNS_SESSION) is not None for call in context.calls_in(where))


def ops_reach(rule: Rule, node: cst.Call, fresh_graph: bool) -> None:
    """TFM202: a call whose function adds TF1 graph ops, run per iteration/request of code that runs a session."""
    context = rule.context
    if fresh_graph or not context.functions.possible(OPS):
        return
    place = where_repeated(rule, node, units=(REQUEST,))
    if place is None:
        return
    found = context.functions.reach(node, OPS)
    if found is None:
        return
    where, per = place
    loops = context.loops_running(node)
    if not _runs_session(rule, where, node):
        return
    if loops:
        if any(context.sessions.loop_resets_graph(loop) for loop in loops) \
                or _small(rule, "session_loop_min_iterations"):
            return
    elif context.sessions.scope_starts_new_graph(where):
        return
    if not _once(rule, where):
        return
    label, witness = found
    rule.report(node, f"{label}() adds ops to the TF1 graph {per} of code that runs a session (calls "
                      f"{context.functions.describe(witness)}); build the ops once and feed the values "
                      f"that change")


def ops_in_handler(rule: Rule, node: cst.Call, fresh_graph: bool) -> None:
    """TFM202: TF1 ops created directly in a request handler that runs a session."""
    context = rule.context
    if fresh_graph or context.open_loops:
        return
    place = where_repeated(rule, node, units=(REQUEST,))
    if place is None:
        return
    where, per = place
    if not _runs_session(rule, where, node) or context.sessions.scope_starts_new_graph(where):
        return
    if not _once(rule, where):
        return
    rule.report(node, f"{code_of(node.func)}() adds ops to the TF1 graph {per}: the graph grows with every "
                      f"request; build the ops once at start-up and feed the values that change")


def session_reach(rule: Rule, node: cst.Call) -> None:
    """TFM201: a call whose function opens a session that stays alive (an InteractiveSession, one
    stored in a container), or a session factory whose result is stored, per iteration/request."""
    context = rule.context
    functions = context.functions
    if not functions.possible(SESSION):
        return
    place = where_repeated(rule, node)
    if place is None:
        return
    found = functions.reach(node, SESSION)
    if found is None:
        found = functions.reach(node, RETURNS_SESSION)
        if found is None or not _stored(rule, node):
            return
    where, per = place
    if not _once(rule, where):
        return
    label, witness = found
    rule.report(node, f"{label}() opens a TF1 session {per} that is kept alive and never closed (calls "
                      f"{functions.describe(witness)}); open one session once, or close each one")


def _stored(rule: Rule, call: cst.Call) -> bool:
    """``sessions.append(make_session())`` / ``cache[k] = make_session()`` in the current scope."""
    context = rule.context
    frame = context.function
    for node in context.nodes_in(frame.node if frame is not None else context.module):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and node.func.attr.value in _STORING and any(a.value is call for a in node.args):
            return True
        if isinstance(node, cst.Assign) and node.value is call \
                and any(isinstance(t.target, cst.Subscript) for t in node.targets):
            return True
    return False
