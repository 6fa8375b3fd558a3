"""How often a place runs, as the rules ask it today: loops of known size (counting scikit-learn
splitters where a rule does) and the repeated scopes of facts/events.py (a request handler, a
Keras callback hook) for the rules that follow a call into the function it calls.

Shared here so that every rule asks the same question the same way; a rule file keeps only its
own thresholds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from tf_memlint.evidence import SPLITTERS
from tf_memlint.facts.events import BATCH, EPOCH, REQUEST, STEP, TRIAL
from tf_memlint.scopes import AT_POINT
from tf_memlint.syntax import code_of

if TYPE_CHECKING:
    from tf_memlint.context import TFContext

PER_UNIT = {REQUEST: "per request", BATCH: "per batch", EPOCH: "per epoch", TRIAL: "per trial",
            STEP: "per environment step"}


def where_repeated(context: TFContext, node: cst.CSTNode,
                   units: tuple[str, ...] = (REQUEST, BATCH, EPOCH, TRIAL, STEP)) -> tuple[cst.CSTNode, str] | None:
    """(the loop or handler, "on every iteration" / "per request"...) when ``node`` runs repeatedly,
    else None. Loops first: a loop in a handler is the finer unit."""
    if context.in_traced_function:
        return None
    loops = context.loops_running(node)
    if loops:
        return loops[-1], "on every iteration"
    unit = context.repeated_scope
    if unit in units:
        frame = context.function
        if id(node) in context.functions.guarded(frame.node):
            return None  # `if model is None: model = load_model()`: once, then cached
        return frame.node, PER_UNIT[unit]
    return None


def first_time(seen: set[int], where: object) -> bool:
    """True the first time ``where`` is offered to ``seen`` (one finding per loop or handler)."""
    if id(where) in seen:
        return False
    seen.add(id(where))
    return True


# Three measures of "short" that the rules used before they shared this module, kept apart
# because merging them changes findings (a compile() in a KFold(5) loop would fall silent):
# which rule asks which one is a behaviour question for the evidence model, not for a layout.
def runs_fewer_than(context: TFContext, loops: list, limit: int) -> bool:
    """The nested ``loops`` have known trip counts whose product is below ``limit``."""
    total = context.iterations(loops)
    return total is not None and total < limit


def open_loops_run_fewer_than(context: TFContext, limit: int) -> bool:
    """The loops open at the current node (there is at least one; for a call in the header of a
    ``for``, that loop too) are known to run fewer than ``limit`` times in all."""
    loops = context.open_loops
    return bool(loops) and runs_fewer_than(context, loops, limit)


def runs_fewer_than_counting_splitters(context: TFContext, loops: list, limit: int) -> bool:
    """``runs_fewer_than``, where a loop over a scikit-learn splitter (``KFold(5).split(x)``)
    counts as its number of splits."""
    total = context.iterations(loops, fallback=lambda loop: splitter_count(context, loop))
    return total is not None and total < limit


def splitter_count(context: TFContext, loop: cst.CSTNode) -> int | None:
    """Trip count of ``for train, test in S.split(...)`` with ``S = KFold(5)`` (any splitter
    above): its ``n_splits`` (times ``n_repeats``), resolved through names; None if unknown."""
    if not isinstance(loop, cst.For) or not isinstance(loop.iter, cst.Call):
        return None
    func = loop.iter.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "split"):
        return None
    splitter = func.value
    if isinstance(splitter, cst.Name):
        splitter = context.value_of(splitter, AT_POINT)
    if not isinstance(splitter, cst.Call):
        return None
    name = context.qualified_name(splitter.func) or code_of(splitter.func)
    known = SPLITTERS.get(name.rsplit(".", 1)[-1])
    if known is None:
        return None
    default, repeated = known

    def argument(keyword: str, position: int, fallback: int) -> int | None:
        for index, arg in enumerate(splitter.args):
            if (arg.keyword is not None and arg.keyword.value == keyword) \
                    or (arg.keyword is None and index == position):
                return context.int_value(arg.value, AT_POINT)
        return fallback
    splits = argument("n_splits", 0, default)
    repeats = argument("n_repeats", 1, 10) if repeated else 1
    return None if splits is None or repeats is None else splits * repeats
