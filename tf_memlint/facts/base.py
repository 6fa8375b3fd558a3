"""What the fact modules share beneath them all: a cached "does some call in this node pass a
test", and the kinds of effect a function summary records (functions.py makes the summaries,
sessions.py asks them for OPS, and functions.py builds on sessions.py's constants: the kinds live
here so the two do not import each other)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import libcst as cst

if TYPE_CHECKING:
    from tf_memlint.context import TFContext

# What one call of a function does (functions.py's summaries, project.py's tables, the gate).
MODEL, PREDICT, FIT, OPS, SESSION, RETURNS_SESSION, TF_FUNCTION, RUNS_SESSION = (
    "model", "predict", "fit", "ops", "session", "returns_session", "tf_function", "runs_session")
# A factory of another module of the project returns a Keras model of TF2's Keras (whose predict
# builds its set-up per call): project.py's tables only; in a file, KerasFacts follows the factory
# itself (``_is_model_factory``).
RETURNS_MODEL = "returns_model"
EFFECT_KINDS = frozenset({MODEL, PREDICT, FIT, OPS, SESSION, RETURNS_SESSION, TF_FUNCTION, RUNS_SESSION,
                          RETURNS_MODEL})
# What a function returns is its caller's value, not something the caller does.
RETURNED = frozenset({RETURNS_SESSION, RETURNS_MODEL})


def any_call(cache: dict[tuple[int, str], bool], context: TFContext, node: cst.CSTNode,
             fact: str, test: Callable[[cst.Call], bool]) -> bool:
    """Some call in ``node`` (a loop or a body; nested defs excluded) passes ``test``; the
    answer is kept in the caller's ``cache`` under ``(node, fact)``."""
    key = (id(node), fact)
    if key not in cache:
        cache[key] = any(test(call) for call in context.calls_in(node))
    return cache[key]
