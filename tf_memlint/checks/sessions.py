"""TFM2xx: TF1 sessions and the graphs they run."""

from __future__ import annotations

import libcst as cst

from tf_memlint.context import code_of
from tf_memlint.rule import Rule, register


@register
class UnclosedSession(Rule):
    """A TF1 session that is neither used with ``with`` nor closed.

    Bad::

        sess = tf.compat.v1.Session(graph=graph)
        sessions.append(sess)          # kept alive, never closed

    Good::

        with tf.compat.v1.Session(graph=graph) as sess:
            sess.run(y)

    Silent for a session closed anywhere in its scope (``sess.close()``, often in a ``finally``),
    used as ``with sess:``, returned or yielded (the caller owns it), handed to
    ``keras.backend.set_session``, or used once and dropped (``tf.Session().run(x)``).
    """

    code = "TFM201"
    name = "unclosed-session"
    summary = "tf.Session()/InteractiveSession() neither used with `with` nor closed"

    def __init__(self, context, settings) -> None:
        super().__init__(context, settings)
        self._handled: set[int] = set()

    def _handle(self, expr: cst.BaseExpression | None) -> None:
        if expr is not None and self.context.is_session_creation(expr):
            self._handled.add(id(expr))

    # Uses that close the session or give it away: seen before the call itself is visited.
    def visit_WithItem(self, node: cst.WithItem) -> None:
        self._handle(node.item)

    def visit_Return(self, node: cst.Return) -> None:
        self._handle(node.value)

    def visit_Yield(self, node: cst.Yield) -> None:
        if isinstance(node.value, cst.BaseExpression):
            self._handle(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value != "as_default":
            self._handle(node.value)  # tf.Session().run(x): dropped (and freed) right away

    def visit_Arg(self, node: cst.Arg) -> None:
        self._handle(node.value)  # closing(tf.Session()), set_session(tf.Session()): given away

    def visit_Assign(self, node: cst.Assign) -> None:
        if not self.context.is_session_creation(node.value):
            return
        self._handled.add(id(node.value))
        for target in node.targets:
            if not self._released(target.target):
                self._report(node.value)
                return

    def visit_Call(self, node: cst.Call) -> None:
        if self.context.is_session_creation(node) and id(node) not in self._handled:
            self._report(node)  # a bare `tf.InteractiveSession()` installs itself as the default

    def _report(self, node: cst.Call) -> None:
        self._handled.add(id(node))
        spelling = code_of(node.func)
        self.report(node, f"{spelling}() is never closed: a session kept alive holds its memory and "
                          f"graph until close(); use `with {spelling}() as sess:` or close it in a finally")

    def _released(self, target: cst.BaseExpression) -> bool:
        """Is the session bound to ``target`` closed, used as a context manager, or given away?"""
        context = self.context
        if isinstance(target, cst.Name):
            frame = context.function
            where = frame.node if frame is not None else context.module
            name = target.value

            def same(expr: cst.BaseExpression) -> bool:
                return isinstance(expr, cst.Name) and expr.value == name
        elif (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
              and target.value.value == "self" and context.enclosing_class is not None):
            where, attr = context.enclosing_class, target.attr.value

            def same(expr: cst.BaseExpression) -> bool:
                return (isinstance(expr, cst.Attribute) and expr.attr.value == attr
                        and isinstance(expr.value, cst.Name) and expr.value.value == "self")
        else:
            return False  # stored in a container or elsewhere: nothing here closes it
        for node in context.walk(where, into_functions=True):
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                    and node.func.attr.value in ("close", "__exit__") and same(node.func.value):
                return True
            if isinstance(node, cst.WithItem) and same(node.item):
                return True
            if isinstance(node, (cst.Return, cst.Yield)) and isinstance(node.value, cst.BaseExpression) \
                    and same(node.value):
                return True
            if isinstance(node, cst.Call) and any(same(a.value) for a in node.args) and (
                    context.call_name(node) in ("keras.backend.set_session",)
                    or (isinstance(node.func, cst.Name) and node.func.value == "closing")
                    or context.call_name(node) == "contextlib.closing"):
                return True
        return False


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
    name = "graph-growth-in-session-loop"
    summary = "TensorFlow ops created inside a loop that calls sess.run: the graph grows every iteration"
    options = {
        "session_loop_min_iterations": (
            10, "loops known to run fewer times than this (e.g. over a 2-item list) are not reported"),
    }

    def __init__(self, context, settings) -> None:
        super().__init__(context, settings)
        self._statements: list[cst.CSTNode] = []
        self._reported: set[int] = set()
        self._fresh_graph = 0  # `with` blocks, inside the loop, that install a new graph
        self._with_fresh: list[bool] = []

    # The statement being visited: one finding per statement, at its first op-creating call.
    def visit_For(self, node: cst.For) -> None:
        self._statements.append(node)

    def leave_For(self, original_node: cst.For) -> None:
        self._statements.pop()

    def visit_While(self, node: cst.While) -> None:
        self._statements.append(node)

    def leave_While(self, original_node: cst.While) -> None:
        self._statements.pop()

    def visit_If(self, node: cst.If) -> None:
        self._statements.append(node)

    def leave_If(self, original_node: cst.If) -> None:
        self._statements.pop()

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._statements.append(node)

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine) -> None:
        self._statements.pop()

    def visit_With(self, node: cst.With) -> None:
        loops = self.context.loops
        fresh = bool(loops) and any(self.context.makes_fresh_graph(item.item, loops[-1]) for item in node.items)
        self._fresh_graph += fresh
        self._statements.append(node)
        self._with_fresh.append(fresh)

    def leave_With(self, original_node: cst.With) -> None:
        self._fresh_graph -= self._with_fresh.pop()
        self._statements.pop()

    def visit_Call(self, node: cst.Call) -> None:
        context = self.context
        loops = context.loops
        if not loops or context.in_traced_function or self._fresh_graph:
            return
        if not context.creates_graph_ops(node):
            return
        loops = context.loops_running(node)
        if not loops:
            return
        statement = self._statements[-1] if self._statements else node
        if id(statement) in self._reported:
            return
        running = [loop for loop in loops if context.loop_runs_session(loop)]
        if not running or any(context.loop_resets_graph(loop) for loop in loops):
            return
        counts = [context.static_trip_count(loop) for loop in loops]
        if None not in counts and _product(counts) < self.settings["session_loop_min_iterations"]:
            return  # a bounded, small number of copies: not growth
        self._reported.add(id(statement))
        what = code_of(node.func)
        self.report(node, f"{what}() inside a loop that calls sess.run adds ops to the graph on every "
                          f"iteration; build it once before the loop and feed the values that change")


def _product(counts) -> int:
    total = 1
    for count in counts:
        total *= count
    return total
