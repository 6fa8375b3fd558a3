"""TFM202 graph-growth-in-session-loop: TF1 ops created inside a loop (or handler) that runs a session."""

from __future__ import annotations

import libcst as cst

from tf_memlint.facts.functions import OPS, RUNS_SESSION
from tf_memlint.facts.repetition import first_time, open_loops_run_fewer_than, runs_fewer_than, where_repeated
from tf_memlint.facts.sessions import OP_NAMESPACE, OPTIMIZER_GRAPH_METHODS, SESSION_RUN_TRIGGERS
from tf_memlint.facts.events import REQUEST
from tf_memlint.gate import REPEATED, Together
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

    # Opt-in: 2 of 7 findings worth acting on in the held-out corpus (rules/TFM202.md).

    default_enabled = False
    name = "graph-growth-in-session-loop"
    summary = "TensorFlow ops created inside a loop that calls sess.run: the graph grows every iteration"
    triggers = SESSION_RUN_TRIGGERS  # a loop that runs a session
    # one loop or request handler (or a function it calls) that both runs a session and adds ops:
    # a TF call, an optimizer's graph method, or, in the command, another module's function doing
    # either. Every path of the rule reports a loop or handler that does both (_runs_session).
    structure = Together(REPEATED, (SESSION_RUN_TRIGGERS | {RUNS_SESSION},
                                    {OP_NAMESPACE, OPS} | {"." + method for method in OPTIMIZER_GRAPH_METHODS}))
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
        # Two measures of "small" (through a call, the loops open at the call): kept apart so
        # that findings do not change with this layout.
        limit = self.settings["session_loop_min_iterations"]
        return open_loops_run_fewer_than(context, limit) if through_call else runs_fewer_than(context, loops, limit)

    def _runs_session(self, loops: list, where: cst.CSTNode, through_call: bool) -> bool:
        """The code that adds the ops also runs a TF1 session: in-file, any loop around the call
        runs one itself; through a call or in a handler, the innermost loop or the handler runs
        one, itself or through the calls it makes."""
        context = self.context
        if not through_call:
            return any(context.sessions.loop_runs_session(loop) for loop in loops)
        if context.sessions.loop_runs_session(where):
            return True
        functions = context.functions
        return any(functions.reach(call, RUNS_SESSION) is not None for call in context.calls_in(where))

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
        where, per = place
        loops = context.loops_running(node)
        if not self._runs_session(loops, where, through_call=True) or self._exempt(loops, where, through_call=True):
            return
        if not first_time(self._reach_places, where):
            return
        label, witness = found
        self.report(node, f"{label}() adds ops to the TF1 graph {per} of code that runs a session (calls "
                          f"{context.functions.describe(witness)}); build the ops once and feed the values "
                          f"that change")

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
        if len(found) == 1:
            self.report(node, f"{what}() inside a loop that calls sess.run adds ops to the graph on every "
                              f"iteration; build it once before the loop and feed the values that change")
            return
        lines = ", ".join(f"{w}()" for _n, w in found[1:])
        self.report(node, f"{what}() and {len(found) - 1} more op-creating statement"
                          f"{'s' if len(found) > 2 else ''} ({lines}) inside a loop that calls sess.run add "
                          f"ops to the graph on every iteration; build them once before the loop and feed "
                          f"the values that change")
