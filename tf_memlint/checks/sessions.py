"""TFM2xx: TF1 sessions and the graphs they run."""

from __future__ import annotations

import libcst as cst

from tf_memlint.context import code_of, dotted_name
from tf_memlint.rule import Rule, register


@register
class UnclosedSession(Rule):
    """A TF1 session kept alive without ever being closed.

    Bad::

        sess = tf.compat.v1.Session(graph=graph)   # module level: lives as long as the program
        sessions.append(sess)                       # or stored in a list, on self, in a closure

    Good::

        with tf.compat.v1.Session(graph=graph) as sess:
            sess.run(y)

    Fires for a ``Session()`` / ``InteractiveSession()`` that stays referenced: bound at module
    level, stored on ``self`` or in a container, captured by a nested function, or an
    ``InteractiveSession`` (it installs itself as the default session), and that nothing in its
    scope closes (``sess.close()``, often in a ``finally``; ``with sess:``). Silent for a session
    returned or yielded (the caller owns it), handed to ``keras.backend.set_session``, used once
    (``tf.Session().run(x)``), or held only by a local name: CPython frees it when the function
    returns or the name is rebound (measured: no growth), so that is not a leak.
    """

    code = "TFM201"
    name = "unclosed-session"
    summary = "tf.Session()/InteractiveSession() kept alive (global, stored, captured) and never closed"

    def __init__(self, context, settings) -> None:
        super().__init__(context, settings)
        self._handled: set[int] = set()
        self._reported: set[int] = set()

    def _handle(self, expr: cst.BaseExpression | None) -> None:
        if expr is not None and self.context.is_session_creation(expr):
            self._handled.add(id(expr))

    # Uses that close the session or give it away: seen before the call itself is visited.
    def visit_WithItem(self, node: cst.WithItem) -> None:
        item = node.item
        if isinstance(item, cst.Call) and isinstance(item.func, cst.Attribute) \
                and item.func.attr.value == "as_default" \
                and self.context.is_session_creation(item.func.value):
            # `with tf.Session().as_default() as sess:` does not close it: judged like `sess = ...`
            if node.asname is not None and not self._released(node.asname.name, item.func.value):
                self._report(item.func.value)
            elif node.asname is None and self.context.call_name(item.func.value) != _INTERACTIVE:
                self._handled.add(id(item.func.value))  # nothing keeps it once the block ends
            return
        self._handle(item)

    def visit_Return(self, node: cst.Return) -> None:
        self._handle(node.value)

    def visit_Yield(self, node: cst.Yield) -> None:
        if isinstance(node.value, cst.BaseExpression):
            self._handle(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value != "as_default" and self.context.call_name(node.value) != _INTERACTIVE:
            self._handle(node.value)  # tf.Session().run(x): dropped (and freed) right away

    def visit_Arg(self, node: cst.Arg) -> None:
        self._handle(node.value)  # closing(tf.Session()), set_session(tf.Session()): given away

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _STORING_METHODS:
            for arg in node.args:  # sessions.append(tf.Session()): stored, cannot be closed by name
                if self.context.is_session_creation(arg.value):
                    self._report(arg.value)
        if self.context.is_session_creation(node) and id(node) not in self._handled:
            if self.context.call_name(node) == "tensorflow.InteractiveSession" or self._at_module_level():
                self._report(node)  # a bare `tf.InteractiveSession()` installs itself as the default

    def visit_Assign(self, node: cst.Assign) -> None:
        if not self.context.is_session_creation(node.value):
            return
        self._handled.add(id(node.value))
        for target in node.targets:
            if not self._released(target.target, node.value):
                self._report(node.value)
                return

    def _report(self, node: cst.BaseExpression) -> None:
        if id(node) in self._reported:
            return
        self._reported.add(id(node))
        self._handled.add(id(node))
        spelling = code_of(node.func)  # type: ignore[attr-defined]
        self.report(node, f"{spelling}() is kept alive but never closed: it holds its memory and graph "
                          f"until close(); use `with {spelling}() as sess:` or close it in a finally")

    def _at_module_level(self) -> bool:
        return self.context.function is None

    def _released(self, target: cst.BaseExpression, session: cst.BaseExpression) -> bool:
        """True unless the session bound to ``target`` stays alive without being closed."""
        context = self.context
        interactive = context.call_name(session) == "tensorflow.InteractiveSession"
        if isinstance(target, cst.Name):
            frame = context.function
            where = frame.node if frame is not None else context.module
            name = target.value

            def same(expr: cst.BaseExpression) -> bool:
                return isinstance(expr, cst.Name) and expr.value == name
            kept = interactive or frame is None or name in frame.scope.declared_global
        elif (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
              and target.value.value == "self" and context.enclosing_class is not None):
            where, attr = context.enclosing_class, target.attr.value

            def same(expr: cst.BaseExpression) -> bool:
                return (isinstance(expr, cst.Attribute) and expr.attr.value == attr
                        and isinstance(expr.value, cst.Name) and expr.value.value == "self")
            kept = True
        elif isinstance(target, cst.Subscript):
            return False  # sessions[k] = tf.Session(): stored, nothing closes it by this name
        else:
            return context.function is not None and not interactive  # an attribute of a local object
        escapes = False
        for node in context.walk(where, into_functions=True):
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                    and node.func.attr.value in ("close", "__exit__") and same(node.func.value):
                return True
            if isinstance(node, cst.WithItem) and same(node.item):
                return True
            if isinstance(node, (cst.Return, cst.Yield)) and isinstance(node.value, cst.BaseExpression) \
                    and same(node.value):
                return True
            if isinstance(node, cst.Call) and any(same(a.value) for a in node.args):
                if context.call_name(node) == "keras.backend.set_session" or dotted_name(node.func) in (
                        "closing", "contextlib.closing"):
                    return True
                if isinstance(node.func, cst.Attribute) and node.func.attr.value in _STORING_METHODS:
                    escapes = True  # OPEN_SESSIONS.append(sess)
            if isinstance(node, cst.Assign) and same(node.value) and any(
                    isinstance(t.target, cst.Subscript) or _is_self_attribute(t.target)
                    for t in node.targets):
                escapes = True  # self.sess = sess / cache[k] = sess
        if not kept and not escapes and isinstance(target, cst.Name):
            escapes = self._captured(where, target.value)
        return not (kept or escapes)

    def _captured(self, where: cst.CSTNode, name: str) -> bool:
        """A nested def or lambda that reads ``name`` leaves ``where`` (returned, or stored on
        ``self``): the closure keeps the session alive after the function returns."""
        context = self.context
        readers: set[str] = set()
        lambdas: list[cst.Lambda] = []
        for node in context.walk(where, into_functions=True):
            if isinstance(node, (cst.FunctionDef, cst.Lambda)) and node is not where and any(
                    isinstance(n, cst.Name) and n.value == name
                    for n in context.walk(node, into_functions=True)):
                if isinstance(node, cst.FunctionDef):
                    readers.add(node.name.value)
                else:
                    lambdas.append(node)
        if not readers and not lambdas:
            return False
        for node in context.walk(where):
            if isinstance(node, cst.Return) and node.value is not None:
                inside = [node.value, *context.walk(node.value, into_functions=True)]
                called = {id(n.func) for n in inside if isinstance(n, cst.Call)}  # evaluate(b): a call
                if any((isinstance(n, cst.Name) and n.value in readers and id(n) not in called)
                       or any(n is lam for lam in lambdas) for n in inside):
                    return True
            if isinstance(node, cst.Assign) and any(_is_self_attribute(t.target) for t in node.targets):
                value = node.value
                if (isinstance(value, cst.Name) and value.value in readers) \
                        or any(value is lam for lam in lambdas):
                    return True
        return False


def _is_self_attribute(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self"


_INTERACTIVE = "tensorflow.InteractiveSession"
_STORING_METHODS = frozenset({"append", "extend", "insert", "add", "appendleft", "setdefault"})


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
        loops = self.context.open_loops
        fresh = bool(loops) and any(self.context.makes_fresh_graph(item.item, loops[-1])
                                    for item in node.items)
        self._fresh_graph += fresh
        self._statements.append(node)
        self._with_fresh.append(fresh)

    def leave_With(self, original_node: cst.With) -> None:
        self._fresh_graph -= self._with_fresh.pop()
        self._statements.pop()

    def visit_Call(self, node: cst.Call) -> None:
        context = self.context
        loops = context.open_loops
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
