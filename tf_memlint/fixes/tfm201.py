"""TFM201: a session closed where its use ends.

- ``sess = tf.compat.v1.Session(...)`` in a loop's body: ``with ... as sess:`` around the rest of
  that body, so it is closed before the next iteration.
- An ``InteractiveSession``, which has no ``with`` form, made in a function or a loop's body:
  closed at the end of that body, by ``try: <the rest of the body> finally: sess.close()`` (so
  a ``return`` or an exception closes it too), or by ``sess.close()`` when nothing follows it.
- An ``InteractiveSession`` at module level that a later session supersedes: ``sess.close()``
  right before the statement that opens the next one.

A session made without a name (``tf.compat.v1.InteractiveSession()`` alone on its line) is bound
to ``session`` (or another unused name) so it can be closed.

Unsafe: the session is closed. Whatever keeps it past that point (a list of sessions, an
attribute, code after the loop or after the call) then holds a closed session, and ``run()`` on
it raises; an ``InteractiveSession`` also stops being the default session there, so a later
``tensor.eval()`` or ``op.run()`` without a session raises instead of using it. Offered only for a
session bound to a plain name (or to none) by a statement of its own; for a with block, with
statements after it in the loop's body; for a close, when the name is used only where the session
is still open, as ``sess.<method>`` or ``session=sess``, and read by no nested function. Not
offered for a session stored, kept on an object, or captured: there the code keeps it on purpose,
and where its use ends is not in this scope.
"""

from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from tf_memlint.fixes.base import (UNSAFE, Edit, Site, bound_in, index_in, names_in, nodes_of, replace_body,
                                   replace_nodes, self_attribute, statement)
from tf_memlint.rule import Diagnostic
from tf_memlint.syntax import code_of

CODE = "TFM201"
APPLICABILITY = UNSAFE  # what the page says; an edit may only be less safe
_SESSIONS = ("Session", "InteractiveSession")
_WHY = "the session is closed where its use in this scope ends; whatever keeps it holds a closed session"


def fix(site: Site, finding: Diagnostic) -> Optional[Edit]:
    call = site.find(finding.line, finding.col, _is_session)
    if call is None:
        return _owner_reached(site, finding)
    line = site.statement_of(call)
    if not (isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1):
        return None
    small = line.body[0]
    if isinstance(small, cst.Assign) and small.value is call and len(small.targets) == 1 \
            and self_attribute(small.targets[0].target) is not None:
        cls = _class_of(site, line)
        attribute = self_attribute(small.targets[0].target)
        return None if cls is None else _closed_with_its_owner(site, cls, attribute)
    if isinstance(small, cst.Assign) and small.value is call and len(small.targets) == 1 \
            and isinstance(small.targets[0].target, cst.Name):
        name: Optional[str] = small.targets[0].target.value
    elif isinstance(small, cst.Expr) and small.value is call:
        name = None
    else:
        return None
    block = site.block_of(line)
    if block is None:
        return None
    if not _interactive(call):
        return _with_block(site, call, line, block, name)
    if name is None:  # bind it to close it
        name = _unused_name(site.module)
        bound = line.with_changes(body=[cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=call)])
    else:
        bound = line
    if block is site.module:
        return _closed_before_the_next(site, call, line, bound, name)
    owner = site.parents.get(block)
    if isinstance(owner, (cst.For, cst.While)) and owner.body is block or isinstance(owner, cst.FunctionDef):
        return _closed_at_the_end(site, line, bound, block, name)
    return None


def _with_block(site: Site, call: cst.Call, line: cst.SimpleStatementLine, block: cst.CSTNode,
                name: Optional[str]) -> Optional[Edit]:
    """``with <call> as name:`` around the rest of the loop's body."""
    if not (isinstance(block, cst.IndentedBlock) and isinstance(site.parents.get(block), (cst.For, cst.While))):
        return None
    index = index_in(block, line)
    rest = list(block.body[index + 1:])
    if not rest:
        return None
    asname = cst.AsName(name=cst.Name(name)) if name is not None else None
    opened = cst.With(
        items=[cst.WithItem(item=call, asname=asname)],
        body=cst.IndentedBlock(body=rest),
        leading_lines=line.leading_lines,
    )
    if line.trailing_whitespace.comment is not None:  # the comment of the session's line stays on it
        opened = opened.with_changes(body=opened.body.with_changes(header=line.trailing_whitespace))
    return Edit(replace_body(site.module, block, [*block.body[:index], opened]), UNSAFE,
                "the session is closed at the end of the block; whatever keeps it holds a closed session")


def _closed_at_the_end(site: Site, line: cst.SimpleStatementLine, bound: cst.SimpleStatementLine,
                       block: cst.IndentedBlock, name: str) -> Optional[Edit]:
    """The rest of the function's (or loop's) body in ``try:``, the session closed in ``finally:``."""
    index = index_in(block, line)
    rest = list(block.body[index + 1:])
    scope = next((n for n in site.ancestors(block) if isinstance(n, (cst.FunctionDef, cst.Module))), site.module)
    inside = [n for s in rest for n in _uses(s, name)]
    if len(inside) != len(_uses(scope, name)) - (bound is line):  # the binding is a use of its own
        return None  # used elsewhere in the scope: after the loop, or before it
    if not _only_while_open(site, inside, scope) or _rebinds(rest, name):
        return None
    close = statement(f"{name}.close()\n", site.module)
    if rest:
        closing: list[cst.BaseStatement] = [cst.Try(
            body=cst.IndentedBlock(body=[rest[0].with_changes(leading_lines=[]), *rest[1:]]),
            finalbody=cst.Finally(body=cst.IndentedBlock(body=[close])),
            leading_lines=rest[0].leading_lines,
        )]
    else:
        closing = [close]
    return Edit(replace_body(site.module, block, [*block.body[:index], bound, *closing]), UNSAFE, _WHY)


def _closed_before_the_next(site: Site, call: cst.Call, line: cst.SimpleStatementLine,
                            bound: cst.SimpleStatementLine, name: str) -> Optional[Edit]:
    """``name.close()`` before the top-level statement that opens the next session."""
    module = site.module
    start = index_in(module, line)
    following = next((i for i in range(start + 1, len(module.body))
                      if any(_is_session(n) for n in nodes_of(module.body[i], cst.Call))), None)
    if following is None or isinstance(module.body[following], (cst.FunctionDef, cst.ClassDef)):
        return None  # no later session opened at module level (one in a def runs when it is called)
    nxt = module.body[following]
    rebound = isinstance(nxt, cst.SimpleStatementLine) and len(nxt.body) == 1 \
        and isinstance(nxt.body[0], cst.Assign) and any(
            isinstance(t.target, cst.Name) and t.target.value == name for t in nxt.body[0].targets)
    between = [n for s in module.body[start + 1:following] for n in _uses(s, name)]
    if not rebound:  # the name still holds the closed session afterwards: nothing may read it
        if len(between) != len(_uses(module, name)) - (bound is line):
            return None
    elif any(_uses(s, name) for s in module.body[:start]):
        return None  # a function defined earlier reads it: it may run while it is open or after
    if not _only_while_open(site, between, module) or _rebinds(module.body[start + 1:following], name):
        return None
    close = statement(f"{name}.close()\n", module).with_changes(leading_lines=nxt.leading_lines)
    body = [*module.body[:start], bound, *module.body[start + 1:following], close,
            nxt.with_changes(leading_lines=[]), *module.body[following + 1:]]
    return Edit(module.with_changes(body=body), UNSAFE, _WHY)


# "(calls tf.InteractiveSession() via Autoencoder(), line 7)": the class whose __init__ opens it
_REACHED = re.compile(r"\(calls [\w.]+\(\) via (?P<owner>\w+)\(\), line (?P<line>\d+)\)")


def _owner_reached(site: Site, finding: Diagnostic) -> Optional[Edit]:
    """A finding at ``Owner(...)`` per iteration, whose ``__init__`` keeps a session on self."""
    reached = _REACHED.search(finding.message)
    if reached is None:
        return None
    line = int(reached.group("line"))
    init = next((n for n in site.positions if isinstance(n, cst.FunctionDef) and n.name.value == "__init__"
                 and line in (site.line_of(n), site.line_of(n.name))), None)
    cls = _class_of(site, init) if init is not None else None
    if cls is None or cls.name.value != reached.group("owner"):
        return None
    kept = [self_attribute(n.targets[0].target) for n in nodes_of(init, cst.Assign)
            if len(n.targets) == 1 and self_attribute(n.targets[0].target) and _is_session(n.value)]
    return _closed_with_its_owner(site, cls, kept[0]) if len(kept) == 1 else None


def _closed_with_its_owner(site: Site, cls: cst.ClassDef, attribute: str) -> Optional[Edit]:
    """A session kept on ``self.<attribute>`` by objects made only as temporaries
    (``Autoencoder(h).fit(data)``): the class gets ``close()``, which closes the session, and each
    such statement becomes ``autoencoder = Autoencoder(h)`` and ``try: autoencoder.fit(data)
    finally: autoencoder.close()``. Not offered when any object of the class is kept (bound,
    stored, returned: its last use is not in sight), when the class has bases (one may define
    ``close``) or a member named ``close``, or when it is made nowhere in this module."""
    if cls.bases or "close" in _members(cls) or site.block_of(cls) is not site.module:
        return None
    made = [n for n in nodes_of(site.module, cst.Call) if isinstance(n.func, cst.Name) and n.func.value == cls.name.value]
    if not made:
        return None
    statements = []
    for construction in made:
        used = site.parents.get(construction)
        method = isinstance(used, cst.Attribute) and used.value is construction
        outer = site.parents.get(used) if method else None
        line = site.statement_of(construction)
        if not (isinstance(outer, cst.Call) and outer.func is used and isinstance(line, cst.SimpleStatementLine)
                and len(line.body) == 1 and _temporary_use(line.body[0], outer)
                and isinstance(site.block_of(line), (cst.IndentedBlock, cst.Module))):
            return None  # the object is kept, or used where a statement cannot be split
        statements.append((line, construction, used, outer))
    module = site.module
    instance = _snake(cls.name.value)
    blocks = {id(site.block_of(line)) for line, *_ in statements}
    if instance in names_in(module) or len(blocks) != len(statements):
        return None  # the name is taken, or two objects are made in one block
    replacements: dict[cst.CSTNode, cst.CSTNode] = {}
    for line, construction, used, outer in statements:
        block = site.block_of(line)
        made_line = statement(f"{instance} = {module.code_for_node(construction)}\n", module)
        use_line = line.deep_replace(used, used.with_changes(value=cst.Name(instance)))
        closing = cst.Try(body=cst.IndentedBlock(body=[use_line.with_changes(leading_lines=[])]),
                          finalbody=cst.Finally(body=cst.IndentedBlock(
                              body=[statement(f"{instance}.close()\n", module)])))
        index = index_in(block, line)
        replaced = [*block.body[:index], made_line.with_changes(leading_lines=line.leading_lines), closing,
                    *block.body[index + 1:]]
        replacements[block] = block.with_changes(body=replaced)
    if any(any(a is cls for a in site.ancestors(block)) for block in replacements):
        return None  # made inside its own class
    method = cst.parse_statement(f"def close(self):\n    self.{attribute}.close()\n",
                                 config=module.config_for_parsing)
    method = method.with_changes(leading_lines=[cst.EmptyLine(indent=False)])
    replacements[cls] = cls.with_changes(body=cls.body.with_changes(body=[*cls.body.body, method]))
    if site.module in replacements:
        return None  # made at module level, where the class is too: one block, rebuilt twice
    return Edit(replace_nodes(module, replacements), UNSAFE,
                "each object's session is closed after the statement that uses the object")


def _temporary_use(small: cst.BaseSmallStatement, outer: cst.Call) -> bool:
    """``Owner(...).method(...)`` alone on its line: nothing keeps the object (a result kept,
    ``x = Owner(...).fit(data)``, may be the object itself)."""
    return isinstance(small, cst.Expr) and small.value is outer


def _members(cls: cst.ClassDef) -> set[str]:
    found: set[str] = set()
    for member in cls.body.body if isinstance(cls.body, cst.IndentedBlock) else []:
        if isinstance(member, cst.FunctionDef):
            found.add(member.name.value)
        elif isinstance(member, cst.SimpleStatementLine):
            for small in member.body:
                if isinstance(small, cst.Assign):
                    found |= {t.target.value for t in small.targets if isinstance(t.target, cst.Name)}
    return found


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _class_of(site: Site, node: cst.CSTNode) -> Optional[cst.ClassDef]:
    """The class whose method holds ``node``."""
    function = node if isinstance(node, cst.FunctionDef) else next(
        (n for n in site.ancestors(node) if isinstance(n, cst.FunctionDef)), None)
    if function is None:
        return None
    block = site.parents.get(function)
    cls = site.parents.get(block)
    return cls if isinstance(cls, cst.ClassDef) else None


def _only_while_open(site: Site, uses: list[cst.Name], scope: cst.CSTNode) -> bool:
    """Every use calls or reads the session (``sess.run(...)``) or lends it to a call
    (``t.eval(session=sess)``), outside any nested function or lambda (which may run later)."""
    for use in uses:
        for ancestor in site.ancestors(use):
            if ancestor is scope:
                break
            if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                return False
        parent = site.parents.get(use)
        if isinstance(parent, cst.Attribute) and parent.value is use and parent.attr.value != "as_default":
            continue
        if isinstance(parent, cst.Arg) and parent.keyword is not None and parent.keyword.value == "session":
            continue
        return False
    return True


def _rebinds(statements, name: str) -> bool:
    return any(name in bound_in(s) for s in statements)


def _uses(node: cst.CSTNode, name: str) -> list[cst.Name]:
    """The Name nodes ``name`` under ``node`` (not an attribute's name after a dot)."""
    found: list[cst.Name] = []

    class Collect(cst.CSTVisitor):
        def visit_Attribute(self, attribute: cst.Attribute) -> bool:
            attribute.value.visit(self)
            return False

        def visit_Name(self, visited: cst.Name) -> None:
            if visited.value == name:
                found.append(visited)

    node.visit(Collect())
    return found


def _is_session(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Call) and code_of(node.func).split(".")[-1] in _SESSIONS


def _interactive(call: cst.Call) -> bool:
    return code_of(call.func).split(".")[-1] == "InteractiveSession"


def _unused_name(module: cst.Module) -> str:
    taken = names_in(module)
    candidates = ["session", "interactive_session"] + [f"interactive_session_{i}" for i in range(2, 100)]
    return next(candidate for candidate in candidates if candidate not in taken)
