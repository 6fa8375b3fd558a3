"""Stress check of the verifier: the same verdicts run after run, under load.

Runs the full `tf-memlint verify` RUNS times in a row (default 5) while another full
`tf-memlint verify` runs alongside the whole time (restarted whenever it finishes), and compares
the verdicts of the foreground runs. Exit status 0 when every claim got the same verdict in every
run, 1 otherwise.

    python scripts/verify_stress.py [--runs 5] [--out DIR] [--no-load] [-- CODE ...]

Each run's JSON report goes to DIR (default: a temporary directory), with `summary.md`: a table
of the verdicts per run and the range of the key figures. It takes a while: about RUNS times a
full verification, slowed by the one alongside. The machine is shared: expect it to be loaded by
other work too, which is the point.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

VERIFY = [sys.executable, "-m", "tf_memlint", "verify"]


def _verify(args: list[str], out: Path, log: Path) -> subprocess.Popen:
    with open(log, "wb") as fh:
        return subprocess.Popen([*VERIFY, *args, "--format", "json", "-o", str(out), "--no-progress"],
                                stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)


class Load:
    """Another full verification, alongside, restarted until stopped."""

    def __init__(self, out: Path, codes: list[str]):
        self.out, self.codes = out, codes
        self.proc: subprocess.Popen | None = None
        self.stopped = threading.Event()
        self.completed = 0
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        i = 0
        while not self.stopped.is_set():
            self.proc = _verify(self.codes, self.out / f"load-{i}.json", self.out / f"load-{i}.log")
            while self.proc.poll() is None and not self.stopped.is_set():
                time.sleep(1)
            if self.proc.poll() is not None and not self.stopped.is_set():
                self.completed += 1
            i += 1

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stopped.set()
        proc = self.proc
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)  # verify cleans up its measurements on SIGTERM
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        self.thread.join(timeout=120)


def _key_figure(claim: dict) -> str:
    """The decisive number of a claim: its first check's value (or the reason it has none)."""
    if not claim.get("checks"):
        return "-"
    value = claim["checks"][0].get("value")
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def summarise(reports: list[dict], command: str, load: str) -> tuple[str, bool]:
    ids = [c["id"] for c in reports[0]["claims"]]
    rows, stable = [], True
    for cid in ids:
        claims = [next((c for c in r["claims"] if c["id"] == cid), None) for r in reports]
        verdicts = [c["verdict"] if c else "missing" for c in claims]
        same = len(set(verdicts)) == 1
        stable &= same
        figures = [_key_figure(c) if c else "-" for c in claims]
        repeats = [str(c.get("repeats", "-")) if c else "-" for c in claims]
        first = claims[0]["checks"][0]["check"] if claims[0] and claims[0].get("checks") else ""
        rows.append(f"| {cid} | {' | '.join(verdicts)} | {'yes' if same else '**NO**'} | "
                    f"`{first}`: {' / '.join(figures)} | {' / '.join(repeats)} |")
    head = " | ".join(f"run {i + 1}" for i in range(len(reports)))
    lines = [
        f"Foreground: `{command}`, {len(reports)} consecutive runs; alongside: {load}.",
        "",
        f"| claim | {head} | identical | first check's value per run | repeats per run |",
        "|---|" + "---|" * len(reports) + "---|---|---|",
        *rows,
        "",
        "Elapsed per run: " + ", ".join(f"{r['elapsed_s']:.0f} s" for r in reports)
        + f"; verdicts {'identical in every run' if stable else 'NOT identical'}.",
    ]
    return "\n".join(lines) + "\n", stable


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--out", type=Path, help="directory for the reports (default: a temporary one)")
    p.add_argument("--no-load", action="store_true", help="no verification alongside")
    p.add_argument("codes", nargs="*", help="claims to run (default: all)")
    args = p.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="tfm-verify-stress-"))
    out.mkdir(parents=True, exist_ok=True)
    command = "tf-memlint verify " + " ".join([*args.codes, "--format json -o run-K.json --no-progress"])
    load = None if args.no_load else Load(out, args.codes)
    reports = []
    t0 = time.monotonic()
    try:
        if load:
            load.start()
            time.sleep(20)  # let it get going (TensorFlow import) before the first measurement
        for i in range(args.runs):
            report = out / f"run-{i + 1}.json"
            proc = _verify(args.codes, report, out / f"run-{i + 1}.log")
            proc.wait()
            data = json.loads(report.read_text())
            reports.append(data)
            verdicts = ", ".join(f"{c['id']}={c['verdict']}" for c in data["claims"])
            print(f"run {i + 1}/{args.runs}: {data['elapsed_s']:.0f} s, rc {proc.returncode}: {verdicts}",
                  flush=True)
    finally:
        if load:
            load.stop()
    alongside = ("none" if load is None else
                 f"the same full `tf-memlint verify`, restarted whenever it finished "
                 f"({load.completed} completed alongside)")
    text, stable = summarise(reports, command, alongside)
    text += f"Total {time.monotonic() - t0:.0f} s; reports in {out}.\n"
    (out / "summary.md").write_text(text)
    print(text)
    return 0 if stable else 1


if __name__ == "__main__":
    sys.exit(main())
