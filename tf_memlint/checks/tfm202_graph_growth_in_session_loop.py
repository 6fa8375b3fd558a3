"""TFM202 graph-growth-in-session-loop: TF1 ops created inside a loop (or handler) that runs a session."""

from __future__ import annotations

import libcst as cst

from tf_memlint.facts.functions import OPS, RUNS_SESSION
from tf_memlint.facts.repetition import first_time, open_loops_run_fewer_than, where_repeated
from tf_memlint.facts.sessions import (OP_NAMESPACE, OPTIMIZER_GRAPH_METHODS, SESSION_FACTORIES, SESSION_RUN_TRIGGERS,
                                      TF1_GRAPH_CALLS, is_initializer)
from tf_memlint.evidence import COUNT, GROWS, PER_CALLBACK, PER_STEP, UNKNOWN, Repetition, repetition_of_loops
from tf_memlint.facts.events import REQUEST
from tf_memlint.gate import ANYWHERE, IN_DEF_OR_LOOP, REPEATED, Inside, Together
from tf_memlint.rule import Rule, register
from tf_memlint.syntax import code_of


@register
class GraphGrowthInSessionLoop(Rule):
    """Creating graph operations inside a loop that also runs a TF1 session.

    Bad::

        with tf.compat.v1.Session() as sess:
            for step in range(1000):
                y = tf.reduce_mean(x * float(step))   # 1000 new ops in the graph
                sess.run(y, feed_dict={x: batch})

    Good::

        scale = tf.compat.v1.placeholder(tf.float32, shape=())
        y = tf.reduce_mean(x * scale)
        tf.compat.v1.get_default_graph().finalize()
        with tf.compat.v1.Session() as sess:
            for step in range(1000):
                sess.run(y, feed_dict={x: batch, scale: float(step)})

    Silent when the loop starts a new graph each iteration (``tf.reset_default_graph()``,
    ``keras.backend.clear_session()``, ``with tf.Graph().as_default():``).
    """

    code = "TFM202"
    reaches_across_modules = True  # its reach path: _ops_reach

    name = "graph-growth-in-session-loop"
    summary = "TensorFlow ops created inside a loop that calls sess.run: the graph grows every iteration"
    triggers = SESSION_RUN_TRIGGERS  # a loop that runs a session
    # one loop or request handler (or a function it calls) that both runs a session and adds ops:
    # a TF call, an optimizer's graph method, or, in the command, another module's function doing
    # either. Every path of the rule reports a loop or handler that does both (_ops_reach,
    # _ops_in_handler: _runs_session of that same loop or handler).
    structure = Together(REPEATED, (SESSION_RUN_TRIGGERS | {RUNS_SESSION},
                                    {OP_NAMESPACE, OPS} | {"." + method for method in OPTIMIZER_GRAPH_METHODS})) | (
        # a fetch that builds ops, in a function its callers may run again and again (_ops_in_fetch),
        # in a module that builds a TF1 graph or gets a session
        Inside(IN_DEF_OR_LOOP, SESSION_RUN_TRIGGERS) & Inside(ANYWHERE, TF1_GRAPH_CALLS | SESSION_FACTORIES))
    options = {
        "session_loop_min_iterations": (
            10, "loops known to run fewer times than this (e.g. over a 2-item list) are not reported"),
    }

    def __init__(self, context, settings) -> None:
        super().__init__(context, settings)
        self._statements: list[cst.CSTNode] = []
        self._reported: set[int] = set()
        self._pending: dict[int, list[tuple[cst.Call, str]]] = {}
        self._fresh_graph = 0  # `with` blocks, inside the loop, that install a new graph
        self._with_fresh: list[bool] = []
        self._reach_places: set[int] = set()  # loops and handlers reported through a call
        self._fetching_defs: set[int] = set()  # functions reported for ops built in a fetch
        self._defs_with_fetch_ops: dict[int, bool] = {}

    # The statement being visited: one finding per statement, at its first op-creating call.
    def visit_For(self, node: cst.For) -> None:
        self._statements.append(node)

    def visit_While(self, node: cst.While) -> None:
        self._statements.append(node)

    def visit_If(self, node: cst.If) -> None:
        self._statements.append(node)

    def leave_If(self, original_node: cst.If) -> None:
        self._statements.pop()

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._statements.append(node)

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine) -> None:
        self._statements.pop()

    def visit_With(self, node: cst.With) -> None:
        loops = self.context.open_loops
        fresh = bool(loops) and any(self.context.sessions.makes_fresh_graph(item.item, loops[-1])
                                    for item in node.items)
        self._fresh_graph += fresh
        self._statements.append(node)
        self._with_fresh.append(fresh)

    def leave_With(self, original_node: cst.With) -> None:
        self._fresh_graph -= self._with_fresh.pop()
        self._statements.pop()

    def visit_Call(self, node: cst.Call) -> None:
        context = self.context
        if context.in_traced_function:
            return
        if context.sessions.is_session_run(node):
            _ops_in_fetch(self, node, bool(self._fresh_graph))
        if not context.sessions.creates_graph_ops(node):
            _ops_reach(self, node, bool(self._fresh_graph))  # a function that adds ops, called here
            return
        loops = context.loops_running(node)
        if not loops:
            _ops_in_handler(self, node, bool(self._fresh_graph))  # per request (facts/events.py)
            return
        if self._fresh_graph:
            return
        statement = self._statements[-1] if self._statements else node
        if id(statement) in self._reported:
            return
        # The loop runs the session itself or through a function it calls (agent.learn() running
        # self.sess.run), in this module or, in the command, another one.
        running = [loop for loop in loops if _runs_session(self, loop, node)]
        if not running or any(context.sessions.loop_resets_graph(loop) for loop in loops):
            return
        total = context.iterations(loops)
        if total is not None and total < self.settings["session_loop_min_iterations"]:
            return  # a bounded, small number of copies: not growth
        self._reported.add(id(statement))
        # One finding per loop (the innermost that runs the call), naming every statement.
        self._pending.setdefault(id(loops[-1]), []).append((node, code_of(node.func)))

    def leave_For(self, original_node: cst.For) -> None:
        self._statements.pop()
        self._flush(original_node)

    def leave_While(self, original_node: cst.While) -> None:
        self._statements.pop()
        self._flush(original_node)

    def _flush(self, loop: cst.CSTNode) -> None:
        found = self._pending.pop(id(loop), None)
        if not found:
            return
        node, what = found[0]
        repetition = _training_loop(self.context, self.context.open_loops)
        if not isinstance(node, cst.Call):  # an operator or a slice of a tensor in a fetch
            self.report(node, f"{what} in a sess.run fetch builds a new op on every iteration of a loop "
                              f"that runs the session; build it once before the loop and fetch its result",
                        repetition=repetition)
            return
        if len(found) == 1:
            self.report(node, f"{what}() inside a loop that calls sess.run adds ops to the graph on every "
                              f"iteration; build it once before the loop and feed the values that change",
                        repetition=repetition)
            return
        lines = ", ".join(f"{w}()" for _n, w in found[1:])
        self.report(node, f"{what}() and {len(found) - 1} more op-creating statement"
                          f"{'s' if len(found) > 2 else ''} ({lines}) inside a loop that calls sess.run add "
                          f"ops to the graph on every iteration; build them once before the loop and feed "
                          f"the values that change", repetition=repetition)


# The reach path: a call of a function that adds ops, and ops created in a request handler.
def _runs_session(rule: GraphGrowthInSessionLoop, where: cst.CSTNode, node: cst.Call) -> bool:
    """``where`` (a loop or a handler) runs a TF1 session, itself or through the calls it makes,
    or the called function does."""
    context = rule.context
    if context.sessions.loop_runs_session(where):
        return True
    functions = context.functions
    return any(functions.reach(call, RUNS_SESSION) is not None for call in context.calls_in(where))


def _ops_reach(rule: GraphGrowthInSessionLoop, node: cst.Call, fresh_graph: bool) -> None:
    """A call whose function adds TF1 graph ops, run per iteration/request of code that runs a session."""
    context = rule.context
    if fresh_graph or not context.functions.possible(OPS):
        return
    place = where_repeated(context, node, units=(REQUEST,))
    if place is None:
        return
    found = context.functions.reach(node, OPS)
    if found is None:
        return
    target = context.functions.resolve(node, context.function.node if context.function else None)
    if target is not None and _builds_ops_in_fetch(rule, target[1]):
        return  # reported in the callee, at the op in its fetch, as called from here (_ops_in_fetch)
    where, per = place
    loops = context.loops_running(node)
    if not _runs_session(rule, where, node):
        return
    if loops:
        if any(context.sessions.loop_resets_graph(loop) for loop in loops) \
                or open_loops_run_fewer_than(context, rule.settings["session_loop_min_iterations"]):
            return
    elif context.sessions.scope_starts_new_graph(where):
        return
    if not first_time(rule._reach_places, where):
        return
    label, witness = found
    rule.report(node, f"{label}() adds ops to the TF1 graph {per} of code that runs a session (calls "
                      f"{context.functions.describe(witness)}); build the ops once and feed the values "
                      f"that change", repetition=_training_loop(context, loops))


def _ops_in_handler(rule: GraphGrowthInSessionLoop, node: cst.Call, fresh_graph: bool) -> None:
    """TF1 ops created directly in a request handler that runs a session."""
    context = rule.context
    if fresh_graph or context.open_loops:
        return
    place = where_repeated(context, node, units=(REQUEST,))
    if place is None:
        return
    where, per = place
    if not _runs_session(rule, where, node) or context.sessions.scope_starts_new_graph(where):
        return
    if not first_time(rule._reach_places, where):
        return
    rule.report(node, f"{code_of(node.func)}() adds ops to the TF1 graph {per}: the graph grows with every "
                      f"request; build the ops once at start-up and feed the values that change")


# Ops built in the fetches of a session run: ``sess.run(tf.argmax(y, 1))``, ``sess.run(-product)``.
# Evaluating the fetch builds the op before the run, so every run adds to the graph: per
# iteration in a loop, per call in a function (reported where the function is called repeatedly).
PER_CALL_NAMES = frozenset({"step", "train_step", "run_step", "predict", "act", "learn", "update",
                            "choose_action", "get_action", "evaluate", "infer", "inference", "train_batch",
                            "partial_fit", "encode", "decode", "generate", "sample", "test_step", "eval_step"})
_NESTING = 3  # callers followed up from the function that builds the op


def _training_loop(context, loops: list) -> Repetition | None:
    """A loop that runs the session every iteration and whose bound's name says it counts steps
    (``range(max_iters)``, ``while step < num_steps``) is a training loop: the repetition is as
    good as known. A loop over "data" is not (a weight loader's ``for name, data in
    weights.items()``). None: the default evidence."""
    if not loops:
        return None
    repetition = repetition_of_loops(context, loops)
    if repetition.kind == PER_STEP and not repetition.known:
        return Repetition(repetition.kind, repetition.count, f"{repetition.basis}, running the session",
                          known=True)
    return None


def _builds_ops_in_fetch(rule: GraphGrowthInSessionLoop, definition: cst.CSTNode) -> bool:
    """``definition`` runs a fetch that builds ops (outside its own loops, which are its own finding)."""
    key = id(definition)
    if key not in rule._defs_with_fetch_ops:
        context = rule.context
        looped = {id(n) for loop in context.nodes_in(definition)
                  if isinstance(loop, (cst.For, cst.While)) for n in context.nodes_in(loop)}
        rule._defs_with_fetch_ops[key] = any(
            isinstance(call.func, cst.Attribute) and call.func.attr.value in ("run", "eval", "partial_run")
            and id(call) not in looped
            and any(not is_initializer(context.call_name(op))
                    for op, _what in context.sessions.ops_in_fetch(call, follow_calls=False))
            for call in context.calls_in(definition))
    return rule._defs_with_fetch_ops[key]


def _ops_in_fetch(rule: GraphGrowthInSessionLoop, run: cst.Call, fresh_graph: bool) -> None:
    context = rule.context
    if fresh_graph:
        return
    ops = context.sessions.ops_in_fetch(run)
    loops = context.loops_running(run)
    if loops:
        # Op calls and calls of functions that add ops are the loop path's; operators are not calls.
        ops = [(op, what) for op, what in ops if not isinstance(op, cst.Call)]
        if not ops or any(context.sessions.loop_resets_graph(loop) for loop in loops) \
                or open_loops_run_fewer_than(context, rule.settings["session_loop_min_iterations"]):
            return
        statement = rule._statements[-1] if rule._statements else run
        if id(statement) not in rule._reported and context.sessions.loop_runs_session(loops[-1]):
            rule._reported.add(id(statement))
            rule._pending.setdefault(id(loops[-1]), []).append(ops[0])
        return
    ops = [(op, what) for op, what in ops if not is_initializer(context.call_name(op))]
    frame = context.function
    if not ops or frame is None or context.sessions.scope_starts_new_graph(frame.node):
        return
    op, what = ops[0]
    name = frame.node.name.value
    if context.repeated_scope is not None:  # a request handler or a callback hook
        if first_time(rule._reach_places, frame.node):
            rule.report(op, f"{what} in a sess.run fetch builds a new op on every call of {name}(); build "
                            f"it once at start-up and fetch its result")
        return
    if not first_time(rule._fetching_defs, frame.node):
        return
    repetition = _called_repeatedly(rule, frame.node, 0, set())
    if repetition is None and name.lstrip("_") in PER_CALL_NAMES:
        repetition = Repetition(UNKNOWN, basis=f"{name}() is made to be called repeatedly; its callers "
                                               f"are elsewhere", known=False)
    rule.report(op, f"{what} in a sess.run fetch builds a new op every time {name}() runs: the graph "
                    f"grows with each call; build it once (e.g. in __init__) and fetch its result",
                repetition=repetition)


def _strength(repetition: Repetition) -> int:
    if repetition.kind in GROWS:
        return 3 if repetition.known else 1
    return {COUNT: 2, UNKNOWN: 0}.get(repetition.kind, -1)


def _called_repeatedly(rule: GraphGrowthInSessionLoop, definition: cst.FunctionDef, depth: int,
                       seen: set[int]) -> Repetition | None:
    """How often this module calls ``definition``: from a loop (the strongest such call), as a
    step callback, or through a function that is. None when no call of this module repeats."""
    context = rule.context
    if depth >= _NESTING or id(definition) in seen:
        return None
    seen.add(id(definition))
    best: Repetition | None = None
    for site, loops, caller in context.functions.call_sites(definition):
        line = context.functions.line_of(site)
        place = f"{caller.name.value}()" if caller is not None else "module level"
        if isinstance(site, cst.Arg):
            keyword = site.keyword.value  # type: ignore[union-attr]
            found = Repetition(PER_CALLBACK, basis=f"passed as {keyword}= at line {line}",
                               known=any(word in keyword for word in ("step", "iter", "batch")))
        elif loops:
            if any(context.sessions.loop_resets_graph(loop) for loop in loops):
                continue
            each = repetition_of_loops(context, loops)
            if each.count is not None and each.count < rule.settings["session_loop_min_iterations"]:
                continue
            found = Repetition(each.kind, each.count, f"called in {each.basis or 'a loop'}, {place} line {line}",
                               each.known)
        elif caller is not None:
            above = _called_repeatedly(rule, caller, depth + 1, seen)
            if above is None:
                continue
            found = Repetition(above.kind, above.count, f"{above.basis} -> {place} line {line}", above.known)
        else:
            continue
        if best is None or _strength(found) > _strength(best):
            best = found
    return best
