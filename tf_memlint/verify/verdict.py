"""From runs to a verdict.

Per (variant, size) the repeats give a median (the figure reported) and a range (what decides).
Each quantity (a slope, a ratio...) is computed from the medians and, for its decision, over the
whole box of the ranges: a check passes only when every combination of the repeats' extremes
passes, fails (clearly, beyond its ``refuted_*`` band) only when every combination fails, and is
unclear otherwise. With five or more repeats the most extreme value at each end is dropped from
the range. A deterministic signal has one value per point, so its range is that value.

Verdict, in order:
  INCONCLUSIVE  the claim is not measurable on this machine (its ``requires`` does not hold:
                requirements.py); nothing of it ran, and that is as expected;
  ERROR         a run failed (timeout, crash, out of memory, fixture error...), or nothing was measured;
  INCONCLUSIVE  a premise does not hold (the measurement would mean nothing), or a quantity is
                undefined (a ratio over a zero or negative denominator), or a check is unclear;
  REFUTED       a check clearly fails;
  CONFIRMED     every check passes.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from dataclasses import dataclass, field

from .claims import AUX_SIGNALS, SIGNALS, BrokenClaim, Check, Claim
from .runner import Run


@dataclass
class CheckResult:
    check: Check
    value: object  # the aggregated quantity from the medians (None when undefined)
    outcome: str  # "pass", "fail", "unclear" or "undefined"
    margin: str  # how far it cleared (or missed) the threshold, readable
    per_size: list = field(default_factory=list)
    low: float | None = None  # the range the decision used
    high: float | None = None
    premise: bool = False


@dataclass
class ClaimResult:
    claim: object  # Claim or BrokenClaim
    verdict: str
    series: dict  # {"bad": [median per size], "good": [...]}
    spread: dict  # {"bad": [(low, high) per size], ...}
    checks: list[CheckResult]
    errors: list[str]
    runs: list[Run]
    wall_s: float
    premises: list[CheckResult] = field(default_factory=list)
    reason: str = ""  # one line: why this verdict
    not_measurable: str = ""  # the reason, when the machine lacks what the claim requires

    @property
    def as_expected(self) -> bool:
        """The expected verdict; or, on a machine that cannot measure the claim (it needs a GPU
        and there is none), INCONCLUSIVE without a measurement: the expectation is not tested."""
        if self.not_measurable:
            return self.verdict == "INCONCLUSIVE"
        return self.verdict == self.claim.expect


def _median(values: list):
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return statistics.median(values)
    return Counter(values).most_common(1)[0][0]


def _range(values: list) -> tuple | None:
    nums = sorted(v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool))
    if not nums:
        return None
    if len(nums) >= 5:
        nums = nums[1:-1]
    return nums[0], nums[-1]


def _clean(x: float) -> float:
    """Round away float noise (12 significant digits): a slope of exactly 1 must not read 0.999..."""
    return float(f"{x:.12g}") if math.isfinite(x) else x


def slope(xs: list, ys: list) -> float:
    """Least-squares slope of ys against xs."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    den = sum((x - mx) ** 2 for x in xs)
    if not den:
        return 0.0
    s = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den
    scale = max((abs(y) for y in ys), default=0.0) / den ** 0.5 if ys else 0.0
    return 0.0 if abs(s) <= 1e-12 * scale else _clean(s)


def slope_range(xs: list, lows: list, highs: list) -> tuple[float, float]:
    """The smallest and largest least-squares slope with each y anywhere in [low, high]."""
    mx = statistics.fmean(xs)
    den = sum((x - mx) ** 2 for x in xs)
    if not den:
        return 0.0, 0.0
    w = [(x - mx) / den for x in xs]
    lo = sum(wi * (l if wi > 0 else h) for wi, l, h in zip(w, lows, highs))
    hi = sum(wi * (h if wi > 0 else l) for wi, l, h in zip(w, lows, highs))
    scale = max((abs(v) for v in [*lows, *highs]), default=0.0) / den ** 0.5
    lo, hi = (0.0 if abs(v) <= 1e-12 * scale else _clean(v) for v in (lo, hi))
    return lo, hi


def ratio(a: float, b: float) -> float | None:
    """a / b, or None (undefined) when b is not positive: 0/0 is not 1, a/-x is not a ratio."""
    if b is None or a is None or b <= 0:
        return None
    return a / b


def ratio_range(a: tuple, b: tuple) -> tuple | None:
    if b[0] <= 0:
        return None
    corners = [x / y for x in a for y in b]
    return min(corners), max(corners)


def _fmt(x) -> str:
    if x is None:
        return "undefined"
    if isinstance(x, str):
        return x
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
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


def _points(claim: Claim, runs: list[Run], variant: str, signal: str | None):
    """Per size: (median, (low, high)) of the claim's signal (or an auxiliary one), None if absent."""
    out = []
    for size in claim.sizes:
        vals = []
        for r in runs:
            if r.ok and r.task.variant == variant and r.task.size == size:
                v = r.value if signal is None else r.aux.get(signal)
                if v is not None:
                    vals.append(v)
        if not vals:
            out.append(None)
            continue
        out.append((_median(vals), _range(vals)))
    return out


def _unit_of(claim: Claim, check: Check) -> str:
    if check.signal is None:
        return claim.unit
    return AUX_SIGNALS.get(check.signal, SIGNALS.get(check.signal, ("",))[0])


def evaluate_check(check: Check, claim: Claim, bad: list, good: list, premise: bool = False) -> CheckResult:
    """Apply one check (or premise) to per-size points ``(median, (low, high))`` of each variant.

    Plain medians (a list of values) are accepted too: then the range is the value itself."""
    bad = [_as_point(p) for p in bad]
    good = [_as_point(p) for p in good]
    sizes = claim.sizes
    if any(p is None for p in bad + good):
        missing = "bad" if any(p is None for p in bad) else "good"
        what = f"'{check.signal}'" if check.signal else "the signal"
        return CheckResult(check, None, "undefined", f"{what} was not measured for the {missing} variant",
                           premise=premise)
    if check.equals is not None:
        pts = bad if check.quantity == "bad" else good
        if check.over == "largest":
            pts = pts[-1:]
        vals = [p[0] for p in pts]
        ok = all(str(v) == check.equals for v in vals)
        got = ", ".join(sorted({str(v) for v in vals}))
        return CheckResult(check, got, "pass" if ok else "fail", "matches" if ok else f"got {got}",
                           per_size=vals, premise=premise)
    q = check.quantity
    med_b, med_g = [p[0] for p in bad], [p[0] for p in good]
    rng_b, rng_g = [p[1] for p in bad], [p[1] for p in good]
    if any(not isinstance(v, (int, float)) for v in med_b + med_g):
        return CheckResult(check, None, "undefined", "the signal is not a number", premise=premise)
    undefined_why = ""
    if q in ("bad_slope", "good_slope"):
        med, rng = (med_b, rng_b) if q == "bad_slope" else (med_g, rng_g)
        per = [(slope(sizes, med), slope_range(sizes, [r[0] for r in rng], [r[1] for r in rng]))]
    elif q == "slope_ratio":
        num = slope(sizes, med_b), slope_range(sizes, [r[0] for r in rng_b], [r[1] for r in rng_b])
        den = slope(sizes, med_g), slope_range(sizes, [r[0] for r in rng_g], [r[1] for r in rng_g])
        value = ratio(num[0], den[0])
        if value is None or den[1][0] <= 0:
            shown = _human(den[0], claim.unit)
            if value is not None:
                shown += f", range down to {_human(den[1][0], claim.unit)}"
            undefined_why = f"undefined: the good slope is not positive ({shown})"
            per = [(None, None)]
        else:
            per = [(value, ratio_range(num[1], den[1]))]
    elif q == "ratio":
        per = []
        for mb, mg, rb, rg in zip(med_b, med_g, rng_b, rng_g):
            value = ratio(mb, mg)
            if value is None or rg[0] <= 0:
                undefined_why = (f"undefined: good is not positive ({_human(mg, claim.unit)}) at some size, "
                                 "a ratio over it means nothing")
                per.append((None, None))
            else:
                per.append((value, ratio_range(rb, rg)))
    elif q == "difference":
        per = [(mb - mg, (rb[0] - rg[1], rb[1] - rg[0]))
               for mb, mg, rb, rg in zip(med_b, med_g, rng_b, rng_g)]
    else:
        med, rng = (med_b, rng_b) if q == "bad" else (med_g, rng_g)
        per = list(zip(med, rng))
    if check.over == "largest" and len(per) > 1:
        per = per[-1:]
    per_values = [p[0] for p in per]
    if undefined_why and any(p[0] is None for p in per):
        return CheckResult(check, None, "undefined", undefined_why, per_size=per_values, premise=premise)
    lower = check.at_least is not None
    if lower:  # every size must clear: the worst size counts
        value = min(p[0] for p in per)
        low, high = min(p[1][0] for p in per), min(p[1][1] for p in per)
        threshold, refuted = check.at_least, check.refuted_below
        if low >= threshold:
            outcome = "pass"
        elif refuted is not None and high < refuted:
            outcome = "fail"
        elif refuted is None and high < threshold:
            outcome = "fail"
        else:
            outcome = "unclear"
    else:
        value = max(p[0] for p in per)
        low, high = max(p[1][0] for p in per), max(p[1][1] for p in per)
        threshold, refuted = check.at_most, check.refuted_above
        if high <= threshold:
            outcome = "pass"
        elif refuted is not None and low > refuted:
            outcome = "fail"
        elif refuted is None and low > threshold:
            outcome = "fail"
        else:
            outcome = "unclear"
    unit = _unit_of(claim, check) if q in ("bad_slope", "good_slope", "difference", "bad", "good") else ""
    margin = _margin(value, threshold, lower, unit)
    if (low, high) != (value, value):
        margin += f"; range {_human(low, unit) if unit in ('bytes', 's') else _fmt(low)} to " \
                  f"{_human(high, unit) if unit in ('bytes', 's') else _fmt(high)}"
    return CheckResult(check, value, outcome, margin, per_size=per_values, low=low, high=high,
                       premise=premise)


def _as_point(p):
    if p is None:
        return None
    if isinstance(p, tuple) and len(p) == 2 and (p[1] is None or isinstance(p[1], tuple)):
        return p
    return (p, (p, p)) if isinstance(p, (int, float)) and not isinstance(p, bool) else (p, None)


def _margin(value: float, threshold: float, lower_bound: bool, unit: str = "") -> str:
    diff = value - threshold if lower_bound else threshold - value
    word = "cleared by" if diff >= 0 else "missed by"
    text = f"{word} {_human(abs(diff), unit) if unit in ('bytes', 's') else _fmt(abs(diff))}"
    if threshold and value and (value > 0) == (threshold > 0):
        factor = value / threshold if lower_bound else threshold / value
        text += f" (x{factor:.3g})"
    return text


def _open(results: list[CheckResult]) -> bool:
    return any(c.outcome in ("unclear",) for c in results)


def needs_more(claim: Claim, runs: list[Run]) -> bool:
    """Whether another repeat could decide what is still unclear (used for noisy signals)."""
    result = evaluate(claim, runs)
    if result.verdict == "ERROR" or result.not_measurable:
        return False
    return _open(result.premises) or _open(result.checks)


def broken(claim: BrokenClaim) -> ClaimResult:
    return ClaimResult(claim, "ERROR", {"bad": [], "good": []}, {"bad": [], "good": []}, [],
                       [f"invalid claim: {claim.error}"], [], 0.0, reason="the claim could not be read")


def not_measurable(claim: Claim, reason: str) -> ClaimResult:
    """INCONCLUSIVE, nothing measured: this machine lacks what the claim requires."""
    return ClaimResult(claim, "INCONCLUSIVE", {"bad": [], "good": []}, {"bad": [], "good": []}, [], [], [],
                       0.0, reason=reason, not_measurable=reason)


def evaluate(claim, runs: list[Run]) -> ClaimResult:
    if isinstance(claim, BrokenClaim):
        return broken(claim)
    if claim.requires:
        from .requirements import unmet

        reason = unmet(claim)
        if reason is not None:  # never CONFIRMED or REFUTED where it cannot be measured
            return not_measurable(claim, reason)
    mine = [r for r in runs if r.task.claim is claim]
    errors = [f"{r.task.label()}: {r.error}" for r in mine if not r.ok]
    series: dict = {"bad": [], "good": []}
    spread: dict = {"bad": [], "good": []}
    points = {}
    for variant in ("bad", "good"):
        points[variant] = _points(claim, mine, variant, None)
        for p in points[variant]:
            series[variant].append(None if p is None else p[0])
            spread[variant].append(None if p is None else p[1])
    wall = sum(r.wall_s for r in mine)
    if errors:
        return ClaimResult(claim, "ERROR", series, spread, [], errors, mine, wall,
                           reason=f"{len(errors)} of {len(mine)} measurements failed")
    if not mine or any(v is None for v in series["bad"] + series["good"]):
        return ClaimResult(claim, "ERROR", series, spread, [], ["nothing was measured"], mine, wall,
                           reason="nothing was measured")
    premises = []
    for p in claim.premises:
        if p.signal is None:
            b, g = points["bad"], points["good"]
        else:
            b, g = _points(claim, mine, "bad", p.signal), _points(claim, mine, "good", p.signal)
        premises.append(evaluate_check(p, claim, b, g, premise=True))
    checks = [evaluate_check(c, claim, points["bad"], points["good"]) for c in claim.checks]
    unmet = [p for p in premises if p.outcome != "pass"]
    outcomes = {c.outcome for c in checks}
    if unmet:
        verdict = "INCONCLUSIVE"
        first = unmet[0]
        reason = (f"premise not met: {first.check.why or first.check.describe()} "
                  f"({first.check.describe()}: {_value_text(first, claim)}, {first.outcome})")
    elif outcomes == {"pass"}:
        verdict, reason = "CONFIRMED", "every check passes"
    elif "fail" in outcomes:
        verdict = "REFUTED"
        failed = [c.check.describe() for c in checks if c.outcome == "fail"]
        reason = "clearly fails: " + "; ".join(failed)
    else:
        verdict = "INCONCLUSIVE"
        open_ = [f"{c.check.describe()} ({c.outcome})" for c in checks if c.outcome != "pass"]
        reason = "not decided: " + "; ".join(open_)
    return ClaimResult(claim, verdict, series, spread, checks, [], mine, wall, premises, reason)


def _value_text(cr: CheckResult, claim: Claim) -> str:
    if cr.value is None:
        return cr.margin
    per_unit = ("bad_slope", "good_slope", "difference", "bad", "good")
    unit = _unit_of(claim, cr.check) if cr.check.quantity in per_unit else ""
    return _human(cr.value, unit) if unit in ("bytes", "s") else _fmt(cr.value)
