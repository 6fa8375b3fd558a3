"""Claims as data: the ``## Claim`` block of a rule page (or a ``.toml`` file), parsed and checked.

A claim page ends with::

    ## Claim

    ```toml claim
    statement = "..."
    signal = "graph_nodes"
    sizes = [10, 100, 1000]
    bad = "fixtures/TFM101/bad_measured.py"
    good = "fixtures/TFM101/good_measured.py"

    [[check]]
    quantity = "bad_slope"
    at_least = 1.0
    refuted_below = 0.5
    ```

Several claims on one page use ``[[claim]]`` tables (each with its own ``[[claim.check]]``).
See ``tf_memlint/verify/README.md`` for every key.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

SIGNALS = {
    # name: (unit, deterministic)
    "graph_nodes": ("nodes", True),
    "graphdef_bytes": ("bytes", True),
    "graph_ops": ("ops", True),
    "traces": ("traces", True),
    "alloc_peak": ("bytes", True),
    "alloc_held": ("bytes", True),
    "live_tensors": ("tensors", True),
    "rss": ("bytes", False),
    "seconds": ("s", False),
    "returned": ("", True),
    "exception": ("", True),
}

QUANTITIES = {"bad_slope", "good_slope", "slope_ratio", "ratio", "difference", "bad", "good"}
VERDICTS = ("CONFIRMED", "REFUTED", "INCONCLUSIVE", "ERROR")

CLAIM_HEADING = re.compile(r"^## Claim[ \t]*$", re.MULTILINE)
CLAIM_FENCE = re.compile(r"^```+[ \t]*toml[ \t]+claim[ \t]*\n(.*?)^```+[ \t]*$", re.MULTILINE | re.DOTALL)


class ClaimError(ValueError):
    """A claim block that cannot be used; the message names the file and the key."""


@dataclass
class Check:
    quantity: str
    at_least: float | None = None
    at_most: float | None = None
    refuted_below: float | None = None
    refuted_above: float | None = None
    equals: str | None = None
    over: str = "all"  # "all" sizes or only the "largest"

    def describe(self) -> str:
        if self.equals is not None:
            return f"{self.quantity} == {self.equals}"
        if self.at_least is not None:
            return f"{self.quantity} >= {_num(self.at_least)}"
        return f"{self.quantity} <= {_num(self.at_most)}"


@dataclass
class Claim:
    id: str
    source: Path
    statement: str
    signal: str
    sizes: list
    bad: Path
    good: Path
    checks: list[Check]
    expect: str = "CONFIRMED"
    kind: str = "rule"  # "rule" or "myth"
    repeats: int = 1
    warmup: int | None = None
    timeout_s: float = 120.0
    memory_limit_mib: int = 8192
    inter_op_threads: int | None = None
    intra_op_threads: int | None = None
    size_name: str = "n"
    unit: str = ""
    notes: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def deterministic(self) -> bool:
        return SIGNALS[self.signal][1]


def _num(x) -> str:
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        x = int(x)
    return f"{x:,}" if isinstance(x, int) else f"{x:g}"


def extract_claim_toml(text: str) -> str | None:
    """Return the TOML of the ``toml claim`` block under the page's ``## Claim`` heading, if any."""
    heading = CLAIM_HEADING.search(text)
    if heading is None:
        return None
    section = text[heading.end():]
    nxt = re.search(r"^#{1,2} ", section, re.MULTILINE)
    # a later top-level heading ends the section (the fence itself never starts with '#')
    fence = CLAIM_FENCE.search(section)
    if fence is None or (nxt is not None and nxt.start() < fence.start()):
        return None
    return fence.group(1)


def _resolve(raw: str, source: Path, roots: list[Path]) -> Path:
    p = Path(raw)
    if p.is_absolute():
        return p
    for base in [source.parent, *roots]:
        cand = (base / p).resolve()
        if cand.exists():
            return cand
    return (source.parent / p).resolve()  # reported as missing when run


def _check(table: dict, where: str) -> Check:
    unknown = set(table) - {"quantity", "at_least", "at_most", "refuted_below", "refuted_above",
                            "equals", "over"}
    if unknown:
        raise ClaimError(f"{where}: unknown check key(s) {sorted(unknown)}")
    q = table.get("quantity")
    if q not in QUANTITIES:
        raise ClaimError(f"{where}: check quantity must be one of {sorted(QUANTITIES)}, got {q!r}")
    c = Check(quantity=q, at_least=table.get("at_least"), at_most=table.get("at_most"),
              refuted_below=table.get("refuted_below"), refuted_above=table.get("refuted_above"),
              equals=table.get("equals"), over=table.get("over", "all"))
    given = [k for k in ("at_least", "at_most", "equals") if table.get(k) is not None]
    if len(given) != 1:
        raise ClaimError(f"{where}: a check needs exactly one of at_least / at_most / equals")
    if c.over not in ("all", "largest"):
        raise ClaimError(f"{where}: over must be 'all' or 'largest'")
    if c.equals is not None and q not in ("bad", "good"):
        raise ClaimError(f"{where}: equals applies to the quantities bad and good only")
    if c.at_least is not None and c.refuted_below is None:
        c.refuted_below = c.at_least
    if c.at_most is not None and c.refuted_above is None:
        c.refuted_above = c.at_most
    if c.at_least is not None and c.refuted_below > c.at_least:
        raise ClaimError(f"{where}: refuted_below must not exceed at_least")
    if c.at_most is not None and c.refuted_above < c.at_most:
        raise ClaimError(f"{where}: refuted_above must not be below at_most")
    return c


CLAIM_KEYS = {"id", "statement", "signal", "sizes", "bad", "good", "check", "expect", "kind",
              "repeats", "warmup", "timeout_s", "memory_limit_mib", "inter_op_threads",
              "intra_op_threads", "size_name", "unit", "notes"}


def _claim(table: dict, default_id: str, source: Path, roots: list[Path], kind: str) -> Claim:
    where = f"{source}: claim {table.get('id', default_id)}"
    unknown = set(table) - CLAIM_KEYS
    if unknown:
        raise ClaimError(f"{where}: unknown key(s) {sorted(unknown)}")
    for key in ("statement", "signal", "sizes", "bad", "good", "check"):
        if key not in table:
            raise ClaimError(f"{where}: missing key {key!r}")
    signal = table["signal"]
    if signal not in SIGNALS:
        raise ClaimError(f"{where}: signal must be one of {sorted(SIGNALS)}, got {signal!r}")
    sizes = table["sizes"]
    if not isinstance(sizes, list) or not sizes or not all(isinstance(s, (int, float)) for s in sizes):
        raise ClaimError(f"{where}: sizes must be a non-empty list of numbers")
    expect = table.get("expect", "REFUTED" if kind == "myth" else "CONFIRMED")
    if expect not in ("CONFIRMED", "REFUTED"):
        raise ClaimError(f"{where}: expect must be CONFIRMED or REFUTED")
    checks = table["check"]
    if isinstance(checks, dict):
        checks = [checks]
    if not checks:
        raise ClaimError(f"{where}: at least one [[check]] is needed")
    parsed = [_check(c, f"{where} check {i + 1}") for i, c in enumerate(checks)]
    if signal == "exception" and any(c.equals is None for c in parsed):
        raise ClaimError(f"{where}: the exception signal takes 'equals' checks only")
    if any(c.quantity.endswith("slope") or c.quantity == "slope_ratio" for c in parsed) and len(sizes) < 2:
        raise ClaimError(f"{where}: a slope needs at least two sizes")
    default_repeats = 1 if SIGNALS[signal][1] else 3
    return Claim(
        id=str(table.get("id", default_id)), source=source, statement=table["statement"].strip(),
        signal=signal, sizes=sorted(sizes), bad=_resolve(table["bad"], source, roots),
        good=_resolve(table["good"], source, roots), checks=parsed, expect=expect,
        kind=table.get("kind", kind), repeats=int(table.get("repeats", default_repeats)),
        warmup=table.get("warmup"), timeout_s=float(table.get("timeout_s", 120)),
        memory_limit_mib=int(table.get("memory_limit_mib", 8192)),
        inter_op_threads=table.get("inter_op_threads"), intra_op_threads=table.get("intra_op_threads"),
        size_name=table.get("size_name", "n"), unit=table.get("unit", SIGNALS[signal][0]),
        notes=table.get("notes", "").strip(),
    )


def parse_claims(text: str, source: Path, roots: list[Path], toml_only: bool = False) -> list[Claim]:
    """Parse the claims of one page (or TOML file). An empty list when the page has no claim."""
    body = text if toml_only else extract_claim_toml(text)
    if body is None:
        return []
    try:
        data = tomllib.loads(body)
    except tomllib.TOMLDecodeError as exc:
        raise ClaimError(f"{source}: the claim block is not valid TOML: {exc}") from exc
    kind = "myth" if source.parent.name == "myths" else "rule"
    stem = source.stem
    if "claim" in data:
        tables = data["claim"]
        if isinstance(tables, dict):
            tables = [tables]
        extra = set(data) - {"claim"}
        if extra:
            raise ClaimError(f"{source}: keys {sorted(extra)} must go inside a [[claim]] table")
        return [_claim(t, stem if i == 0 else f"{stem}-{i + 1}", source, roots, kind)
                for i, t in enumerate(tables)]
    return [_claim(data, stem, source, roots, kind)]


def discover(directories: list[Path], roots: list[Path]) -> list[Claim]:
    """All claims under the directories: ``*.md`` pages with a ``## Claim`` block and ``*.toml`` files."""
    claims: list[Claim] = []
    seen: set[str] = set()
    for directory in directories:
        files = sorted(p for p in directory.rglob("*") if p.suffix in (".md", ".toml") and p.is_file())
        for path in files:
            text = path.read_text(encoding="utf-8")
            for claim in parse_claims(text, path, [directory, directory.parent, *roots],
                                      toml_only=path.suffix == ".toml"):
                if claim.id in seen:
                    raise ClaimError(f"{path}: claim id {claim.id!r} is used twice")
                seen.add(claim.id)
                claims.append(claim)
    return claims


def select(claims: list[Claim], codes: list[str]) -> list[Claim]:
    """Keep the claims named by CODE arguments (an id, its prefix before '-', or 'myths'/'rules')."""
    if not codes:
        return claims
    wanted = {c.upper() for c in codes}
    out = []
    for c in claims:
        names = {c.id.upper(), c.id.split("-")[0].upper(), c.source.stem.upper()}
        if c.kind == "myth":
            names.add("MYTHS")
        else:
            names.add("RULES")
        if names & wanted:
            out.append(c)
    return out


def replace_claim_section(page_text: str, toml_text: str) -> str:
    """Return the page with its ``## Claim`` section set to ``toml_text`` (appended if absent).

    Only the Claim section changes; everything above it is kept byte for byte."""
    block = f"## Claim\n\n```toml claim\n{toml_text.strip()}\n```\n"
    heading = CLAIM_HEADING.search(page_text)
    if heading is None:
        sep = "" if page_text.endswith("\n\n") else ("\n" if page_text.endswith("\n") else "\n\n")
        return page_text + sep + block
    start = heading.start()
    rest = page_text[heading.end():]
    fence = CLAIM_FENCE.search(rest)
    end = heading.end() + fence.end() if fence else len(page_text)
    tail = page_text[end:].lstrip("\n")
    return page_text[:start] + block + (("\n" + tail) if tail else "")
