"""TFM202 graph-growth-in-session-loop: TF1 ops created inside a loop (or handler) that runs a session."""

from __future__ import annotations

import dataclasses

import libcst as cst

from tf_memlint.evidence import (COUNT, GROWS, PER_CALLBACK, PER_ITEM, PER_STEP, UNKNOWN, Repetition, evidence_at, every_nth,
                                 repetition_at, repetition_of_loops, sparse)
from tf_memlint.facts.functions import OPS, RUNS_SESSION
from tf_memlint.facts.repetition import first_time, open_loops_run_fewer_than, runs_fewer_than, where_repeated
from tf_memlint.facts.sessions import (KERAS_BACKEND, OPTIMIZER_GRAPH_METHODS, SESSION_FACTORIES,
                                      SESSION_RUN_TRIGGERS, TF1_GRAPH_CALLS, UNDATED_KERAS, VARIABLE_ASSIGN_METHODS,
                                      assigns_a_variable, is_initializer)
from tf_memlint.facts.events import REQUEST
from tf_memlint.gate import ANYWHERE, GRAPH_OP, IN_DEF_OR_LOOP, MAY_RUN_SESSION, OPS_IN_FETCH, REPEATED, Inside, Together
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
    reaches_across_modules = True  # its reach path: _through_call

    name = "graph-growth-in-session-loop"
    summary = "TensorFlow ops created inside a loop that calls sess.run: the graph grows every iteration"
    triggers = SESSION_RUN_TRIGGERS  # a loop that runs a session
    # one loop or request handler (or a function it calls) that both runs a session and adds ops:
    # a TF call, an optimizer's graph method, or, in the command, another module's function doing
    # either. Every path of the rule reports a loop or handler that does both (_runs_session), and
    # a `.run()` is a session's only where the module shows one (`strategy.run`, `driver.run` are not).
    structure = Together(REPEATED, (SESSION_RUN_TRIGGERS | {RUNS_SESSION},
                                    {GRAPH_OP, OPS} | {"." + method for method in
                                                       OPTIMIZER_GRAPH_METHODS | VARIABLE_ASSIGN_METHODS})) & (
        Inside(ANYWHERE, {MAY_RUN_SESSION}) | Inside(ANYWHERE, {RUNS_SESSION})) | (
        # a fetch that builds ops, in a function its callers may run again and again (_in_fetch),
        # in a module that builds a TF1 graph, gets a session or names one (`def restore(self, sess)`)
        Inside(IN_DEF_OR_LOOP, {OPS_IN_FETCH}) & (Inside(ANYWHERE, TF1_GRAPH_CALLS | SESSION_FACTORIES)
                                                  | Inside(ANYWHERE, {MAY_RUN_SESSION})))
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
        self._ops_reached: dict[int, tuple] = {}  # op in a def of this module -> its strongest finding

    def leave_Module(self, node: cst.Module) -> None:
        self.findings.extend(self._ops_reached.values())

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
            self._in_fetch(node)  # ops built by evaluating the fetches
        if not context.sessions.creates_graph_ops(node):
            self._through_call(node)  # a function that adds ops, called here
            return
        loops = context.loops_running(node)
        if not loops:
            self._in_handler(node)  # per request (facts/events.py)
            return
        statement = self._statements[-1] if self._statements else node
        if id(statement) in self._reported:
            return
        if not self._runs_session(loops, loops[-1], through_call=False) \
                or self._exempt(loops, loops[-1], through_call=False):
            return
        self._reported.add(id(statement))
        # One finding per loop (the innermost that runs the call), naming every statement.
        self._pending.setdefault(id(loops[-1]), []).append((node, code_of(node.func)))

    def _exempt(self, loops: list, where: cst.CSTNode, through_call: bool) -> bool:
        """The exemptions of every path: the ops go to a new graph each time (a ``with`` block
        that installs one, a loop that resets the default graph, a handler that makes its own),
        or the loops run a small, bounded number of times (a few copies are not growth)."""
        context = self.context
        if self._fresh_graph:
            return True
        if not loops:
            return context.sessions.scope_starts_new_graph(where)
        if any(context.sessions.loop_resets_graph(loop) for loop in loops):
            return True
        # Two measures of "small" (through a call and in a fetch, the loops open at the call):
        # kept apart so that findings do not change with this layout.
        limit = self.settings["session_loop_min_iterations"]
        return open_loops_run_fewer_than(context, limit) if through_call else runs_fewer_than(context, loops, limit)

    def _runs_session(self, loops: list, where: cst.CSTNode, through_call: bool) -> bool:
        """The code that adds the ops also runs a TF1 session, itself or through a function it
        calls (agent.learn() running self.sess.run), in this module or, in the command, another
        one: in-file, any loop around the call; through a call or in a handler, the innermost
        loop or the handler."""
        return any(self._session_run_in(place) for place in ([where] if through_call else loops))

    def _session_run_in(self, place: cst.CSTNode) -> bool:
        context = self.context
        if context.sessions.loop_runs_session(place):
            return True
        functions = context.functions
        return any(functions.reach(call, RUNS_SESSION) is not None for call in context.calls_in(place))

    def _through_call(self, node: cst.Call) -> None:
        """A call whose function adds TF1 graph ops, run per iteration/request of code that runs a session."""
        context = self.context
        if self._fresh_graph or not context.functions.possible(OPS):
            return
        place = where_repeated(context, node, units=(REQUEST,))
        if place is None:
            return
        found = context.functions.reach(node, OPS)
        if found is None:
            return
        target = context.functions.resolve(node, context.function.node if context.function else None)
        if target is not None and self._builds_ops_in_fetch(target[1]):
            return  # reported in the callee, at the op in its fetch, as called from here (_in_fetch)
        where, per = place
        loops = context.loops_running(node)
        if not self._runs_session(loops, where, through_call=True) or self._exempt(loops, where, through_call=True):
            return
        if not first_time(self._reach_places, where):
            return
        label, witness = found
        repetition = _training_loop(context, loops, node) or repetition_at(context, node)
        head = witness.what.partition("(")[0].partition(".")[0]
        if (context.aliases.get(head) or "").startswith(KERAS_BACKEND):
            repetition = _era_undated(context, repetition, node)
        op = self._op_of(witness)
        if op is not None:
            # Reported where the fix goes, the op in the function (as TFM408 reports a load), with
            # the call that repeats it most; one finding per op, however many loops call it.
            message = (f"{context.functions.describe(witness)} adds ops to the TF1 graph on every call, and "
                       f"{label}() runs {per} of code that runs a session (line {context.functions.line_of(node)}); "
                       f"build the ops once and feed the values that change")
            known = self._ops_reached.get(id(op))
            if known is None or _strength(repetition) > _strength(known[2].repetition):
                self._ops_reached[id(op)] = (op, message, evidence_at(context, node, repetition))
            return
        self.report(node, f"{label}() adds ops to the TF1 graph {per} of code that runs a session (calls "
                          f"{context.functions.describe(witness)}); build the ops once and feed the values "
                          f"that change", repetition=repetition)

    def _op_of(self, witness) -> cst.Call | None:
        """The op call the witness names, in the def of this module at the end of its chain (None
        when a hop is in another module: the finding stays at the call here)."""
        if not witness.chain or not all(isinstance(where, cst.CSTNode) for _, where in witness.chain):
            return None
        definition = witness.chain[-1][1]
        context = self.context
        return next((call for call in context.calls_in(definition) if code_of(call.func) + "()" == witness.what), None)

    def _in_handler(self, node: cst.Call) -> None:
        """TF1 ops created directly in a request handler that runs a session."""
        context = self.context
        if self._fresh_graph or context.open_loops:
            return
        place = where_repeated(context, node, units=(REQUEST,))
        if place is None:
            return
        where, per = place
        if not self._runs_session([], where, through_call=True) or self._exempt([], where, through_call=True):
            return
        if not first_time(self._reach_places, where):
            return
        self.report(node, f"{code_of(node.func)}() adds ops to the TF1 graph {per}: the graph grows with every "
                          f"request; build the ops once at start-up and feed the values that change")

    # Ops built in the fetches of a session run: ``sess.run(tf.argmax(y, 1))``, ``sess.run(-product)``.
    # Evaluating the fetch builds the op before the run, so every run adds to the graph: per
    # iteration in a loop, per call in a function (reported where the function is called repeatedly).
    def _builds_ops_in_fetch(self, definition: cst.CSTNode) -> bool:
        """``definition`` runs a fetch that builds ops (outside its own loops, which are its own finding)."""
        key = id(definition)
        if key not in self._defs_with_fetch_ops:
            context = self.context
            looped = {id(n) for loop in context.nodes_in(definition)
                      if isinstance(loop, (cst.For, cst.While)) for n in context.nodes_in(loop)}
            self._defs_with_fetch_ops[key] = any(
                isinstance(call.func, cst.Attribute) and call.func.attr.value in ("run", "eval", "partial_run")
                and id(call) not in looped
                and any(not is_initializer(context.call_name(op))
                        for op, _what in context.sessions.ops_in_fetch(call, follow_calls=False)
                        + context.sessions.ops_filled_into_fetch(call, definition, follow_calls=False))
                for call in context.calls_in(definition))
        return self._defs_with_fetch_ops[key]

    def _in_fetch(self, run: cst.Call) -> None:
        """Ops built in the fetches of a session run, per iteration of a loop that runs the session,
        per request or callback event, or per call of a function called repeatedly."""
        context = self.context
        if self._fresh_graph:
            return
        ops = context.sessions.ops_in_fetch(run)
        loops = context.loops_running(run)
        if loops:
            # Op calls and calls of functions that add ops are the loop path's; operators are not
            # calls, and a fetched `v.assign(x)` is an op whatever the loop path knows of `v`.
            ops = [(op, what) for op, what in ops if not isinstance(op, cst.Call)
                   or assigns_a_variable(op) and not context.sessions.creates_graph_ops(op)]
            if not ops or self._exempt(loops, loops[-1], through_call=True):
                return
            statement = self._statements[-1] if self._statements else run
            if id(statement) not in self._reported and context.sessions.loop_runs_session(loops[-1]):
                self._reported.add(id(statement))
                self._pending.setdefault(id(loops[-1]), []).append(ops[0])
            return
        frame = context.function
        if frame is not None:
            ops = ops + context.sessions.ops_filled_into_fetch(run, frame.node)
        ops = [(op, what) for op, what in ops if not is_initializer(context.call_name(op))]
        if not ops or frame is None or self._exempt([], frame.node, through_call=True):
            return
        op, what = ops[0]
        name = frame.node.name.value
        if context.repeated_scope is not None:  # a request handler or a callback hook
            if first_time(self._reach_places, frame.node):
                self.report(op, f"{what} in a sess.run fetch builds a new op on every call of {name}(); build "
                                f"it once at start-up and fetch its result")
            return
        if not first_time(self._fetching_defs, frame.node):
            return
        repetition = self._called_repeatedly(frame.node, 0, set())
        if repetition is not None:
            repetition = sparse(repetition, frame.node, op)
        if repetition is None and name.lstrip("_") in PER_CALL_NAMES:
            repetition = Repetition(UNKNOWN, basis=f"{name}() is made to be called repeatedly; its callers "
                                                   f"are elsewhere", known=False)
        self.report(op, f"{what} in a sess.run fetch builds a new op every time {name}() runs: the graph "
                        f"grows with each call; build it once (e.g. in __init__) and fetch its result",
                    repetition=repetition)

    def _called_repeatedly(self, definition: cst.FunctionDef, depth: int, seen: set[int]) -> Repetition | None:
        """How often this module calls ``definition``: from a loop (the strongest such call), as a
        step callback, or through a function that is. None when no call of this module repeats."""
        context = self.context
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
                each = sparse(every_nth(_per_file(repetition_of_loops(context, loops)), loops, site), loops[-1], site)
                if each.count is not None and each.count < self.settings["session_loop_min_iterations"]:
                    continue
                found = Repetition(each.kind, each.count, f"called in {each.basis or 'a loop'}, {place} line {line}",
                                   each.known)
            elif caller is not None:
                above = self._called_repeatedly(caller, depth + 1, seen)
                if above is None:
                    continue
                above = sparse(above, caller, site)
                found = Repetition(above.kind, above.count, f"{above.basis} -> {place} line {line}", above.known)
            else:
                continue
            if best is None or _strength(found) > _strength(best):
                best = found
        return best

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
        # Reported at the op built most often: one built on every pass outweighs a sampled summary.
        graded = [(_training_loop(self.context, self.context.open_loops, op), op, what) for op, what in found]
        strongest = max(range(len(graded)), key=lambda i: (_strength(graded[i][0]), -i))
        repetition, node, what = graded[strongest]
        if (self.context.call_name(node) or "").startswith(KERAS_BACKEND):
            repetition = _era_undated(self.context, repetition, node)
        found = [found[strongest], *found[:strongest], *found[strongest + 1:]]
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


# Names of functions made to be called again and again (a fetch that builds ops in one of them grows
# the graph even where its callers are out of sight).
PER_CALL_NAMES = frozenset({"step", "train_step", "run_step", "predict", "act", "learn", "update",
                            "choose_action", "get_action", "evaluate", "infer", "inference", "train_batch",
                            "partial_fit", "encode", "decode", "generate", "sample", "test_step", "eval_step"})
_NESTING = 3  # callers followed up from the function that builds the op


def _training_loop(context, loops: list, node: cst.CSTNode) -> Repetition | None:
    """The repetition of ``node``, run by ``loops`` of code that runs a session. A loop whose
    bound's name says it counts steps (``range(max_iters)``, ``while step < num_steps``) is a
    training loop: the repetition is as good as known. A loop over "data" is not (a weight
    loader's ``for name, data in weights.items()``). Ops built only on every n-th pass (``if step
    % 1000 == 0:``, an evaluation or a summary) add a few KiB that often: inferred. None: the
    default evidence."""
    if not loops:
        return None
    repetition = repetition_of_loops(context, loops)
    if repetition.kind == PER_STEP and not repetition.known:
        repetition = Repetition(repetition.kind, repetition.count, f"{repetition.basis}, running the session",
                                known=True)
    else:
        repetition = _per_file(repetition_at(context, node))
    return sparse(repetition, loops[-1], node)


def _per_file(repetition: Repetition) -> Repetition:
    """A folder's files, read by a loop that runs a session: what each pass adds stays in the one
    graph for the life of the process, so the folder is data whatever its size (a frame buffer
    polled for new images, a test folder of recordings, every image of a dataset), where a
    predict's set-up per file is a cost only a large folder makes felt."""
    if repetition.kind == PER_ITEM and repetition.folder and not repetition.known:
        return dataclasses.replace(repetition, basis=f"{repetition.basis}, each file's ops kept in the graph",
                                   known=True)
    return repetition


def _era_undated(context, repetition: Repetition, node: cst.CSTNode) -> Repetition:
    """A Keras backend op adds to a graph only where Keras runs over TF1 (Keras <= 2.3): in a
    module of standalone ``keras`` that nothing dates, how often the place runs is known but
    whether it grows a graph is inferred."""
    if context.sessions.keras_backend_era != UNDATED_KERAS:
        return repetition
    era = "standalone Keras, graph mode up to Keras 2.3"
    basis = f"{repetition.basis}; {era}" if repetition.basis else era
    if repetition.kind in GROWS:
        return Repetition(repetition.kind, repetition.count, basis, known=False)
    if repetition.kind == COUNT:
        return Repetition(UNKNOWN, repetition.count, basis, known=False)
    return repetition


def _strength(repetition: Repetition) -> int:
    if repetition.kind in GROWS:
        return 3 if repetition.known else 1
    return {COUNT: 2, UNKNOWN: 0}.get(repetition.kind, -1)
