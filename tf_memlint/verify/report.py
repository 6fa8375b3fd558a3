"""Reports: a text table, JSON, and the Markdown evidence page."""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
from pathlib import Path

from .verdict import ClaimResult, _fmt, _human


def _series(result: ClaimResult, variant: str) -> str:
    unit = result.claim.unit
    return " / ".join(_human(v, unit) for v in result.series[variant])


def _describe(check, unit: str) -> str:
    """The check with its threshold in the signal's unit (`bad_slope >= 64 KiB`)."""
    if check.equals is not None or check.quantity in ("ratio", "slope_ratio") or unit not in ("bytes", "s"):
        return check.describe()
    if check.at_least is not None:
        return f"{check.quantity} >= {_human(check.at_least, unit)}"
    return f"{check.quantity} <= {_human(check.at_most, unit)}"


def _check_line(cr, unit: str) -> str:
    return f"{_describe(cr.check, unit)}: {_check_value(cr, unit)} -> {cr.outcome} ({cr.margin})"


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


def as_dict(results: list[ClaimResult], elapsed: float, jobs: int) -> dict:
    return {
        "tensorflow": tf_version(results),
        "machine": machine(),
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "elapsed_s": round(elapsed, 1),
        "jobs": jobs,
        "ok": all(r.as_expected for r in results),
        "claims": [
            {
                "id": r.claim.id, "kind": r.claim.kind, "statement": r.claim.statement,
                "source": str(r.claim.source), "signal": r.claim.signal, "unit": r.claim.unit,
                "size_name": r.claim.size_name, "sizes": r.claim.sizes,
                "bad": str(r.claim.bad), "good": str(r.claim.good), "repeats": r.claim.repeats,
                "expect": r.claim.expect, "verdict": r.verdict, "as_expected": r.as_expected,
                "series": r.series, "spread": r.spread,
                "checks": [{"check": c.check.describe(), "value": c.value, "outcome": c.outcome,
                            "margin": c.margin, "per_size": c.per_size} for c in r.checks],
                "errors": r.errors,
                "error_output": [run.output for run in r.runs if not run.ok][:3],
                "runs": [{"variant": run.task.variant, "size": run.task.size,
                          "repeat": run.task.repeat, "value": run.value, "error": run.error,
                          "wall_s": round(run.wall_s, 2), "workload_s": run.workload_s}
                         for run in r.runs],
            }
            for r in results
        ],
    }


def render_json(results, elapsed, jobs) -> str:
    return json.dumps(as_dict(results, elapsed, jobs), indent=2, default=str) + "\n"


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(out)


def render_text(results: list[ClaimResult], elapsed: float, jobs: int) -> str:
    rows = []
    for r in results:
        mark = "ok" if r.as_expected else "UNEXPECTED"
        rows.append([r.claim.id, r.claim.kind, r.verdict, f"expected {r.claim.expect}: {mark}",
                     r.claim.signal, f"{r.claim.size_name}={'/'.join(_fmt(s) for s in r.claim.sizes)}",
                     _series(r, "bad"), _series(r, "good")])
    out = [_table(rows, ["claim", "kind", "verdict", "expectation", "signal", "sizes", "bad", "good"])]
    out.append("")
    for r in results:
        out.append(f"{r.claim.id}: {r.verdict} - {r.claim.statement}")
        for c in r.checks:
            out.append(f"    {_check_line(c, r.claim.unit)}")
        for e in r.errors:
            out.append(f"    ERROR {e}")
        for run in r.runs:
            if not run.ok and run.output:
                out.append("      output: " + run.output.strip().replace("\n", "\n              ")[-800:])
                break
    ok = all(r.as_expected for r in results)
    out.append("")
    out.append(f"{len(results)} claims in {elapsed:.0f} s (--jobs {jobs}): "
               + ("every verdict as expected" if ok else
                  f"{sum(not r.as_expected for r in results)} verdict(s) NOT as expected"))
    return "\n".join(out) + "\n"


def render_markdown(results: list[ClaimResult], elapsed: float, jobs: int,
                    plots: dict | None = None, plot_base: Path | None = None) -> str:
    info = as_dict(results, elapsed, jobs)
    m = info["machine"]
    lines = [
        "# Evidence: every claim, measured",
        "",
        "Written by `tf-memlint verify --format markdown -o rules/EVIDENCE.md --plots rules/plots "
        "--plot TFM101 --plot TFM301`;",
        "do not edit by hand. Each rule's claim (and each refuted myth) ran under real TensorFlow:",
        "every (claim, variant, size, repeat) in a fresh process with its own time and address-space",
        "limit (forked from a process that has only imported TensorFlow; `--no-fork` starts a new",
        "interpreter for each instead), deterministic signals once, noisy ones (RSS, time) three times",
        "with the median kept. A verdict is CONFIRMED when every check passes, REFUTED when one clearly",
        "fails, INCONCLUSIVE in between. The claims themselves are the `## Claim` blocks of",
        "[the rule pages](.) and [the myths](myths/); see `tf_memlint/verify/README.md` for the format.",
        "",
        f"- TensorFlow: {info['tensorflow']}",
        f"- Machine: {m['cpu']}, {m['cores']} cores, {m['memory']} RAM, {m['os']}, Python {m['python']}",
        f"- Date: {info['date']}",
        f"- Run: {len(results)} claims in {info['elapsed_s']:.0f} s with `--jobs {jobs}`; "
        + ("every verdict as expected." if info["ok"] else "**some verdicts not as expected.**"),
        "",
        "| claim | kind | verdict | expected | signal | sizes | bad | good |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        sizes = f"{r.claim.size_name} = {', '.join(_fmt(s) for s in r.claim.sizes)}"
        lines.append(f"| [{r.claim.id}](#{_anchor(r.claim.id)}) | {r.claim.kind} | **{r.verdict}** | "
                     f"{r.claim.expect} | {r.claim.signal} | {sizes} | {_series(r, 'bad')} | "
                     f"{_series(r, 'good')} |")
    lines.append("")
    for r in results:
        c = r.claim
        lines += [f"## {c.id}", "", f"**{r.verdict}** (expected {c.expect}). {c.statement}", ""]
        if c.notes:
            lines += [c.notes, ""]
        lines += [f"Signal `{c.signal}` ({c.unit or 'value'}), repeats {c.repeats}"
                  + (f", warm-up {c.warmup}" if c.warmup is not None else "")
                  + (f", inter-op threads {c.inter_op_threads}" if c.inter_op_threads else "")
                  + f". Claim: `{_rel(c.source)}`; fixtures `{_rel(c.bad)}`, `{_rel(c.good)}`.", ""]
        lines += [f"| {c.size_name} | bad | good |", "|---|---|---|"]
        for i, s in enumerate(c.sizes):
            lines.append(f"| {_fmt(s)} | {_cell(r, 'bad', i)} | {_cell(r, 'good', i)} |")
        lines.append("")
        for cr in r.checks:
            lines.append(f"- `{_describe(cr.check, c.unit)}`: {_check_value(cr, c.unit)} "
                         f"-> **{cr.outcome}**, {cr.margin}")
        for e in r.errors:
            lines.append(f"- ERROR: {e}")
        if plots and c.id in plots:
            p = plots[c.id]
            rel = os.path.relpath(p, plot_base) if plot_base else p
            lines += ["", f"![{c.id}]({rel})"]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _rel(p: Path) -> str:
    parts = p.parts
    for anchor in ("rules", "fixtures"):
        if anchor in parts:
            i = len(parts) - 1 - parts[::-1].index(anchor)
            return "/".join(parts[i:])
    return str(p)


def _anchor(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum() or ch in "-_ ").replace(" ", "-")


def _cell(r: ClaimResult, variant: str, i: int) -> str:
    v = r.series[variant][i]
    txt = _human(v, r.claim.unit)
    sp = r.spread[variant][i]
    if r.claim.repeats > 1 and sp and sp[0] != sp[1]:
        txt += f" (range {_human(sp[0], r.claim.unit)} to {_human(sp[1], r.claim.unit)})"
    return txt


def _check_value(cr, unit: str) -> str:
    if isinstance(cr.value, str):
        return cr.value
    q = cr.check.quantity
    if q in ("bad_slope", "good_slope"):
        return f"{_human(cr.value, unit)} per unit of size"
    if q in ("difference", "bad", "good"):
        return _human(cr.value, unit)
    return _fmt(cr.value)
