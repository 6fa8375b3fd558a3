"""TFM201: ``sess = tf.compat.v1.Session(...)`` in a loop's body as ``with ... as sess:`` around
the rest of that body.

Unsafe: the session is closed at the end of the ``with`` block, that is before the next
iteration. Whatever keeps it past the block (a list of sessions, an attribute, code after the
loop) then holds a closed session, and ``run()`` on it raises. Offered only for a session bound
to a plain name (or not bound at all) by a statement of its own directly in a loop's body, with
statements after it in that body (the ones that use it).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from tf_memlint.fixes.base import UNSAFE, Edit, Site, index_in, replace_body
from tf_memlint.rule import Diagnostic

CODE = "TFM201"
APPLICABILITY = UNSAFE  # what the page says; an edit may only be less safe


def fix(site: Site, finding: Diagnostic) -> Optional[Edit]:
    call = site.find(finding.line, finding.col, lambda n: isinstance(n, cst.Call))
    if call is None:
        return None
    line = site.statement_of(call)
    if not (isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1):
        return None
    small = line.body[0]
    if isinstance(small, cst.Assign) and small.value is call and len(small.targets) == 1 \
            and isinstance(small.targets[0].target, cst.Name):
        asname = cst.AsName(name=small.targets[0].target)
    elif isinstance(small, cst.Expr) and small.value is call:
        asname = None
    else:
        return None
    block = site.block_of(line)
    if not (isinstance(block, cst.IndentedBlock) and isinstance(site.parents.get(block), (cst.For, cst.While))):
        return None
    index = index_in(block, line)
    rest = list(block.body[index + 1:])
    if not rest:
        return None
    opened = cst.With(
        items=[cst.WithItem(item=call, asname=asname)],
        body=cst.IndentedBlock(body=rest),
        leading_lines=line.leading_lines,
    )
    if line.trailing_whitespace.comment is not None:  # the comment of the session's line stays on it
        opened = opened.with_changes(body=opened.body.with_changes(header=line.trailing_whitespace))
    return Edit(replace_body(site.module, block, [*block.body[:index], opened]), UNSAFE,
                "the session is closed at the end of the block; whatever keeps it holds a closed session")
