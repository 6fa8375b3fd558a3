"""Reports: a text table, JSON, the Markdown evidence page, and the figures quoted on rule pages."""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import platform
import re
import string
from pathlib import Path

from .claims import BrokenClaim
from .verdict import ClaimResult, _fmt, _human, _unit_of, slope

JSON_FORMAT_VERSION = 2


def _series(result: ClaimResult, variant: str) -> str:
    unit = getattr(result.claim, "unit", "")
    return " / ".join(_human(v, unit) for v in result.series[variant]) or "-"


def _describe(check, unit: str) -> str:
    """The check with its threshold in the signal's unit (`bad_slope >= 64 KiB`)."""
    if check.equals is not None or check.quantity in ("ratio", "slope_ratio") or unit not in ("bytes", "s"):
        return check.describe()
    q = check.quantity if check.signal is None else f"{check.quantity}({check.signal})"
    if check.at_least is not None:
        return f"{q} >= {_human(check.at_least, unit)}"
    return f"{q} <= {_human(check.at_most, unit)}"


def _check_line(cr, claim) -> str:
    unit = _unit_of(claim, cr.check)
    why = f" [{cr.check.why}]" if cr.premise and cr.check.why else ""
    if cr.value is None:
        return f"{_describe(cr.check, unit)}: {cr.outcome}: {cr.margin}{why}"
    value = _check_value(cr, unit, getattr(claim, "size_name", ""))
    return f"{_describe(cr.check, unit)}: {value} -> {cr.outcome} ({cr.margin}){why}"


def machine() -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 2**20:.1f} GiB"
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "memory": mem,
            "os": f"{platform.system()} {platform.release()}",
            "python": platform.python_version()}


def tf_version(results: list[ClaimResult]) -> str | None:
    for r in results:
        for run in r.runs:
            if run.tf_version:
                return run.tf_version
    return None


def _finite(x):
    """JSON has no Infinity or NaN: such numbers become null (the text says why)."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, (list, tuple)):
        return [_finite(v) for v in x]
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    return x


def _check_dict(cr, claim) -> dict:
    c = cr.check
    return {
        "check": c.describe(), "quantity": c.quantity, "signal": c.signal or claim.signal,
        "at_least": c.at_least, "at_most": c.at_most, "equals": c.equals,
        "refuted_below": c.refuted_below, "refuted_above": c.refuted_above, "over": c.over,
        "unit": _unit_of(claim, c) if c.quantity not in ("ratio", "slope_ratio") else "",
        "why": c.why or None,
        "value": cr.value, "low": cr.low, "high": cr.high, "outcome": cr.outcome,
        "margin": cr.margin, "per_size": cr.per_size,
    }


def claim_dict(r: ClaimResult) -> dict:
    c = r.claim
    if isinstance(c, BrokenClaim):
        return {"id": c.id, "kind": c.kind, "statement": c.statement, "source": str(c.source),
                "expect": c.expect, "verdict": r.verdict, "as_expected": r.as_expected,
                "reason": r.reason, "errors": r.errors, "wall_s": 0.0}
    return {
        "id": c.id, "kind": c.kind, "statement": c.statement,
        "source": str(c.source), "signal": c.signal, "unit": c.unit,
        "size_name": c.size_name, "sizes": c.sizes,
        "bad": str(c.bad), "good": str(c.good),
        "repeats": max((run.task.repeat + 1 for run in r.runs), default=0),
        "max_repeats": c.max_repeats,
        "expect": c.expect, "verdict": r.verdict, "as_expected": r.as_expected, "reason": r.reason,
        "requires": list(c.requires), "not_measurable": r.not_measurable or None,
        "wall_s": round(r.wall_s, 2),
        "series": r.series, "spread": r.spread,
        "premises": [_check_dict(p, c) for p in r.premises],
        "checks": [_check_dict(cr, c) for cr in r.checks],
        "quote": render_quote(r),
        "errors": r.errors,
        "error_output": [run.output for run in r.runs if not run.ok][:3],
        "runs": [{"variant": run.task.variant, "size": run.task.size,
                  "repeat": run.task.repeat, "value": run.value, "error": run.error,
                  "wall_s": round(run.wall_s, 2), "workload_s": run.workload_s, "aux": run.aux}
                 for run in r.runs],
    }


def as_dict(results: list[ClaimResult], elapsed: float, jobs: int, command: str = "",
            warnings: list[str] | None = None) -> dict:
    return _finite({
        "format_version": JSON_FORMAT_VERSION,
        "command": command,
        "tensorflow": tf_version(results),
        "machine": machine(),
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "elapsed_s": round(elapsed, 1),
        "jobs": jobs,
        "ok": all(r.as_expected for r in results),
        "warnings": list(warnings or []),
        "claims": [claim_dict(r) for r in results],
    })


def render_json(results, elapsed, jobs, command: str = "", warnings=None) -> str:
    return json.dumps(as_dict(results, elapsed, jobs, command, warnings), indent=2, default=str,
                      allow_nan=False) + "\n"


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(out)


def _sizes(r: ClaimResult) -> str:
    c = r.claim
    if isinstance(c, BrokenClaim):
        return "-"
    return f"{c.size_name}={'/'.join(_fmt(s) for s in c.sizes)}"


LEGEND = """\
How to read this: each claim ran its bad and its good fixture (the files named under it), each
size in a fresh process under real TensorFlow; bad/good above are the signal's median at each
size, smallest size first. A premise checks that the measurement means something (both fixtures
did TensorFlow work, the signal moved at all...): if one fails, the verdict is INCONCLUSIVE
whatever the checks say. A check compares a measured quantity with the claim's threshold:
"cleared by D (xR)" means it passed by D (R: value / threshold), "missed by D" that it failed
by D. CONFIRMED: every check passed; REFUTED: one failed beyond its band; INCONCLUSIVE: in
between; ERROR: a measurement failed. Sizes of memory are in KiB/MiB/GiB (2^10 bytes...), times
in s or ms of wall clock."""


def _fixture(path) -> str:
    """The fixture as a user can open it: relative to the current directory when below it."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return Path(path).as_posix()
    return Path(path if relative.startswith("..") else relative).as_posix()


def render_text(results: list[ClaimResult], elapsed: float, jobs: int, warnings=None) -> str:
    rows = []
    for r in results:
        mark = "not measurable here" if r.not_measurable else "ok" if r.as_expected else "UNEXPECTED"
        rows.append([r.claim.id, r.claim.kind, r.verdict, f"expected {r.claim.expect}: {mark}",
                     getattr(r.claim, "signal", "-"), _sizes(r), _series(r, "bad"), _series(r, "good"),
                     f"{r.wall_s:.0f} s"])
    out = [_table(rows, ["claim", "kind", "verdict", "expectation", "signal", "sizes", "bad", "good",
                         "time"])]
    out.append("")
    for w in warnings or []:
        out.append(f"warning: {w}")
    if warnings:
        out.append("")
    for r in results:
        out.append(f"{r.claim.id}: {r.verdict} - {r.claim.statement}")
        if r.reason and r.verdict != "CONFIRMED":
            out.append(f"    why: {r.reason}")
        if not isinstance(r.claim, BrokenClaim):
            out.append(f"    fixtures: bad {_fixture(r.claim.bad)}, good {_fixture(r.claim.good)}")
        if r.premises and all(p.outcome == "pass" for p in r.premises):
            out.append(f"    premises: all {len(r.premises)} hold")
        else:
            for p in r.premises:
                out.append(f"    premise {_check_line(p, r.claim)}")
        for c in r.checks:
            out.append(f"    check {_check_line(c, r.claim)}")
        for e in r.errors:
            out.append(f"    ERROR {e}")
        for run in r.runs:
            if not run.ok and run.output:
                out.append("      output: " + run.output.strip().replace("\n", "\n              ")[-800:])
                break
    ok = all(r.as_expected for r in results)
    m = machine()
    out.append("")
    out.append(f"{len(results)} claims in {elapsed:.0f} s (--jobs {jobs}) on TensorFlow "
               f"{tf_version(results) or '(not run)'}, Python {m['python']}, {m['cores']} cores: "
               + ("every verdict as expected" if ok else
                  f"{sum(not r.as_expected for r in results)} verdict(s) NOT as expected")
               + _unmeasured_note(results))
    out.append("")
    out.append(LEGEND)
    return "\n".join(out) + "\n"


def _unmeasured_note(results: list[ClaimResult]) -> str:
    """`` (1 not measurable here: TFM501)``: claims this machine cannot measure (no GPU...)."""
    ids = [r.claim.id for r in results if r.not_measurable]
    return f" ({len(ids)} not measurable here: {', '.join(ids)})" if ids else ""


def _link(target: Path, base: Path | None) -> str:
    """A link to ``target`` that works from a report written in ``base``."""
    if base is None:
        return target.as_posix()
    try:
        return Path(os.path.relpath(target, base)).as_posix()
    except ValueError:  # another drive (Windows)
        return target.resolve().as_uri()


def render_markdown(results: list[ClaimResult], elapsed: float, jobs: int,
                    plots: dict | None = None, plot_base: Path | None = None, command: str = "",
                    warnings=None) -> str:
    """The evidence page. ``plot_base`` is the directory the page is written to: every link
    (claims, fixtures, plots) is relative to it, so the page works wherever it is written."""
    info = as_dict(results, elapsed, jobs, command)
    m = info["machine"]
    base = plot_base
    claim_dirs = sorted({r.claim.source.parent for r in results}, key=str)
    sources = ", ".join(f"[{d.name}]({_link(d, base)})" for d in claim_dirs)
    lines = [
        "# Evidence: every claim, measured",
        "",
        f"Written by `{command or 'tf-memlint verify'}`; do not edit by hand.",
        "Each claim ran under real TensorFlow: every (claim, variant, size, repeat) in a fresh",
        "process with its own time and address-space limit. Deterministic signals run once and in",
        "parallel; noisy ones (RSS, time) run alone, at least three times and up to the claim's",
        "`max_repeats` until the verdict is decided. Figures are medians; a check decides on the",
        "range of the repeats, so every repeat must agree. A verdict is CONFIRMED when every check",
        "passes, REFUTED when one clearly fails (beyond its band), INCONCLUSIVE in between or when a",
        "premise (the measurement means something: both variants did TensorFlow work...) does not",
        "hold, ERROR when a measurement failed. Claims: " + (sources or "-") + "; format: "
        "`tf_memlint/verify/README.md`.",
        "",
        f"- TensorFlow: {info['tensorflow']}",
        f"- Machine: {m['cpu']}, {m['cores']} cores, {m['memory']} RAM, {m['os']}, Python {m['python']}",
        f"- Date: {info['date']}",
        f"- Run: {len(results)} claims in {info['elapsed_s']:.0f} s with `--jobs {jobs}`; "
        + ("every verdict as expected" if info["ok"] else "**some verdicts not as expected**")
        + _unmeasured_note(results) + ".",
        "",
    ]
    for w in warnings or []:
        lines.append(f"- Warning: {w}")
    if warnings:
        lines.append("")
    lines += ["| claim | kind | verdict | expected | signal | sizes | bad | good | time |",
              "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        c = r.claim
        sizes = ("-" if isinstance(c, BrokenClaim)
                 else f"{c.size_name} = {', '.join(_fmt(s) for s in c.sizes)}")
        expected = f"{c.expect} (not measurable here)" if r.not_measurable else c.expect
        lines.append(f"| [{c.id}](#{_anchor(c.id)}) | {c.kind} | **{r.verdict}** | "
                     f"{expected} | {getattr(c, 'signal', '-')} | {sizes} | {_series(r, 'bad')} | "
                     f"{_series(r, 'good')} | {r.wall_s:.0f} s |")
    lines.append("")
    for r in results:
        c = r.claim
        lines += [f"## {c.id}", "", f"**{r.verdict}** (expected {c.expect}). {c.statement}", ""]
        if isinstance(c, BrokenClaim):
            lines += [f"- ERROR: {e}" for e in r.errors] + [""]
            continue
        if r.reason and r.verdict != "CONFIRMED":
            lines += [f"Why: {r.reason}.", ""]
        if c.notes:
            lines += [c.notes, ""]
        if r.not_measurable:
            lines += [f"Requires: {', '.join(c.requires)}. Nothing was measured on this machine. "
                      f"Claim: [{_rel(c.source)}]({_link(c.source, base)}); fixtures "
                      f"[{_rel(c.bad)}]({_link(c.bad, base)}), [{_rel(c.good)}]({_link(c.good, base)}).", ""]
            continue
        repeats = max((run.task.repeat + 1 for run in r.runs), default=0)
        lines += [f"Signal `{c.signal}` ({c.unit or 'value'}), repeats {repeats}"
                  + (f" (of at most {c.max_repeats})" if c.max_repeats > c.repeats else "")
                  + (f", warm-up {_fmt(c.warmup)}" if c.warmup is not None else "")
                  + (f", inter-op threads {c.inter_op_threads}" if c.inter_op_threads else "")
                  + f", {r.wall_s:.0f} s of measurement. Claim: [{_rel(c.source)}]({_link(c.source, base)}); "
                  f"fixtures [{_rel(c.bad)}]({_link(c.bad, base)}), "
                  f"[{_rel(c.good)}]({_link(c.good, base)}).", ""]
        lines += [f"| {c.size_name} | bad | good |", "|---|---|---|"]
        for i, s in enumerate(c.sizes):
            lines.append(f"| {_fmt(s)} | {_cell(r, 'bad', i)} | {_cell(r, 'good', i)} |")
        lines.append("")
        for p in r.premises:
            unit = _unit_of(c, p.check)
            lines.append(f"- premise `{_describe(p.check, unit)}`"
                         + (f" ({p.check.why})" if p.check.why else "")
                         + f": {_check_value(p, unit)} -> "
                         + ("**holds**" if p.outcome == "pass" else "**not met**"))
        for cr in r.checks:
            unit = _unit_of(c, cr.check)
            band = _band(cr.check, unit)
            lines.append(f"- `{_describe(cr.check, unit)}`{band}: {_check_value(cr, unit)} "
                         f"-> **{cr.outcome}**, {cr.margin}")
        for e in r.errors:
            lines.append(f"- ERROR: {e}")
        quote = render_quote(r)
        if quote:
            lines += ["", f"Quoted on the claim's page: {quote}"]
        if plots and c.id in plots:
            lines += ["", f"![{c.id}]({_link(plots[c.id], base)})"]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _band(check, unit: str) -> str:
    if check.equals is not None:
        return ""
    h = (lambda v: _human(v, unit)) if unit in ("bytes", "s") else _fmt
    if check.at_least is not None and check.refuted_below not in (None, check.at_least):
        return f" (refuted below {h(check.refuted_below)})"
    if check.at_most is not None and check.refuted_above not in (None, check.at_most):
        return f" (refuted above {h(check.refuted_above)})"
    return ""


def _rel(p: Path) -> str:
    parts = p.parts
    for anchor in ("rules", "fixtures"):
        if anchor in parts:
            i = len(parts) - 1 - parts[::-1].index(anchor)
            return "/".join(parts[i:])
    return p.name


def _anchor(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum() or ch in "-_ ").replace(" ", "-")


def _cell(r: ClaimResult, variant: str, i: int) -> str:
    v = r.series[variant][i]
    txt = _human(v, r.claim.unit)
    sp = r.spread[variant][i]
    if sp and sp[0] != sp[1]:
        txt += f" (range {_human(sp[0], r.claim.unit)} to {_human(sp[1], r.claim.unit)})"
    return txt


def _check_value(cr, unit: str, size_name: str = "") -> str:
    if cr.value is None:
        return cr.margin
    if isinstance(cr.value, str):
        return cr.value
    q = cr.check.quantity
    if q in ("bad_slope", "good_slope"):
        return f"{_human(cr.value, unit)} per unit of {size_name or 'size'}"
    if q in ("difference", "bad", "good"):
        return _human(cr.value, unit)
    return _fmt(cr.value)


# ----------------------------------------------------------------------------- quoted figures

_SUFFIXES = {"bytes": ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB"), (1, "B")),
             "s": ((1, "s"), (1e-3, "ms"))}


def _g(x: float) -> str:
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.3g}"


def human_list(values: list, unit: str) -> str:
    """``4.03 / 16 / 64 MiB``: one scale for the whole list, chosen by its largest value."""
    nums = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if len(nums) != len(values):
        return " / ".join(_human(v, unit) for v in values)
    nonzero = [abs(v) for v in nums if v]
    if unit in _SUFFIXES and nonzero and max(nonzero) / min(nonzero) > 100:
        return " / ".join(_human(v, unit) for v in nums)  # no one scale reads well
    if unit in _SUFFIXES and nums:
        top = max(abs(v) for v in nums)
        div, suffix = next(((d, s) for d, s in _SUFFIXES[unit] if top >= d), _SUFFIXES[unit][-1])
        return " / ".join(_g(v / div) for v in nums) + f" {suffix}"
    return " / ".join(_fmt(v) for v in nums)


def quote_fields(r: ClaimResult) -> dict:
    """The fields a claim's ``quote`` template may use (see the verifier README)."""
    c = r.claim
    unit = c.unit
    bad, good = r.series["bad"], r.series["good"]
    f = {"sizes": " / ".join(_fmt(s) for s in c.sizes), "bad": human_list(bad, unit),
         "good": human_list(good, unit), "bad_first": _human(bad[0], unit), "bad_last": _human(bad[-1], unit),
         "good_first": _human(good[0], unit), "good_last": _human(good[-1], unit),
         "tensorflow": tf_version([r]) or "?"}
    numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in bad + good)
    if numeric and len(c.sizes) > 1:
        bs, gs = slope(c.sizes, bad), slope(c.sizes, good)
        f["bad_slope"], f["good_slope"] = _human(bs, unit), _human(gs, unit)
        f["slope_ratio"] = f"{bs / gs:.2g}" if gs > 0 else "undefined"
    if numeric:
        f["ratio"] = " / ".join(f"{b / g:.3g}" if g > 0 else "undefined" for b, g in zip(bad, good))
        f["difference"] = human_list([b - g for b, g in zip(bad, good)], unit)
    return f


class QuoteError(ValueError):
    pass


def render_quote(r: ClaimResult) -> str | None:
    """The claim's ``quote`` with the measured figures filled in (None without a quote or a result)."""
    c = r.claim
    if isinstance(c, BrokenClaim) or not getattr(c, "quote", "") or r.verdict == "ERROR":
        return None
    fields = quote_fields(r)
    try:
        return c.quote.format_map(fields)
    except (KeyError, IndexError, ValueError) as exc:
        raise QuoteError(f"{c.source}: claim {c.id}: quote uses an unknown field {exc} "
                         f"(known: {', '.join(sorted(fields))})") from None


def quote_field_names(template: str) -> list[str]:
    return [name for _, name, _, _ in string.Formatter().parse(template) if name]


MEASURED = re.compile(r"^Measured by `tf-memlint verify (?P<id>[^`\s]+)`[^\n]*(?:\n(?!\n)[^\n]*)*",
                      re.MULTILINE)


def measured_paragraph(r: ClaimResult, evidence_link: str = "EVIDENCE.md") -> str | None:
    """The page paragraph that quotes a claim's figures: one line, generated, never hand-edited."""
    quote = render_quote(r)
    if quote is None:
        return None
    tf = tf_version([r]) or "?"
    tf = ".".join(tf.split(".")[:2])
    return (f"Measured by `tf-memlint verify {r.claim.id}` on TensorFlow {tf} CPU "
            f"([evidence]({evidence_link}#{_anchor(r.claim.id)})): {quote}")


def measured_paragraphs(page_text: str) -> dict[str, str]:
    """{claim id: paragraph} of every generated 'Measured by' paragraph on a page."""
    return {m.group("id"): m.group(0) for m in MEASURED.finditer(page_text)}


def update_page(page_text: str, r: ClaimResult, evidence_link: str) -> tuple[str, bool]:
    """Replace the claim's 'Measured by' paragraph on its page; (text, whether it was there)."""
    new = measured_paragraph(r, evidence_link)
    if new is None:
        return page_text, False
    for m in MEASURED.finditer(page_text):
        if m.group("id") == r.claim.id:
            return page_text[:m.start()] + new + page_text[m.end():], True
    return page_text, False


def unit_costs(results: list[ClaimResult], command: str = "") -> dict:
    """The unit cost of each rule whose claim declares one and was CONFIRMED: the bad fixture's
    least-squares slope per size step, in the signal's unit, with the figure the rule's page quotes
    (``{bad_slope}``), so the page, a finding's message and the measurement say the same."""
    rules = {}
    for r in results:
        c = r.claim
        if isinstance(c, BrokenClaim) or not c.unit_cost or r.verdict != "CONFIRMED":
            continue
        bad = r.series["bad"]
        if len(c.sizes) < 2 or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in bad):
            continue
        value = slope(c.sizes, bad)
        unit = {"s": "seconds"}.get(c.unit, c.unit)
        rules[c.id.split("-", 1)[0]] = {"claim": c.id, "unit": unit, "per": c.unit_cost,
                                         "value": value, "quoted": _human(value, c.unit)}
    return {"command": command, "tensorflow": tf_version(results), "machine": machine(),
            "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "rules": rules}


def merged_costs(table: dict, partial: dict) -> dict:
    """``table`` with the rules a run of some claims measured replaced by ``partial``'s figures;
    each replaced rule keeps the command, date and TensorFlow of its own run."""
    rules = dict(table.get("rules", {}))
    for code, cost in partial["rules"].items():
        rules[code] = {**cost, "command": partial["command"], "date": partial["date"],
                       "tensorflow": partial["tensorflow"]}
    return {**table, "rules": rules}
