"""`tf-memlint verify`: measure every claim under real TensorFlow and report the verdicts."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shlex
import signal
import sys
import threading
import time
from pathlib import Path

from tf_memlint.resources import data_root

INSTALL_HINT = (
    "tf-memlint verify runs the claims under real TensorFlow, which is not installed here.\n"
    "Install it with:  pip install 'tf-memlint[verify]'   (tensorflow-cpu and matplotlib)\n"
)


def shipped_dirs() -> tuple[list[Path], list[Path]]:
    """The shipped claim directories and the roots fixture paths are resolved against."""
    root = data_root()
    if (root / "rules").is_dir() and (root / "fixtures").is_dir():
        return [root / "rules"], [root]
    return [], []


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tf-memlint verify",
        description="Run every rule's claim (and every refuted myth) under real TensorFlow and "
                    "say CONFIRMED, REFUTED, INCONCLUSIVE or ERROR, with the numbers.",
    )
    p.add_argument("codes", nargs="*", metavar="CODE",
                   help="claims to run: a rule code (TFM101), a claim id, 'rules' or 'myths' (default: all)")
    p.add_argument("--claims", action="append", type=Path, metavar="DIR", default=[],
                   help="read claims from DIR instead of the shipped ones (repeatable)")
    p.add_argument("--with-shipped", action="store_true",
                   help="with --claims, run the shipped claims too")
    p.add_argument("--jobs", "-j", type=int, default=2,
                   help="deterministic measurements at once (default 2); noisy ones (rss, seconds) "
                        "always run alone")
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    p.add_argument("--output", "-o", type=Path, help="write the report to this file instead of stdout")
    p.add_argument("--plots", type=Path, metavar="DIR", help="write one PNG per claim into DIR")
    p.add_argument("--plot", action="append", default=[], metavar="CODE",
                   help="with --plots, plot only these claims (repeatable; default: all)")
    p.add_argument("--update-pages", action="store_true",
                   help="rewrite the 'Measured by `tf-memlint verify ID`' paragraph of each claim's "
                        "page with the figures just measured (claims with a 'quote')")
    p.add_argument("--costs", type=Path, metavar="FILE",
                   help="write the unit costs of the claims that declare one (unit_cost) to FILE, "
                        "as JSON: the table findings project their cost from (tf_memlint/unit_costs.json); "
                        "with CODE arguments, only the rules measured are replaced in an existing FILE")
    p.add_argument("--no-fork", action="store_true",
                   help="start a new Python interpreter for every measurement (slower: each one "
                        "imports TensorFlow) instead of forking it from one that already did")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.add_argument("--list", action="store_true", help="list the claims and exit, running nothing")
    p.add_argument("--fixes", action="store_true",
                   help="measure each rule's fix instead: the claim with the bad fixture, fixed by "
                        "`tf-memlint --fix --unsafe-fixes`, in place of the good fixture (ids <claim>-fix)")
    return p


def _terminate(signum, frame):  # noqa: ARG001
    raise KeyboardInterrupt


def command_line(argv: list[str]) -> str:
    return "tf-memlint verify" + ("" if not argv else " " + shlex.join(argv))


def run(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    from .claims import BrokenClaim, discover_all, select

    if args.jobs < 1:
        print("tf-memlint verify: --jobs must be at least 1", file=sys.stderr)
        return 2
    dirs, roots = [], []
    if args.claims:
        for d in args.claims:
            if not d.is_dir():
                print(f"tf-memlint verify: no such claim directory: {d}", file=sys.stderr)
                return 2
        dirs += [d.resolve() for d in args.claims]
        roots += [Path.cwd()]
    if not args.claims or args.with_shipped:
        sdirs, sroots = shipped_dirs()
        if not sdirs and not args.claims:
            print("tf-memlint verify: cannot find the shipped rules/ and fixtures/ "
                  "(broken install?)", file=sys.stderr)
            return 2
        dirs += sdirs
        roots += sroots
    found = discover_all(dirs, roots)
    for w in found.warnings:
        print(f"tf-memlint verify: warning: {w}", file=sys.stderr)
    claims = select(found.claims, args.codes)
    if args.fixes:
        from tf_memlint.fixes.measure import fixed_claims

        claims = fixed_claims(claims)
    if not claims:
        print("tf-memlint verify: no claim matches " + (" ".join(args.codes) or "(none found)"),
              file=sys.stderr)
        return 2
    for c in claims:
        if isinstance(c, BrokenClaim):
            print(f"tf-memlint verify: invalid claim (reported as ERROR, the others run): {c.error}",
                  file=sys.stderr)
    if args.list:
        for c in claims:
            if isinstance(c, BrokenClaim):
                print(f"{c.id:40} {c.kind:5} INVALID: {c.error}")
            else:
                needs = f"requires {','.join(c.requires)} " if c.requires else ""
                print(f"{c.id:40} {c.kind:5} expect {c.expect:9} {c.signal:14} {needs}{c.statement}")
        return 0
    if importlib.util.find_spec("tensorflow") is None:
        sys.stderr.write(INSTALL_HINT)
        return 2
    if args.plots is not None and importlib.util.find_spec("matplotlib") is None:
        sys.stderr.write("tf-memlint verify --plots needs matplotlib: "
                         "pip install 'tf-memlint[verify]'\n")
        return 2

    from .report import render_json, render_markdown, render_text
    from .runner import run_all
    from .verdict import evaluate, needs_more

    runnable = [c for c in claims if not isinstance(c, BrokenClaim)]
    t0 = time.monotonic()
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _terminate)  # clean up like Ctrl-C does
    try:
        runs = run_all(runnable, jobs=args.jobs, progress=not args.no_progress, fork=not args.no_fork,
                       more=needs_more) if runnable else []
    except KeyboardInterrupt:
        print("\ntf-memlint verify: interrupted", file=sys.stderr)
        return 130
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    results = [evaluate(c, runs) for c in claims]
    elapsed = time.monotonic() - t0
    cmd = command_line(argv)

    plots = {}
    if args.plots is not None:
        from .plots import write_plots

        chosen = select([r.claim for r in results], args.plot) if args.plot else None
        plots = write_plots([r for r in results if chosen is None or r.claim in chosen
                             and not isinstance(r.claim, BrokenClaim)], args.plots)
    if args.format == "json":
        text = render_json(results, elapsed, args.jobs, cmd, found.warnings)
    elif args.format == "markdown":
        base = args.output.resolve().parent if args.output else Path.cwd()
        text = render_markdown(results, elapsed, args.jobs,
                               {k: v.resolve() for k, v in plots.items()}, base, cmd, found.warnings)
    else:
        text = render_text(results, elapsed, args.jobs, found.warnings)
    if args.output:
        args.output.write_text(text, encoding="utf-8")
        print(f"tf-memlint verify: report written to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    if args.update_pages:
        _update_pages(results, args)
    if args.costs:
        from .report import merged_costs, unit_costs

        table = unit_costs(results, cmd)
        if args.codes and args.costs.exists():
            table = merged_costs(json.loads(args.costs.read_text(encoding="utf-8")), table)
        args.costs.write_text(json.dumps(table, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        print(f"tf-memlint verify: unit costs written to {args.costs}", file=sys.stderr)
    return 0 if all(r.as_expected for r in results) else 1


def _update_pages(results, args) -> None:
    """Rewrite each 'Measured by `tf-memlint verify ID`' paragraph of every page next to the claims
    (any page may quote any claim) with this run's figures."""
    from .claims import BrokenClaim
    from .report import MEASURED, render_quote, update_page

    evidence = args.output.resolve() if (args.output and args.format == "markdown") else None
    by_id = {r.claim.id: r for r in results if not isinstance(r.claim, BrokenClaim) and r.claim.quote}
    for r in by_id.values():
        if render_quote(r) is None:
            print(f"tf-memlint verify: {r.claim.id}: no figures to quote ({r.verdict}); "
                  "its paragraphs are left as they are", file=sys.stderr)
    pages = sorted({p for r in results for p in r.claim.source.parent.glob("*.md")})
    quoted = set()
    for page in pages:
        text = page.read_text(encoding="utf-8")
        new = text
        for m in list(MEASURED.finditer(text)):
            r = by_id.get(m.group("id"))
            if r is None or render_quote(r) is None:
                continue
            link = (Path(os.path.relpath(evidence, page.parent)).as_posix() if evidence
                    else "EVIDENCE.md")
            new, _ = update_page(new, r, link)
            quoted.add(r.claim.id)
        if new != text:
            page.write_text(new, encoding="utf-8")
            print(f"tf-memlint verify: updated the measured figures in {page}", file=sys.stderr)
    for cid, r in by_id.items():
        if cid not in quoted and r.claim.source.suffix == ".md":
            print(f"tf-memlint verify: {r.claim.source}: no 'Measured by `tf-memlint verify {cid}`' "
                  "paragraph to update", file=sys.stderr)


def main() -> int:  # python -m tf_memlint.verify.command
    return run(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
