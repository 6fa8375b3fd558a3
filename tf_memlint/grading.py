"""Grade a finding: confidence from its evidence, projected cost from the measured unit cost.

Confidence says how the evidence was obtained:

* **high**: the place is known to repeat without bound (``while True``, a request handler, a
  dataset, an environment step loop), per item of what its name says is data (``files``,
  ``range(len(test_list))``) or per step of a bound named for steps, or a known number of times
  the rule's claim makes costly, or the rule's own precondition is the evidence (a size read off
  the code);
* **medium**: the repetition is inferred (a loop bound named ``epochs``, the files of a folder,
  a place run on every n-th pass), the rule's claim is (shapes that differ with the data, a
  graph that only Keras <= 2.3 grows), or the rule cannot see a size or a caller of a place made
  to repeat;
* **low**: test code, a function of a script that nothing in the script calls, a loop bounded
  by a few items or that nobody can size, a place that runs once, or a projected cost below the
  threshold.

The projected cost is the verifier's unit cost (``unit_costs.json``, written from the evidence
run by ``scripts/unit_costs.py``: the bad fixture's slope less the good one's, per repetition)
times the repetition: a lower bound on TensorFlow's CPU build with the fixture's model.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from tf_memlint.evidence import (COUNT, GROWS, NOTEBOOK, ONCE, PER_EPOCH, PER_ITEM, PER_STEP, PER_TRIAL,
                                 SERVER, SMALL, TEST, UNKNOWN, Evidence)

HIGH, MEDIUM, LOW = "high", "medium", "low"
LEVELS = (HIGH, MEDIUM, LOW)
RANK = {HIGH: 3, MEDIUM: 2, LOW: 1}
# What a projected cost must reach to count (config keys min-memory-cost / min-time-cost). A
# bounded cost under these (a hundred predict calls after training, a few dozen small models)
# is one a reader of real code judges harmless; a loop that grows with the work is never bounded.
DEFAULT_MIN_MIB = 32
DEFAULT_MIN_SECONDS = 30.0
HELD_MEMORY_DIVISOR = 8  # in a notebook kernel or a server: min-memory-cost / 8 (4 MiB by default)
UNIT_COSTS = Path(__file__).resolve().parent / "unit_costs.json"


# What an open-ended repetition grows with: a loop over data ends with the data.
_GROWTH = {PER_ITEM: "grows with the data", PER_STEP: "grows with the steps",
           PER_EPOCH: "grows with the epochs", PER_TRIAL: "grows with the trials"}


@dataclass(frozen=True)
class Grade:
    confidence: str
    cost: str | None  # "grows without bound", "at least ~770 MiB over 10,000 iterations"


@lru_cache(maxsize=1)
def unit_costs() -> dict:
    try:
        return json.loads(UNIT_COSTS.read_text())["rules"]
    except (OSError, ValueError, KeyError):
        return {}


def _amount(value: float, unit: str) -> str:
    if unit == "bytes":
        for name, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
            if value >= size:
                return f"{value / size:,.1f} {name}".replace(".0 ", " ")
        return f"{value:,.0f} B"
    if unit == "seconds":
        return f"{value:,.1f} s" if value >= 1 else f"{value * 1000:,.0f} ms"
    return f"{value:,.0f} {unit}"


def project(code: str, evidence: Evidence) -> tuple[str | None, float | None, str | None]:
    """(words, amount, unit) of the projected cost of one finding; (None, None, None) when its
    rule's claim measured no unit cost."""
    unit = unit_costs().get(code)
    if unit is None:
        return None, None, None
    repetition = evidence.repetition
    if repetition.kind == ONCE:
        return None, None, None  # a cost per repetition says nothing of a place that runs once
    per = unit["per"]
    if repetition.kind in GROWS:
        growth = _GROWTH.get(repetition.kind, "grows without bound")
        return (f"{growth} ({_amount(unit['value'], unit['unit'])} per {per})", None, unit["unit"])
    if repetition.count is not None:
        total = unit["value"] * repetition.count
        plural = "" if repetition.count == 1 else "s"
        return (f"at least ~{_amount(total, unit['unit'])} over {repetition.count:,} {per}{plural}", total, unit["unit"])
    return (f"{_amount(unit['value'], unit['unit'])} per {per}", None, unit["unit"])


def grade(code: str, evidence: Evidence, once: str, min_bytes: float = DEFAULT_MIN_MIB * 1024 * 1024,
          min_seconds: float = DEFAULT_MIN_SECONDS) -> Grade:
    """``once``: the confidence the rule's own precondition gives a finding whose place does not
    repeat (the rule declares it: a size read off the code is high, a claim about repetition
    with no repetition is low)."""
    words, amount, unit = project(code, evidence)
    repetition = evidence.repetition
    if amount is None and repetition.kind == ONCE and evidence.held_bytes is not None:
        # A place that runs once costs what it holds: an array of a few MB embedded once in a
        # one-off script is harmless, one of hundreds of MB is not.
        amount, unit = evidence.held_bytes, "bytes"
    if repetition.kind in GROWS:
        confidence = HIGH if repetition.known else MEDIUM
    elif repetition.kind == COUNT and (repetition.count is None or repetition.count > 1):
        confidence = HIGH
    elif repetition.kind == UNKNOWN:
        # A loop nobody can size is as often a handful of variants as a dataset: no evidence of
        # repetition. A rule's own unknown (a size, callers it cannot see) keeps medium.
        confidence = LOW if repetition.unsized_loop else MEDIUM
    elif repetition.kind == SMALL:
        confidence = LOW
    else:
        assert repetition.kind in (ONCE, COUNT)  # a count of one (`if epoch == 0:`) is once
        confidence = once
        if once == MEDIUM and evidence.lifetime in (NOTEBOOK, SERVER):
            confidence = HIGH  # held past its use in a process that lives on: the harm itself
    if amount is not None and unit in ("bytes", "seconds"):
        threshold = min_bytes if unit == "bytes" else min_seconds
        if unit == "bytes" and evidence.lifetime in (NOTEBOOK, SERVER):
            # What a loop leaves in a kernel or a server stays there, cell after cell, request
            # after request: held past its use in a process that lives on, it counts sooner.
            threshold = min_bytes / HELD_MEMORY_DIVISOR
        if amount < threshold:
            confidence = LOW
    if evidence.lifetime == TEST or evidence.uncalled:
        confidence = LOW
    return Grade(confidence, words)


def at_least(confidence: str, level: str) -> bool:
    return RANK[confidence] >= RANK[level]


def graded_message(message: str, words: str, cost: str | None) -> str:
    """The one line a user reads: the rule's message, then the evidence and the projected cost in
    brackets, so it says why the finding matters here."""
    suffix = "; ".join(part for part in (words, cost) if part)
    return f"{message} [{suffix}]" if suffix else message
