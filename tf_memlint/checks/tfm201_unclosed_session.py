"""TFM201 unclosed-session: a TF1 session made again and again, or outliving its use, never closed."""

from __future__ import annotations

import libcst as cst

from tf_memlint.facts.callers import ENTRY_POINTS
from tf_memlint.facts.functions import RETURNS_SESSION, SESSION
from tf_memlint.facts.repetition import first_time, where_repeated
from tf_memlint.facts.sessions import INTERACTIVE_SESSION, SESSION_CLASSES
from tf_memlint.gate import ANYWHERE, NOTEBOOK, OUTSIDE_WITH, OWNER_CALLED, REPEATED, Inside
from tf_memlint.rule import Rule, register
from tf_memlint.syntax import STORING_METHODS, code_of, dotted_name, is_self_attribute


@register
class UnclosedSession(Rule):
    """A TF1 session that is made again and again, or outlives its use, without being closed.

    Bad::

        for graph in graphs:
            pool.append(tf.compat.v1.Session(graph=graph))   # one more open session per iteration

        sess = tf.compat.v1.InteractiveSession()   # the default session from now on...
        sess = tf.compat.v1.InteractiveSession()   # ...still, after a newer one is opened

    Good::

        with tf.compat.v1.Session(graph=graph) as sess:
            sess.run(y)

    The harm is repetition and lifetime, not the letter (see rules/TFM201.md): fires for a session
    created in a loop or comprehension and kept (appended, stored in a container or on an object,
    captured); an ``InteractiveSession`` superseded by a later session in the module, or opened
    in a function other than the program's entry point (it installs itself as the default session:
    rebinding or returning does not free it; kept on ``self``, it is judged as any session on ``self``); a session stored on an object or in a closure whose
    owner is created or called repeatedly (a loop, a comprehension, a function called in one); in a notebook, a
    module-level session still referenced when another one is opened. Silent for a session at
    script level, in the ``__main__`` block or the entry-point function, a notebook's single
    session (each is used until the program or kernel ends), a plain session rebound (CPython
    frees it, measured), closed (``close()``, ``with``, ``closing``), returned or yielded (the
    caller owns it), handed to Keras (``set_session``, any spelling), or held by a local name.
    """

    code = "TFM201"
    once_confidence = "medium"
    reaches_across_modules = True  # its reach path: _through_call

    name = "unclosed-session"
    summary = "tf.Session()/InteractiveSession() made per iteration, superseded or kept by a long-lived owner, never closed"
    triggers = SESSION_CLASSES  # a session created here
    # An InteractiveSession anywhere; a session made in a def, a loop or a comprehension (once at
    # module or class-body level it lives as long as the program that uses it: silent, _owner),
    # not as a with item (closed); in a notebook, anywhere (superseded); or, in the command, a call
    # per iteration/request of another module's function that opens one
    # (made in a def, it is reported only where its owner, the def or the class holding it on
    # self, is made or called again: _repeated; OWNER_CALLED)
    structure = Inside(ANYWHERE, {INTERACTIVE_SESSION}) | Inside((OWNER_CALLED, OUTSIDE_WITH), SESSION_CLASSES) \
        | Inside(NOTEBOOK, SESSION_CLASSES) | Inside(REPEATED, {SESSION, RETURNS_SESSION})

    def __init__(self, context, settings) -> None:
        super().__init__(context, settings)
        self._holders: dict[int, tuple] = {}  # creation call -> how its value is held
        self._reported: set[int] = set()
        self._comprehensions = 0
        self._sites: dict[str, list[tuple]] | None = None
        self._creations: list[cst.Call] | None = None
        self._reach_places: set[int] = set()  # loops and handlers reported through a call

    def _hold(self, expr: cst.BaseExpression | None, *how) -> None:
        if expr is not None and self.context.sessions.is_session_creation(expr):
            self._holders.setdefault(id(expr), how)

    # How the created session is held: seen before the call itself is visited.
    def visit_WithItem(self, node: cst.WithItem) -> None:
        item = node.item
        if isinstance(item, cst.Call) and isinstance(item.func, cst.Attribute) \
                and item.func.attr.value == "as_default" \
                and self.context.sessions.is_session_creation(item.func.value):
            # `with tf.Session().as_default() as sess:` does not close it: judged like `sess = ...`
            if node.asname is not None:
                self._hold(item.func.value, "target", node.asname.name)
            else:
                self._hold(item.func.value, "dropped")  # nothing keeps it once the block ends
            return
        self._hold(item, "closed")

    def visit_Return(self, node: cst.Return) -> None:
        self._hold(node.value, "returned")

    def visit_Yield(self, node: cst.Yield) -> None:
        if isinstance(node.value, cst.BaseExpression):
            self._hold(node.value, "returned")

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value != "as_default":
            self._hold(node.value, "dropped")  # tf.Session().run(x): dropped (and freed) right away

    def visit_Arg(self, node: cst.Arg) -> None:
        self._hold(node.value, "given")  # closing(tf.Session()), set_session(tf.Session()), Wrapper(...)

    def visit_Call(self, node: cst.Call) -> None:
        self._through_call(node)  # a function that opens a kept session, called per iteration/request
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in STORING_METHODS:
            for arg in node.args:  # sessions.append(tf.Session()): stored, cannot be closed by name
                if self.context.sessions.is_session_creation(arg.value):
                    self._holders[id(arg.value)] = ("stored",)
        if self.context.sessions.is_session_creation(node) and id(node) not in self._reported:
            self._judge(node, self._holders.get(id(node), ("dropped",)))

    def visit_Assign(self, node: cst.Assign) -> None:
        if self.context.sessions.is_session_creation(node.value):
            target = node.targets[0].target
            self._hold(node.value, "target", target)

    def visit_ListComp(self, node) -> None:
        self._comprehensions += 1
        self._hold(node.value if isinstance(node, cst.DictComp) else node.elt, "stored")  # a list of sessions

    def leave_ListComp(self, original_node) -> None:
        self._comprehensions -= 1

    visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_ListComp
    leave_SetComp = leave_DictComp = leave_GeneratorExp = leave_ListComp

    # The reach path --------------------------------------------------------------------------
    def _through_call(self, node: cst.Call) -> None:
        """A call whose function opens a session that stays alive (an InteractiveSession, one
        stored in a container), or a session factory whose result is stored, per iteration/request."""
        context = self.context
        functions = context.functions
        if not functions.possible(SESSION):
            return
        place = where_repeated(context, node)
        if place is None:
            return
        found = functions.reach(node, SESSION)
        if found is None:
            found = functions.reach(node, RETURNS_SESSION)
            if found is None or not self._stored(node):
                return
        where, per = place
        if self._closed_each_time(node) or not first_time(self._reach_places, where):
            return
        label, witness = found
        self.report(node, f"{label}() opens a TF1 session {per} that is kept alive and never closed (calls "
                          f"{functions.describe(witness)}); open one session once, or close each one")

    def _closed_each_time(self, call: cst.Call) -> bool:
        """``obj = Model(...)`` whose ``obj.close()`` runs in the same loop (in a ``finally``, say):
        each object's session is closed before the next one is made."""
        context = self.context
        loops = context.loops_running(call)
        if not loops:
            return False
        nodes = context.nodes_in(loops[-1])
        names = {t.target.value for n in nodes if isinstance(n, cst.Assign) and n.value is call
                 for t in n.targets if isinstance(t.target, cst.Name)}
        return bool(names) and any(
            isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == "close"
            and isinstance(n.func.value, cst.Name) and n.func.value.value in names for n in nodes)

    def _stored(self, call: cst.Call) -> bool:
        """``sessions.append(make_session())`` / ``cache[k] = make_session()`` in the current scope."""
        context = self.context
        frame = context.function
        for node in context.nodes_in(frame.node if frame is not None else context.module):
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                    and node.func.attr.value in STORING_METHODS and any(a.value is call for a in node.args):
                return True
            if isinstance(node, cst.Assign) and node.value is call \
                    and any(isinstance(t.target, cst.Subscript) for t in node.targets):
                return True
        return False

    # The decision ---------------------------------------------------------------------------
    def _judge(self, node: cst.Call, how: tuple) -> None:
        context = self.context
        interactive = context.call_name(node) == INTERACTIVE_SESSION
        kind = how[0]
        if kind == "target":
            kind = self._held_by(how[1], node)
        if kind in ("closed", "given") or (kind == "returned" and not interactive):
            return  # a returned session is judged where its factory is called (RETURNS_SESSION)
        repeated = bool(context.loops_running(node)) or self._comprehensions > 0
        spelling = code_of(node.func)
        # An InteractiveSession on self is the object's session: its owner's repetition decides,
        # as for any session kept on self (held-out: agents and autoencoders made once by main()).
        if interactive and kind != "self":
            if repeated:
                return self._report(node, f"{spelling}() is opened on every iteration and each one stays "
                                          f"the default session, never freed; open one before the loop "
                                          f"or use `with tf.compat.v1.Session() as sess:`")
            if context.function is None and self._superseded(node):
                return self._report(node, f"{spelling}() stays the default session after a later session "
                                          f"is opened: it is never freed; close() it first or use `with`")
            frame = context.function
            if frame is not None and isinstance(frame.node, cst.FunctionDef) \
                    and not self._entry_point(frame.node.name.value):
                # Outliving the call costs only when the call comes again: a train() or playGame()
                # that every site here runs once leaves one session to a program that ends with it;
                # a predict() is made to be called per input, wherever its other callers are.
                name = frame.node.name.value
                once = name not in ENTRY_POINTS and self._repeated(name) is False
                return self._report(node, f"{spelling}() in {name}() installs itself as the "
                                          f"default session and outlives the call; use "
                                          f"`with tf.compat.v1.Session() as sess:` or close() it",
                                    once_confidence="low" if once else None)
            return
        if kind in ("stored", "self", "captured"):
            if repeated:
                return self._report(node, f"{spelling}() is created on every iteration and kept "
                                          f"({_KEPT[kind]}) without close(): each one holds its memory and "
                                          f"graph; close it or use `with {spelling}() as sess:`")
            owner = self._owner(kind)
            if owner is None:
                return  # module level, once: lives as long as the program that uses it
            # Unknown (no site in this file: library code) stays silent: on the development corpus
            # every such owner was made once per program (20 of 20, 4 repos).
            if self._repeated(owner):
                each = f"every {owner} object" if kind == "self" else f"every call of {owner}()"
                return self._report(node, f"{spelling}() is kept ({_KEPT[kind]}) but never closed: {each} "
                                          f"holds one more session until close(); add a close() or use `with`")
            return
        if kind == "plain" and context.notebook and context.function is None \
                and len(how) > 1 and isinstance(how[1], cst.Name) and self._superseded(node, how[1].value):
            self._report(node, f"{spelling}() bound to {how[1].value} is still referenced when a later "
                               f"session is opened: the kernel keeps both; close() it first or use `with`")

    def _report(self, node: cst.Call, message: str, once_confidence: str | None = None) -> None:
        if id(node) not in self._reported:
            self._reported.add(id(node))
            self.report(node, message, once_confidence=once_confidence)

    def _held_by(self, target: cst.BaseExpression, session: cst.BaseExpression) -> str:
        """How the session bound to ``target`` is held: closed, given (to Keras, ``closing``),
        returned, stored (in a container), self (an attribute of self), captured (by a closure
        that leaves), or plain (a name, freed when rebound or when its function returns)."""
        context = self.context
        if isinstance(target, cst.Name):
            frame = context.function
            where = frame.node if frame is not None else context.module
            name = target.value

            def same(expr: cst.BaseExpression) -> bool:
                return type(expr) is cst.Name and expr.value == name
            held = "plain"
        elif is_self_attribute(target) and context.enclosing_class is not None:
            where, attr = context.enclosing_class, target.attr.value  # type: ignore[attr-defined]

            def same(expr: cst.BaseExpression) -> bool:
                return (type(expr) is cst.Attribute and expr.attr.value == attr
                        and type(expr.value) is cst.Name and expr.value.value == "self")
            held = "self"
        elif isinstance(target, cst.Subscript):
            return "stored"  # sessions[k] = tf.Session(): stored, nothing closes it by this name
        else:
            return "plain"  # an attribute of a local object: freed with it
        # Every node of the function, class or module, often thousands: tested by exact type
        # (LibCST's node classes are ABCs, and isinstance against one costs a Python-level call).
        for node in context.nodes_in(where, into_functions=True):
            kind = type(node)
            if kind is cst.Call:
                func = node.func
                if type(func) is cst.Attribute and func.attr.value in ("close", "__exit__") and same(func.value):
                    return "closed"
                if type(func) is cst.Attribute and func.attr.value == "close" and node.args \
                        and same(node.args[0].value) and (dotted_name(func.value) or "").endswith("Session"):
                    return "closed"  # tf.InteractiveSession.close(sess): the method called on the class
                if any(same(a.value) for a in node.args):
                    if self._gives_away(node):
                        return "given"
                    if type(func) is cst.Attribute and func.attr.value in STORING_METHODS:
                        held = "stored"  # OPEN_SESSIONS.append(sess)
            elif kind is cst.WithItem:
                if same(node.item):
                    return "closed"
            elif kind is cst.Return or kind is cst.Yield:
                value = node.value
                if value is not None and type(value) is not cst.From and same(value):
                    return "returned"
            elif kind is cst.Assign and held == "plain" and same(node.value) and any(
                    isinstance(t.target, cst.Subscript) or is_self_attribute(t.target)
                    for t in node.targets):
                held = "self" if is_self_attribute(node.targets[0].target) else "stored"
        if held == "plain" and isinstance(target, cst.Name) and context.function is not None \
                and self._captured(where, target.value):
            held = "captured"
        return held

    def _gives_away(self, call: cst.Call) -> bool:
        """``set_session(sess)`` in any spelling (``keras.backend``, ``tf.keras.backend``,
        ``keras.backend.tensorflow_backend``, ``K.set_session``): Keras keeps it for the program;
        ``closing(sess)`` closes it."""
        name = self.context.call_name(call) or dotted_name(call.func) or ""
        return name.rsplit(".", 1)[-1] == "set_session" or name in ("closing", "contextlib.closing")

    def _owner(self, kind: str) -> str | None:
        """Whose repetition decides: the class for a session on ``self``, else the function."""
        context = self.context
        if kind == "self" and context.enclosing_class is not None:
            return context.enclosing_class.name.value
        frame = context.function
        if frame is None or not isinstance(frame.node, cst.FunctionDef):
            return None
        return frame.node.name.value

    def _repeated(self, owner: str, _depth: int = 0) -> bool | None:
        """Is ``owner`` (a class or function of this module) made or called more than once per
        program? True: a site in a loop or comprehension, or in a function that is; False: every
        site once (module level, class body, the ``__main__`` block, an entry point, the
        ``__init__`` of such a class); None: no site in this file (library code) or too deep."""
        if _depth > 3:
            return None
        sites = self._call_sites().get(owner)
        if not sites:
            return None
        unknown = False
        for in_loop, function, klass in sites:
            if in_loop:
                return True
            if function is None or self._entry_point(function):
                continue
            outer = self._repeated(klass if function == "__init__" and klass else function, _depth + 1)
            if outer:
                return True
            unknown = unknown or outer is None
        return None if unknown else False

    def _call_sites(self) -> dict[str, list[tuple]]:
        if self._sites is None:
            collector = _SiteCollector()
            self.context.walked.replay(collector)  # LibCST's visit would rebuild every node
            self._sites, self._entries = collector.sites, collector.entries
        return self._sites

    def _entry_point(self, function: str) -> bool:
        """``main`` run by ``tf.app.run``/``absl.app.run``, or the last statement of the
        ``__main__`` block: it runs once, and the program ends with it."""
        self._call_sites()
        return function in self._entries

    def _superseded(self, node: cst.Call, name: str | None = None) -> bool:
        """A session is created after ``node`` in this module (under another name than ``name``,
        and not closed by ``with``)."""
        if self._creations is None:
            self._creations = [n for n in self.context.nodes_in(self.context.module, into_functions=True)
                               if isinstance(n, cst.Call) and self.context.sessions.is_session_creation(n)]
            closed = {id(n.item) for n in self.context.nodes_in(self.context.module, into_functions=True)
                      if isinstance(n, cst.WithItem)}
            rebinds = {}
            for n in self.context.nodes_in(self.context.module, into_functions=True):
                if isinstance(n, cst.Assign) and isinstance(n.targets[0].target, cst.Name):
                    rebinds[id(n.value)] = n.targets[0].target.value
            self._closed_items, self._bound_to = closed, rebinds
        later = False
        for creation in self._creations:
            if later and id(creation) not in self._closed_items:
                if name is None or self._bound_to.get(id(creation)) not in (None, name):
                    return True
                if self._bound_to.get(id(creation)) == name:
                    return False  # rebound under the same name first: freed
            later = later or creation is node
        return False

    def _captured(self, where: cst.CSTNode, name: str) -> bool:
        """A nested def or lambda that reads ``name`` leaves ``where`` (returned, or stored on
        ``self``): the closure keeps the session alive after the function returns."""
        context = self.context
        readers: set[str] = set()
        lambdas: list[cst.Lambda] = []
        for node in context.nodes_in(where, into_functions=True):
            if isinstance(node, (cst.FunctionDef, cst.Lambda)) and node is not where and any(
                    isinstance(n, cst.Name) and n.value == name
                    for n in context.nodes_in(node, into_functions=True)):
                if isinstance(node, cst.FunctionDef):
                    readers.add(node.name.value)
                else:
                    lambdas.append(node)
        if not readers and not lambdas:
            return False
        for node in context.nodes_in(where):
            if isinstance(node, cst.Return) and node.value is not None:
                inside = [node.value, *context.nodes_in(node.value, into_functions=True)]
                called = {id(n.func) for n in inside if isinstance(n, cst.Call)}  # evaluate(b): a call
                if any((isinstance(n, cst.Name) and n.value in readers and id(n) not in called)
                       or any(n is lam for lam in lambdas) for n in inside):
                    return True
            if isinstance(node, cst.Assign) and any(is_self_attribute(t.target) for t in node.targets):
                value = node.value
                if (isinstance(value, cst.Name) and value.value in readers) \
                        or any(value is lam for lam in lambdas):
                    return True
        return False




_KEPT = {"stored": "in a container", "self": "on self", "captured": "by a closure that outlives the call"}


class _SiteCollector(cst.CSTVisitor):
    """Where each name is called or instantiated: (in a loop or comprehension, the enclosing
    function's name or None at module level, that function's class or None)."""

    def __init__(self) -> None:
        self.sites: dict[str, list[tuple]] = {}
        self.entries: set[str] = set()
        self._functions: list[tuple[str, str | None, int]] = []  # name, class, loop depth at entry
        self._classes: list[str] = []
        self._loops = 0

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._classes.append(node.name.value)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._classes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions.append((node.name.value, self._classes[-1] if self._classes else None, self._loops))
        self._loops = 0

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._loops = self._functions.pop()[2]

    def visit_For(self, node) -> None:
        self._loops += 1

    def leave_For(self, original_node) -> None:
        self._loops -= 1

    visit_While = visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_For
    leave_While = leave_ListComp = leave_SetComp = leave_DictComp = leave_GeneratorExp = leave_For

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        name = func.value if isinstance(func, cst.Name) else (
            func.attr.value if isinstance(func, cst.Attribute) else None)
        function, klass = (self._functions[-1][:2] if self._functions else (None, None))
        if name is not None:
            self.sites.setdefault(name, []).append((self._loops > 0, function, klass))
        if name == "run" and (dotted_name(func) or "").endswith("app.run"):
            main = next((a.value for a in node.args if a.keyword is None or a.keyword.value == "main"), None)
            self.entries.add(main.value if isinstance(main, cst.Name) else "main")

    def visit_If(self, node: cst.If) -> None:
        test = node.test
        if not self._functions and isinstance(test, cst.Comparison) and isinstance(test.left, cst.Name) \
                and test.left.value == "__name__" and isinstance(node.body, cst.IndentedBlock):
            statement = node.body.body[-1] if node.body.body else None
            if isinstance(statement, cst.SimpleStatementLine):
                expr = statement.body[-1]
                value = expr.value if isinstance(expr, (cst.Expr, cst.Assign)) else None
                if isinstance(value, cst.Call) and dotted_name(value.func) in ("sys.exit", "exit") and value.args:
                    value = value.args[0].value
                if isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
                    self.entries.add(value.func.value)
