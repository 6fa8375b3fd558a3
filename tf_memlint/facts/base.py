"""What the fact modules share beneath them all: a cached "does some call in this node pass a test"."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import libcst as cst

if TYPE_CHECKING:
    from tf_memlint.context import TFContext


def any_call(cache: dict[tuple[int, str], bool], context: TFContext, node: cst.CSTNode,
             fact: str, test: Callable[[cst.Call], bool]) -> bool:
    """Some call in ``node`` (a loop or a body; nested defs excluded) passes ``test``; the
    answer is kept in the caller's ``cache`` under ``(node, fact)``."""
    key = (id(node), fact)
    if key not in cache:
        cache[key] = any(test(call) for call in context.calls_in(node))
    return cache[key]
