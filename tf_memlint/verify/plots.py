"""One PNG per claim: the signal against size, bad and good, the fitted line or threshold of each
check, the verdict in the title."""

from __future__ import annotations

import re
from pathlib import Path

from .verdict import ClaimResult, slope

LABELS = {  # signal: axis label (the unit is added when it is not already the word)
    "graph_nodes": "graph nodes",
    "graphdef_bytes": "GraphDef size",
    "graph_ops": "graph ops",
    "traces": "tracings",
    "alloc_peak": "allocator peak",
    "alloc_held": "allocator memory held",
    "live_tensors": "live EagerTensors",
    "rss": "RSS growth",
    "seconds": "wall time",
    "returned": "returned value",
}


def axis_label(signal: str, unit: str) -> str:
    label = LABELS.get(signal, signal)
    if not unit or unit.lower() in label.lower() or unit in ("nodes", "ops", "traces", "tensors", "count"):
        return label
    return f"{label} ({unit})"


def _scale(values: list, unit: str) -> tuple[float, str]:
    top = max((abs(v) for v in values), default=0)
    if unit == "bytes":
        for div, name in ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
            if top >= div:
                return div, name
        return 1.0, "B"
    if unit == "s":
        return (1.0, "s") if top >= 1 else (1e-3, "ms")
    return 1.0, unit


def write_plots(results: list[ClaimResult], directory: Path) -> dict:
    """Write the plots; return {claim id: path}. Claims without a numeric series are skipped."""
    import matplotlib  # lazy: an optional dependency

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    directory.mkdir(parents=True, exist_ok=True)
    written = {}
    for r in results:
        values = r.series["bad"] + r.series["good"]
        if not values or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            continue
        c = r.claim
        scale, unit = _scale(values, c.unit)
        fig, ax = plt.subplots(figsize=(7.0, 4.4), dpi=110)
        logx = len(c.sizes) > 1 and c.sizes[0] > 0 and c.sizes[-1] / c.sizes[0] >= 20
        for variant, color, marker in (("bad", "#c0392b", "o"), ("good", "#1e8449", "s")):
            ys = [v / scale for v in r.series[variant]]
            label = f"{variant}: {Path(getattr(c, variant)).name}"
            ax.plot(c.sizes, ys, color=color, marker=marker, markersize=6, linewidth=1.8, label=label)
            spread = r.spread[variant]
            if all(s for s in spread) and any(s[0] != s[1] for s in spread):
                ax.fill_between(c.sizes, [s[0] / scale for s in spread], [s[1] / scale for s in spread],
                                color=color, alpha=0.15, label=f"{variant}: range of the repeats")
            slope_checks = [cr for cr in r.checks if cr.check.quantity == f"{variant}_slope"]
            if slope_checks and len(c.sizes) > 1:
                k = slope(c.sizes, r.series[variant])
                mean_x = sum(c.sizes) / len(c.sizes)
                mean_y = sum(r.series[variant]) / len(c.sizes)
                lo, hi = c.sizes[0], c.sizes[-1]
                thr = slope_checks[0].check.threshold
                sign = ">=" if slope_checks[0].check.at_least is not None else "<="
                ax.plot([lo, hi], [(mean_y + k * (x - mean_x)) / scale for x in (lo, hi)], color=color,
                        linestyle="--", linewidth=1, label=f"{variant}: fitted slope")
                ax.plot([lo, hi], [(mean_y + thr * (x - mean_x)) / scale for x in (lo, hi)], color=color,
                        linestyle=":", linewidth=1.2,
                        label=f"{variant}: threshold slope ({sign})")
            for cr in r.checks:
                if cr.check.quantity == variant and cr.check.equals is None:
                    sign = ">=" if cr.check.at_least is not None else "<="
                    ax.axhline(cr.check.threshold / scale, color=color, linestyle=":", linewidth=1.2,
                               label=f"{variant}: threshold ({sign})")
        if logx:
            ax.set_xscale("log")
            if all(v > 0 for v in values):
                ax.set_yscale("log")
        ax.set_xlabel(c.size_name, fontsize=11)
        ax.set_ylabel(axis_label(c.signal, unit), fontsize=11)
        ax.tick_params(labelsize=10)
        ax.set_title(f"{c.id}: {r.verdict} (expected {c.expect})", fontsize=12)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="best")
        fig.tight_layout()
        path = directory / (re.sub(r"[^A-Za-z0-9_.-]", "_", c.id) + ".png")
        fig.savefig(path)
        plt.close(fig)
        written[c.id] = path
    return written
