"""One PNG per claim: the signal against size, bad and good, the verdict in the title."""

from __future__ import annotations

import re
from pathlib import Path

from .verdict import ClaimResult


def write_plots(results: list[ClaimResult], directory: Path) -> dict:
    """Write the plots; return {claim id: path}. Claims without a numeric series are skipped."""
    import matplotlib  # lazy: an optional dependency

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    directory.mkdir(parents=True, exist_ok=True)
    written = {}
    for r in results:
        values = r.series["bad"] + r.series["good"]
        if not values or not all(isinstance(v, (int, float)) for v in values):
            continue
        c = r.claim
        scale, unit = 1.0, c.unit
        if c.unit == "bytes":
            scale, unit = (2**20, "MiB") if max(abs(v) for v in values) >= 2**20 else (2**10, "KiB")
        fig, ax = plt.subplots(figsize=(5.2, 3.4), dpi=90)
        for variant, color, marker in (("bad", "#c0392b", "o"), ("good", "#1e8449", "s")):
            ys = [v / scale for v in r.series[variant]]
            label = f"{variant} ({Path(getattr(c, variant)).name})"
            ax.plot(c.sizes, ys, color=color, marker=marker, label=label)
            if c.repeats > 1:
                lo = [s[0] / scale for s in r.spread[variant]]
                hi = [s[1] / scale for s in r.spread[variant]]
                ax.fill_between(c.sizes, lo, hi, color=color, alpha=0.15)
        if len(c.sizes) > 1 and c.sizes[0] > 0 and c.sizes[-1] / c.sizes[0] >= 20:
            ax.set_xscale("log")
            if all(v > 0 for v in values):
                ax.set_yscale("log")
        ax.set_xlabel(c.size_name)
        ax.set_ylabel(f"{c.signal}" + (f" ({unit})" if unit else ""))
        ax.set_title(f"{c.id}: {r.verdict} (expected {c.expect})", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        path = directory / (re.sub(r"[^A-Za-z0-9_.-]", "_", c.id) + ".png")
        fig.savefig(path)
        plt.close(fig)
        written[c.id] = path
    return written
