"""From runs to a verdict: medians per (variant, size), the claim's checks, their margins."""

from __future__ import annotations

import math
import statistics
from collections import Counter
from dataclasses import dataclass, field

from .claims import Check, Claim
from .runner import Run


@dataclass
class CheckResult:
    check: Check
    value: object  # the aggregated quantity the thresholds were applied to
    outcome: str  # "pass", "fail", "unclear"
    margin: str  # how far it cleared (or missed) the threshold, readable
    per_size: list = field(default_factory=list)


@dataclass
class ClaimResult:
    claim: Claim
    verdict: str
    series: dict  # {"bad": [median per size], "good": [...]}
    spread: dict  # {"bad": [(min, max) per size], ...}
    checks: list[CheckResult]
    errors: list[str]
    runs: list[Run]
    wall_s: float

    @property
    def as_expected(self) -> bool:
        return self.verdict == self.claim.expect


def _median(values: list):
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return statistics.median(values)
    return Counter(values).most_common(1)[0][0]


def slope(xs: list, ys: list) -> float:
    """Least-squares slope of ys against xs."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den if den else 0.0


def _ratio(a: float, b: float) -> float:
    if b == 0:
        return math.inf if a > 0 else (1.0 if a == 0 else -math.inf)
    return a / b


def _fmt(x) -> str:
    if isinstance(x, str):
        return x
    if isinstance(x, float) and math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if isinstance(x, float) and abs(x) >= 1000:
        return f"{x:,.0f}"
    if isinstance(x, float) and not x.is_integer():
        return f"{x:.4g}"
    return f"{int(x):,}"


def _human(value, unit: str) -> str:
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    if unit == "bytes":
        a = abs(value)
        for div, suffix in ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
            if a >= div:
                return f"{value / div:.3g} {suffix}"
        return f"{value:.3g} B" if a < 10 else f"{value:.0f} B"
    if unit == "s":
        return f"{value * 1000:.3g} ms" if abs(value) < 1 else f"{value:.3g} s"
    return _fmt(value)


def evaluate_check(check: Check, claim: Claim, bad: list, good: list) -> CheckResult:
    sizes = claim.sizes
    if check.equals is not None:
        vals = bad if check.quantity == "bad" else good
        if check.over == "largest":
            vals = vals[-1:]
        ok = all(v == check.equals for v in vals)
        got = ", ".join(sorted({str(v) for v in vals}))
        return CheckResult(check, got, "pass" if ok else "fail",
                           "matches" if ok else f"got {got}", per_size=list(vals))
    q = check.quantity
    if q == "bad_slope":
        per = [slope(sizes, bad)]
    elif q == "good_slope":
        per = [slope(sizes, good)]
    elif q == "slope_ratio":
        per = [_ratio(slope(sizes, bad), slope(sizes, good))]
    elif q == "ratio":
        per = [_ratio(b, g) for b, g in zip(bad, good)]
    elif q == "difference":
        per = [b - g for b, g in zip(bad, good)]
    elif q == "bad":
        per = list(bad)
    else:
        per = list(good)
    if check.over == "largest" and len(per) > 1:
        per = per[-1:]
    if check.at_least is not None:
        value = min(per)
        if value >= check.at_least:
            outcome = "pass"
        elif value < check.refuted_below:
            outcome = "fail"
        else:
            outcome = "unclear"
        threshold = check.at_least
    else:
        value = max(per)
        if value <= check.at_most:
            outcome = "pass"
        elif value > check.refuted_above:
            outcome = "fail"
        else:
            outcome = "unclear"
        threshold = check.at_most
    unit = claim.unit if q in ("bad_slope", "good_slope", "difference", "bad", "good") else ""
    margin = _margin(value, threshold, check.at_least is not None, unit)
    return CheckResult(check, value, outcome, margin, per_size=per)


def _margin(value: float, threshold: float, lower_bound: bool, unit: str = "") -> str:
    diff = value - threshold if lower_bound else threshold - value
    word = "cleared by" if diff >= 0 else "missed by"
    text = f"{word} {_human(abs(diff), unit) if unit in ('bytes', 's') else _fmt(abs(diff))}"
    if threshold and value and not math.isinf(value) and (value > 0) == (threshold > 0):
        factor = value / threshold if lower_bound else threshold / value
        text += f" (x{factor:.3g})"
    elif math.isinf(value):
        text += " (x inf)"
    return text


def evaluate(claim: Claim, runs: list[Run]) -> ClaimResult:
    mine = [r for r in runs if r.task.claim is claim]
    errors = [f"{r.task.label()}: {r.error}" for r in mine if not r.ok]
    series: dict = {"bad": [], "good": []}
    spread: dict = {"bad": [], "good": []}
    for variant in ("bad", "good"):
        for size in claim.sizes:
            vals = [r.value for r in mine if r.ok and r.task.variant == variant and r.task.size == size]
            if not vals:
                series[variant].append(None)
                spread[variant].append(None)
                continue
            series[variant].append(_median(vals))
            nums = [v for v in vals if isinstance(v, (int, float))]
            spread[variant].append((min(nums), max(nums)) if nums else None)
    wall = sum(r.wall_s for r in mine)
    if errors or any(v is None for v in series["bad"] + series["good"]):
        return ClaimResult(claim, "ERROR", series, spread, [], errors or ["no result"], mine, wall)
    checks = [evaluate_check(c, claim, series["bad"], series["good"]) for c in claim.checks]
    outcomes = {c.outcome for c in checks}
    if outcomes == {"pass"}:
        verdict = "CONFIRMED"
    elif "fail" in outcomes:
        verdict = "REFUTED"
    else:
        verdict = "INCONCLUSIVE"
    return ClaimResult(claim, verdict, series, spread, checks, [], mine, wall)
