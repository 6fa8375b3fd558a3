"""For a large module, LibCST only for the parts a rule can need.

A LibCST tree costs about 25 times the source in memory and most of the lint time; on a
multi-megabyte module (generated code, a vendored library in one file) that is gigabytes for
the one function where a rule can fire. The stdlib tree, which flake8 already built, says which
top-level definitions no enabled rule can need, and those are cut before LibCST sees the text.

A top-level ``def`` or ``class`` is cut when all of these hold, which keeps every finding (the
tests prove it on the fixtures and on real code, with the size threshold at zero):

* its text holds no trigger word of an enabled rule (the gate's own test: a rule cannot fire
  where none of its triggers occurs);
* nothing kept names it (a call, a base class, a decorator, an attribute of the same name);
* it names nothing that kept code binds at module level or defines as a method (a tf.function
  called in its loop, a model used in it, ``agent.act()`` of a kept class): what a rule knows
  of such a name may make it fire there;
* it writes no module-level name (``global``), which would change what a kept name is bound to.

Every line stays where it is: a cut definition becomes a string literal spanning its lines, so
the findings, and the lines their messages name ("passed as step_callback= at line 346"), are
the module's own.
"""

from __future__ import annotations

import ast
import io
from typing import Iterable

from tf_memlint.gate import may_have_trigger
from tf_memlint.syntax import ast_nodes

# Below this size a module is parsed whole: cutting pays only where the tree would be large.
MIN_BYTES = 256 * 1024
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def excerpt(text: str, tree: ast.Module, codes: Iterable[str], min_bytes: int = MIN_BYTES) -> str | None:
    """The module with the top-level definitions no enabled rule can need replaced, each run of
    them by one string literal as tall as the run; None when the module is small or nothing can
    be cut."""
    if len(text) < min_bytes or not isinstance(tree, ast.Module):
        return None
    codes = list(codes)
    lines = io.StringIO(text, newline="").readlines()  # split where CPython counts lines only
    spans, droppable = [], []
    for statement in tree.body:
        first = min([statement.lineno] + [d.lineno for d in getattr(statement, "decorator_list", [])])
        last = statement.end_lineno or statement.lineno
        spans.append((first, last))
        droppable.append(isinstance(statement, _DEFINITIONS) and not _writes_globals(statement)
                         and not may_have_trigger("".join(lines[first - 1:last]).encode("utf-8", "surrogatepass"), codes))
    if not any(droppable):
        return None
    names = [_names(statement) for statement in tree.body]
    kept = [not d for d in droppable]
    referenced: set[str] = set()
    bound: set[str] = set()
    for index, keep in enumerate(kept):
        if keep:
            referenced |= names[index]
            bound |= _bound(tree.body[index])
    changed = True
    while changed:  # a definition kept for a name brings its own names along
        changed = False
        for index, statement in enumerate(tree.body):
            if not kept[index] and (statement.name in referenced or names[index] & bound):  # type: ignore[attr-defined]
                kept[index] = True
                referenced |= names[index]
                bound |= _bound(statement)
                changed = True
    if all(kept):
        return None
    # Each run of cut definitions (with the blank lines and comments between them) becomes one
    # string literal as tall as the run: a single token for LibCST, where as many empty lines
    # would be a node each (200k of them in a 5 MB generated module).
    runs: list[list[int]] = []
    for (first, last), keep in zip(spans, kept):
        if keep:
            runs.append([])
        elif runs and runs[-1]:
            runs[-1][1] = last
        else:
            runs.append([first, last])
    for run in runs:
        if run:
            first, last = run
            ending = lines[last - 1][len(lines[last - 1].rstrip("\r\n")):]
            lines[first - 1] = '"""' + "\n" * (last - first) + '"""' + ending
            for index in range(first, last):
                lines[index] = ""
    return "".join(lines)


def _names(statement: ast.AST) -> set[str]:
    """Every name and attribute name the statement mentions."""
    found = set()
    for node in ast_nodes(statement):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
    return found


def _bound(statement: ast.AST) -> set[str]:
    """The module-level names a top-level statement binds."""
    if isinstance(statement, _DEFINITIONS):
        # its methods and inner functions too: a call of obj.method() elsewhere may be resolved
        # to it by name (facts/callers.py), which makes the caller's loop matter
        return {statement.name} | {node.name for node in ast_nodes(statement)
                                   if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return {(alias.asname or alias.name).split(".")[0] for alias in statement.names}
    found = set()
    for node in ast_nodes(statement):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)  # defined under an `if` at module level
    return found


def _writes_globals(statement: ast.AST) -> bool:
    return any(isinstance(node, ast.Global) for node in ast_nodes(statement))
