"""Small facts about LibCST syntax that the context, its fact modules and the rules share.

Everything here is public and defined once; nothing here knows about TensorFlow (that is the
context's and the fact modules' job) or about where the walk is.
"""

from __future__ import annotations

import ast
import enum
import re
from typing import Callable, Iterator

import libcst as cst

from tf_memlint.walk import recorded_contains, walk

# TF1 calls that list the graph's variables or a collection: a Python list, whose `[0]` is a
# list's item, not a tensor sliced by a new op.
_TF_VARIABLE_LISTINGS = frozenset({"trainable_variables", "global_variables", "all_variables", "local_variables",
                                  "model_variables", "moving_average_variables", "get_collection",
                                  "get_collection_ref"})


def is_variable_listing(name: str | None) -> bool:
    """``name`` (a call's canonical name) is one of _TF_VARIABLE_LISTINGS."""
    return name is not None and name.startswith("tensorflow.") and name.rpartition(".")[2] in _TF_VARIABLE_LISTINGS

# ``trange(...)``: tqdm's range with a progress bar, called as range is.
TQDM_RANGES = frozenset({"tqdm.trange", "tqdm.auto.trange", "tqdm.notebook.trange", "tqdm.std.trange"})
# Builtins that iterate as many times as their one argument (``enumerate(range(10))``).
COUNT_KEEPING_CALLS = frozenset({"enumerate", "reversed", "list", "tuple"})
# A dict's views (``d.items()``).
DICT_VIEWS = frozenset({"keys", "items", "values"})

_EMPTY_MODULE = cst.Module(body=[])
# Methods that put their argument into the container they are called on (list, set, deque, dict).
STORING_METHODS = frozenset({"append", "extend", "insert", "add", "appendleft", "setdefault"})


class Kind(enum.Enum):
    """What a value is known to be. UNKNOWN means: the code cannot tell, so rules stay silent."""

    PY_INT = "Python int"
    PY_NUMBER = "Python number"
    PY_CONTAINER = "Python container"
    NDARRAY = "NumPy array"
    TENSOR = "tensor"
    DATASET = "tf.data.Dataset"
    UNKNOWN = "unknown"


def dotted_name(expr: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts: list[str] = []
    # By exact type: LibCST's node classes are ABCs (isinstance costs a Python-level call), and
    # this runs for most calls and attributes of every module linted.
    while type(expr) is cst.Attribute:
        parts.append(expr.attr.value)  # type: ignore[attr-defined]
        expr = expr.value  # type: ignore[attr-defined]
    if type(expr) is not cst.Name:
        return None
    parts.append(expr.value)  # type: ignore[attr-defined]
    return ".".join(reversed(parts))


def ast_dotted_name(node: ast.AST) -> str | None:
    """``dotted_name`` for a stdlib ``ast`` node (the gate's and project.py's trees)."""
    parts: list[str] = []
    while type(node) is ast.Attribute:
        parts.append(node.attr)  # type: ignore[attr-defined]
        node = node.value  # type: ignore[attr-defined]
    if type(node) is not ast.Name:
        return None
    parts.append(node.id)  # type: ignore[attr-defined]
    return ".".join(reversed(parts))


_AST_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _ast_fields(kind: type) -> tuple[str, ...]:
    fields = _AST_CHILD_FIELDS.get(kind)
    if fields is None:
        fields = _AST_CHILD_FIELDS[kind] = tuple(f for f in kind._fields if f != "ctx")  # type: ignore[attr-defined]
    return fields


def ast_children(node: ast.AST) -> list[ast.AST]:
    """``ast.iter_child_nodes(node)`` as a list, without the ``ctx`` markers (``Load``/``Store``/
    ``Del``, which no fact is about)."""
    found: list[ast.AST] = []
    for field in _AST_CHILD_FIELDS.get(type(node)) or _ast_fields(type(node)):
        value = getattr(node, field, None)
        if type(value) is list:
            found.extend(item for item in value if isinstance(item, ast.AST))
        elif isinstance(value, ast.AST):
            found.append(value)
    return found


def ast_nodes(root: ast.AST) -> list[ast.AST]:
    """The nodes of a stdlib ``ast`` tree in ``ast.walk``'s order, without the ``ctx`` markers.
    The gate walks every tree flake8 hands it; this is about 40% faster than ``ast.walk`` there
    (no generators, and the ``ctx`` of every name is not visited)."""
    found = [root]
    append = found.append
    index = 0
    node_type = ast.AST
    while index < len(found):
        node = found[index]
        index += 1
        for field in _AST_CHILD_FIELDS.get(type(node)) or _ast_fields(type(node)):
            value = getattr(node, field, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, node_type):
                        append(item)
            elif isinstance(value, node_type):
                append(value)
    return found


def ast_own_nodes(function: ast.AST, *skipped: type) -> list[ast.AST]:
    """The nodes of ``function`` (decorators and defaults included) in ``ast.walk``'s order, not
    those of the defs and lambdas nested in it, whose bodies run at another time, nor of the
    ``skipped`` kinds."""
    left_out = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, *skipped)
    found = [function]
    index = 0
    while index < len(found):
        node = found[index]
        index += 1
        found.extend(child for child in ast_children(node) if not isinstance(child, left_out))
    return found


def code_of(node: cst.CSTNode) -> str:
    """The node's source for a message: one line (comments dropped, whitespace collapsed, no
    space inside brackets), shortened to 60 characters with "..." (a finding is one line)."""
    import io
    import keyword
    import tokenize

    code = _EMPTY_MODULE.code_for_node(node)
    if "\n" in code or "\r" in code or "#" in code or "  " in code:
        parts: list[str] = []
        try:
            previous = None
            calls: list[bool] = []  # per open bracket: whether a trailing comma in it is optional
            for token in tokenize.generate_tokens(io.StringIO("(" + code + "\n)").readline):
                if token.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
                                  tokenize.DEDENT, tokenize.ENDMARKER):
                    continue
                if token.string in ")]}" and calls and calls.pop() and parts and parts[-1] == ",":
                    parts.pop()  # a "magic" trailing comma of a call or literal spread over lines
                if previous is not None and token.start != previous.end and previous.string not in "([{" \
                        and token.string not in ")]},":
                    parts.append(" ")
                if token.string in "([{" and token.type == tokenize.OP:
                    # optional in a call f(a,) and a list/dict/set literal; not in (a,) or x[a,]
                    after_value = previous is not None and (
                        (previous.type == tokenize.NAME and not keyword.iskeyword(previous.string))
                        or previous.string in ")]")
                    calls.append({"(": after_value, "[": not after_value, "{": True}[token.string])
                parts.append(token.string)
                previous = token
            code = "".join(parts[1:-1])
        except (tokenize.TokenError, SyntaxError):
            pass
        code = " ".join(code.split())
    if len(code) <= 60:
        return code
    cut = code[:57]
    space = cut.rfind(" ")
    return (cut[:space] if space > 30 else cut).rstrip(" ,") + "..."


def int_literal(expr: cst.BaseExpression) -> int | None:
    if isinstance(expr, cst.Integer):
        try:
            return int(expr.value.replace("_", ""), 0)
        except ValueError:  # e.g. "0777": a Python 2 leftover that still parses
            return None
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        inner = int_literal(expr.expression)
        return None if inner is None else -inner
    return None


def string_keyed(expr: cst.BaseExpression | None) -> cst.Name | None:
    """``x`` for ``x["key"]``: one entry of a dict (or of a batch of dicts) under a literal key."""
    if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Name) and len(expr.slice) == 1 \
            and isinstance(expr.slice[0].slice, cst.Index) and isinstance(expr.slice[0].slice.value, cst.SimpleString):
        return expr.value
    return None


def makes_list(expr: cst.BaseExpression | None) -> bool:
    """``[...]`` or ``list()``: a list made where it stands (whether ``list`` is still the builtin
    there is the caller's to judge)."""
    if isinstance(expr, cst.List):
        return True
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "list" \
        and not expr.args


def target_names(target: cst.BaseExpression) -> Iterator[str]:
    """The names an assignment target binds: ``a``, ``a, (b, *c)``."""
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from target_names(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from target_names(target.value)


def all_params(params: cst.Parameters) -> Iterator[cst.Param]:
    """Every parameter of a def or lambda, ``*args`` and ``**kwargs`` included."""
    yield from params.posonly_params
    yield from params.params
    yield from params.kwonly_params
    if isinstance(params.star_arg, cst.Param):
        yield params.star_arg
    if params.star_kwarg is not None:
        yield params.star_kwarg


def argument(call: cst.Call, position: int, keyword: str) -> cst.BaseExpression | None:
    """The argument at ``position`` (positional) or named ``keyword``, else None."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if any(a.star for a in call.args if a.keyword is None):
        return None
    return positional[position].value if position < len(positional) else None


def is_self_attribute(expr: cst.BaseExpression) -> bool:
    """``self.x``."""
    return isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self"


def function_name(expr: cst.BaseExpression) -> str | None:
    """``f`` for ``f`` and for ``self.f``; None otherwise."""
    if isinstance(expr, cst.Name):
        return expr.value
    if is_self_attribute(expr):
        return expr.attr.value  # type: ignore[attr-defined]
    return None


def has_input_signature(decorator: cst.BaseExpression) -> bool:
    """``tf.function(..., input_signature=<not None>)``: traced once per signature, not per value."""
    if not isinstance(decorator, cst.Call):
        return False
    return any(a.keyword is not None and a.keyword.value == "input_signature"
               and not (isinstance(a.value, cst.Name) and a.value.value == "None") for a in decorator.args)


def number_literal(expr: cst.BaseExpression) -> bool:
    """A number or bool literal, signed or not: ``3``, ``-0.5``, ``True``."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        expr = expr.expression
    return isinstance(expr, (cst.Integer, cst.Float)) or (
        isinstance(expr, cst.Name) and expr.value in ("True", "False"))


class _Finder(cst.CSTVisitor):
    def __init__(self, target: cst.CSTNode) -> None:
        self.target = target
        self.found = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if node is self.target:
            self.found = True
        return not self.found


def contains(root: cst.CSTNode, target: cst.CSTNode) -> bool:
    """``target`` is ``root`` or a node under it (by identity)."""
    known = recorded_contains(root, target)
    if known is not None:
        return known
    finder = _Finder(target)
    walk(root, finder)
    return finder.found


def subclasses(classes: list[cst.ClassDef], is_base: Callable[[cst.BaseExpression], bool]) -> set[str]:
    """Names of the ``classes`` that derive from a base ``is_base`` accepts, directly or through
    another of the ``classes`` (class Block(Layer); class Net(Block)): a fixed point, since a
    class may be defined before its base."""
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        for cls in classes:
            if cls.name.value in found:
                continue
            if any(is_base(base.value) or (isinstance(base.value, cst.Name) and base.value.value in found)
                   for base in cls.bases):
                found.add(cls.name.value)
                changed = True
    return found


def loop_statements(loop: cst.CSTNode) -> list[cst.CSTNode]:
    """Every statement of ``loop``'s body (and its ``else``), nested blocks, ``elif`` and ``else``
    included, not the bodies of defs and classes (they run at another time). Statements only are
    walked: cheap for a loop's body."""
    found: list[cst.CSTNode] = []
    stack = [loop]
    while stack:
        statement = stack.pop()
        if statement is not loop:
            found.append(statement)
        inner = getattr(getattr(statement, "body", None), "body", None)
        if not isinstance(inner, (list, tuple)) or isinstance(statement, cst.SimpleStatementLine):
            continue
        stack.extend(s for s in inner if not isinstance(s, (cst.FunctionDef, cst.ClassDef)))
        orelse = getattr(statement, "orelse", None)
        if orelse is not None:
            stack.append(orelse)
    return found


def ends_loop_after(loop: cst.For | cst.While, node: cst.CSTNode) -> bool:
    """Once ``node`` has run, ``loop`` ends: a block on the way down from the loop's body to
    ``node`` goes on, after the statement holding ``node``, to a ``break`` of this loop or to a
    ``return`` or ``raise`` (``while True: choice = input(); if choice == "y": model = build();
    break``: the model is built once)."""
    return _ends_after(list(loop.body.body) if isinstance(loop.body, cst.IndentedBlock) else [], node, False)


def _ends_after(statements: list, node: cst.CSTNode, in_inner_loop: bool) -> bool:
    for index, statement in enumerate(statements):
        if not contains(statement, node):
            continue
        if any(_exits(later, in_inner_loop) for later in statements[index + 1:]):
            return True
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef, cst.SimpleStatementLine)):
            return False
        inner = in_inner_loop or isinstance(statement, (cst.For, cst.While))
        for block in _blocks_of(statement):
            if contains(block, node):
                return _ends_after(list(block.body) if isinstance(block, cst.IndentedBlock) else [], node, inner)
        return False
    return False


def _blocks_of(statement: cst.CSTNode) -> list:
    """The indented blocks of a compound statement: body, ``elif``/``else``, handlers, ``finally``."""
    blocks = []
    while statement is not None:
        body = getattr(statement, "body", None)
        if isinstance(body, cst.IndentedBlock):
            blocks.append(body)
        for handler in getattr(statement, "handlers", ()):
            blocks.append(handler.body)
        final = getattr(statement, "finalbody", None)
        if final is not None:
            blocks.append(final.body)
        statement = getattr(statement, "orelse", None)
    return blocks


def _exits(statement: cst.CSTNode, in_inner_loop: bool) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    return any(isinstance(small, (cst.Return, cst.Raise)) or isinstance(small, cst.Break) and not in_inner_loop
               for small in statement.body)


def runs_every_nth(loop: cst.CSTNode, node: cst.CSTNode, at_least: int) -> bool:
    """``node`` runs only on some iterations of ``loop``: it is in the body of an ``if`` whose test
    takes a remainder by ``at_least`` or more, or by a name (``if step % 500 == 0:``,
    ``if epoch % save_interval == 0:``), the periodic sampling or evaluation of a training loop.
    ``step % 4`` still runs often."""
    return every_nth_guard(loop, node, at_least) is not None


def every_nth_guard(owner: cst.CSTNode, node: cst.CSTNode, at_least: int) -> cst.BaseExpression | None:
    """The test of the ``if`` that makes ``node`` run only on some passes of ``owner`` (a loop, or
    a def whose calls repeat: ``if self.learn_step % replace_iter == 0:``), as ``runs_every_nth``
    reads it; None when there is none."""
    return next((statement.test for statement in loop_statements(owner)
                 if isinstance(statement, cst.If) and _takes_remainder(statement.test, at_least)
                 and contains(statement.body, node)), None)


def _takes_remainder(test: cst.BaseExpression, at_least: int) -> bool:
    return any(divisor is None or divisor >= at_least for divisor in remainder_divisors(test))


def remainder_divisors(test: cst.BaseExpression) -> list[int | None]:
    """The divisor of each ``x % n`` in ``test``: n when a literal, else None."""
    finder = _Remainder()
    walk(test, finder)
    return finder.divisors


class _Remainder(cst.CSTVisitor):
    def __init__(self) -> None:
        self.divisors: list[int | None] = []

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if isinstance(node.operator, cst.Modulo):
            self.divisors.append(int_literal(node.right))


# Calls after which nothing in the same block runs.
_EXITS = frozenset({"sys.exit", "exit", "quit", "os._exit"})


def never_run(module: cst.Module, cells: bool = False) -> list[cst.CSTNode]:
    """The statements that cannot run: the rest of a block after an unconditional ``raise``,
    ``return``, ``break``, ``continue`` or ``sys.exit()``; the body of ``if False:`` / ``while 0:``;
    the ``else`` of ``if True:``. What is written there is a draft or a switched-off variant, and
    costs nothing. ``cells``: the module is a notebook's cells, which run one by one whatever an
    earlier cell raised."""
    dead: list[cst.CSTNode] = []

    def block(statements, top: bool = False) -> None:
        for index, statement in enumerate(statements):
            if _ends_block(statement) and not (top and cells):
                dead.extend(statements[index + 1:])
                return
            inside(statement)

    def body_of(suite) -> list:
        return list(suite.body) if isinstance(suite, cst.IndentedBlock) else [suite]

    def inside(statement) -> None:
        if isinstance(statement, cst.If):
            truth = _constant_truth(statement.test)
            if truth is False:
                dead.append(statement.body)
            else:
                block(body_of(statement.body))
            orelse = statement.orelse
            if orelse is not None:
                if truth is True:
                    dead.append(orelse)
                elif isinstance(orelse, cst.If):
                    inside(orelse)
                else:
                    block(body_of(orelse.body))
        elif isinstance(statement, cst.While) and _constant_truth(statement.test) is False:
            dead.append(statement.body)
        elif isinstance(statement, (cst.FunctionDef, cst.ClassDef, cst.For, cst.While, cst.With)):
            block(body_of(statement.body))
            orelse = getattr(statement, "orelse", None)
            if orelse is not None:
                block(body_of(orelse.body))
        elif isinstance(statement, cst.Try):
            for suite in (statement.body, *(h.body for h in statement.handlers),
                          *(s.body for s in (statement.orelse, statement.finalbody) if s is not None)):
                block(body_of(suite))

    block(list(module.body), top=True)
    return dead


def _ends_block(statement) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        if isinstance(small, (cst.Raise, cst.Return, cst.Break, cst.Continue)):
            return True
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) \
                and dotted_name(small.value.func) in _EXITS:
            return True
    return False


def _constant_truth(test: cst.BaseExpression) -> bool | None:
    """``True``/``1`` -> True, ``False``/``0``/``None`` -> False; anything else None."""
    if isinstance(test, cst.Name) and test.value in ("True", "False", "None"):
        return test.value == "True"
    if isinstance(test, cst.Integer):
        return test.evaluated_value != 0
    return None


def uncalled_in_script(module: cst.Module, source: str) -> list[cst.FunctionDef]:
    """The undecorated top-level functions of a script (a module with an ``if __name__ ==
    "__main__":`` block) whose name appears nowhere else in its source, not even in a comment or a
    string: nothing in the script calls them, hands them on, or looks them up. A decorated
    function is called by what decorates it (a route, a task); ``main`` by ``tf.app.run()``,
    which finds it in ``__main__`` unnamed."""
    if not any(isinstance(s, cst.If) and "__main__" in code_of(s.test) for s in module.body):
        return []
    found = []
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef) and not statement.decorators and statement.name.value != "main":
            name = statement.name.value
            if len(re.findall(rf"\b{re.escape(name)}\b", source)) == 1:
                found.append(statement)
    return found
