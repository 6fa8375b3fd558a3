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
Every key is type- and range-checked here, before anything is measured; a claim that does not
pass is reported as an ERROR of that claim (``BrokenClaim``) and the other claims still run.
See ``tf_memlint/verify/README.md`` for every key.
"""

from __future__ import annotations

import math
import re
try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11: the tomli backport (a dependency there)
    import tomli as tomllib
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

# Recorded by every measurement next to the claim's own signal; a premise may test them.
AUX_SIGNALS = {
    "seconds": "s",       # wall time of workload(n)
    "alloc_peak": "bytes",  # CPU allocator peak during workload(n), above the level before it
    "traces": "traces",   # tf.function tracings during workload(n)
    "tf_work": "",        # 1 when workload(n) did TensorFlow work (allocated, traced or built a graph)
    "returned": "",       # the returned value when it is a number
}

# What a claim may need from the machine (``requires``): name -> what it is, for reasons and docs.
# Whether the machine has it is decided before anything runs (requirements.py); a claim whose
# requirement does not hold is INCONCLUSIVE, "not measurable here", and nothing of it runs.
REQUIREMENTS = {"gpu": "a GPU"}
# Signals a claim that requires a GPU cannot use: reading the CPU allocator's statistics starts
# TensorFlow's runtime in the measuring process, which then holds the GPU itself.
GPU_EXCLUDED_SIGNALS = frozenset({"alloc_peak", "alloc_held", "tf_work"})

QUANTITIES = {"bad_slope", "good_slope", "slope_ratio", "ratio", "difference", "bad", "good"}
VERDICTS = ("CONFIRMED", "REFUTED", "INCONCLUSIVE", "ERROR")
NOISY_REPEATS, NOISY_MAX_REPEATS = 3, 7

CLAIM_HEADING = re.compile(r"^## Claim[ \t]*$", re.MULTILINE)
CLAIM_FENCE = re.compile(r"^```+[ \t]*toml[ \t]+claim[ \t]*\n(.*?)^```+[ \t]*$", re.MULTILINE | re.DOTALL)
ANY_FENCE = re.compile(r"^(```+)[ \t]*([^\n]*)\n", re.MULTILINE)
ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


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
    signal: str | None = None  # premises only: an auxiliary signal instead of the claim's own
    why: str = ""

    @property
    def threshold(self):
        return self.at_least if self.at_least is not None else self.at_most

    def describe(self) -> str:
        q = self.quantity if self.signal is None else f"{self.quantity}({self.signal})"
        if self.equals is not None:
            return f"{q} == {self.equals}"
        if self.at_least is not None:
            return f"{q} >= {_num(self.at_least)}"
        return f"{q} <= {_num(self.at_most)}"


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
    max_repeats: int = 1
    warmup: float | None = None
    timeout_s: float = 120.0
    memory_limit_mib: int = 8192
    inter_op_threads: int | None = None
    intra_op_threads: int | None = None
    size_name: str = "n"
    unit: str = ""
    notes: str = ""
    quote: str = ""
    premises: list[Check] = field(default_factory=list)
    extra: dict = field(default_factory=dict)
    requires: tuple = ()  # names from REQUIREMENTS: what the machine must have to measure it
    # What one repetition of the rule's pattern is ("model", "call"): the bad fixture's slope per
    # size step is then the rule's unit cost, which findings project (grading.py).
    unit_cost: str = ""

    @property
    def deterministic(self) -> bool:
        return SIGNALS[self.signal][1]

    @property
    def needs_gpu(self) -> bool:
        return "gpu" in self.requires


@dataclass
class BrokenClaim:
    """A claim that could not be read: reported as an ERROR, the other claims still run."""

    id: str
    source: Path
    error: str
    kind: str = "rule"
    expect: str = "CONFIRMED"
    statement: str = "(the claim could not be read)"


def _num(x) -> str:
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        x = int(x)
    return f"{x:,}" if isinstance(x, int) else f"{x:g}"


def _claim_section(text: str) -> str | None:
    heading = CLAIM_HEADING.search(text)
    if heading is None:
        return None
    section = text[heading.end():]
    # a later level-1/2 heading ends the section, unless it is inside a fence
    fence_open = False
    for m in re.finditer(r"^(```+[^\n]*|#{1,2} [^\n]*)$", section, re.MULTILINE):
        line = m.group(1)
        if line.startswith("```"):
            fence_open = not fence_open
        elif not fence_open:
            return section[:m.start()]
    return section


def extract_claim_toml(text: str) -> str | None:
    """Return the TOML of the ``toml claim`` block under the page's ``## Claim`` heading, if any."""
    section = _claim_section(text)
    if section is None:
        return None
    fence = CLAIM_FENCE.search(section)
    return fence.group(1) if fence else None


def claim_section_warning(text: str, source: Path) -> str | None:
    """A warning when a page has a ``## Claim`` section but no ``toml claim`` block in it."""
    section = _claim_section(text)
    if section is None or CLAIM_FENCE.search(section):
        return None
    infos = [m.group(2).strip() for m in ANY_FENCE.finditer(section)]
    opening = [i for i in infos[::2]]  # every other fence line opens a block
    if opening:
        shown = ", ".join(f"```{i}" if i else "``` (no info string)" for i in opening)
        return (f"{source}: the '## Claim' section has a fenced block ({shown}) but none with the "
                "info string 'toml claim' (write ```toml claim); no claim was read from this page")
    return f"{source}: the '## Claim' section has no ```toml claim block; no claim was read from this page"


def _resolve(raw: str, source: Path, roots: list[Path]) -> Path:
    p = Path(raw)
    if p.is_absolute():
        return p
    for base in [source.parent, *roots]:
        cand = (base / p).resolve()
        if cand.exists():
            return cand
    return (source.parent / p).resolve()  # reported as missing when run


# ----------------------------------------------------------------------------- typed values


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _number(table: dict, key: str, where: str, *, positive=False, minimum=None, integer=False):
    v = table[key]
    kind = "an integer" if integer else "a number"
    if not _is_number(v) or (integer and not isinstance(v, int)):
        shown = f'"{v}" (a string)' if isinstance(v, str) else repr(v)
        raise ClaimError(f"{where}: {key} must be {kind}, got {shown}"
                         + (f"; write {key} = {v} without quotes"
                            if isinstance(v, str) and _parses(v) else ""))
    if not math.isfinite(v):
        raise ClaimError(f"{where}: {key} must be finite, got {v}")
    if positive and v <= 0:
        raise ClaimError(f"{where}: {key} must be greater than 0, got {v}")
    if minimum is not None and v < minimum:
        raise ClaimError(f"{where}: {key} must be at least {minimum}, got {v}")
    return v


def _parses(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def _string(table: dict, key: str, where: str, *, choices=None, nonempty=False) -> str:
    v = table[key]
    if not isinstance(v, str):
        raise ClaimError(f"{where}: {key} must be a string, got {v!r}")
    if nonempty and not v.strip():
        raise ClaimError(f"{where}: {key} must not be empty")
    if choices is not None and v not in choices:
        raise ClaimError(f"{where}: {key} must be one of {', '.join(map(repr, sorted(choices)))}, got {v!r}")
    return v


CHECK_KEYS = {"quantity", "at_least", "at_most", "refuted_below", "refuted_above", "equals", "over", "why"}
PREMISE_KEYS = {"quantity", "signal", "at_least", "at_most", "equals", "over", "why"}


def default_band(c: Check, noisy: bool, where: str) -> None:
    """Fill in the INCONCLUSIVE band: a factor of 2 around a non-zero threshold.

    ``at_least = T`` gets ``refuted_below = T/2`` (T > 0) or ``2T`` (T < 0); ``at_most = T`` gets
    ``refuted_above = 2T`` (T > 0) or ``T/2`` (T < 0). A zero threshold has no scale: on a
    deterministic signal the band is empty, a noisy signal needs an explicit band."""
    if c.at_least is not None and c.refuted_below is None:
        t = c.at_least
        if t == 0 and noisy:
            raise ClaimError(f"{where}: at_least = 0 on a noisy signal needs an explicit refuted_below")
        c.refuted_below = t / 2 if t > 0 else t * 2
    if c.at_most is not None and c.refuted_above is None:
        t = c.at_most
        if t == 0 and noisy:
            raise ClaimError(f"{where}: at_most = 0 on a noisy signal needs an explicit refuted_above")
        c.refuted_above = t * 2 if t > 0 else t / 2


def _check(table, where: str, *, premise: bool, claim_signal: str) -> Check:
    if not isinstance(table, dict):
        raise ClaimError(f"{where}: must be a table ([[check]] / [[premise]]), got {table!r}")
    allowed = PREMISE_KEYS if premise else CHECK_KEYS
    unknown = set(table) - allowed
    if unknown:
        raise ClaimError(f"{where}: unknown key(s) {sorted(unknown)} (allowed: {', '.join(sorted(allowed))})")
    if "quantity" not in table:
        raise ClaimError(f"{where}: missing key 'quantity'")
    q = _string(table, "quantity", where, choices=QUANTITIES)
    nums = {k: _number(table, k, where) for k in ("at_least", "at_most", "refuted_below", "refuted_above")
            if k in table}
    equals = _string(table, "equals", where) if "equals" in table else None
    over = _string(table, "over", where, choices={"all", "largest"}) if "over" in table else "all"
    why = _string(table, "why", where) if "why" in table else ""
    signal = None
    if premise and "signal" in table:
        signal = _string(table, "signal", where, choices=set(AUX_SIGNALS) | {claim_signal})
        if signal == claim_signal:
            signal = None
    c = Check(quantity=q, at_least=nums.get("at_least"), at_most=nums.get("at_most"),
              refuted_below=nums.get("refuted_below"), refuted_above=nums.get("refuted_above"),
              equals=equals, over=over, signal=signal, why=why.strip())
    given = [k for k in ("at_least", "at_most", "equals") if k in table]
    if len(given) != 1:
        raise ClaimError(f"{where}: a check needs exactly one of at_least / at_most / equals, got "
                         + (", ".join(given) or "none"))
    if c.refuted_below is not None and c.at_least is None:
        raise ClaimError(f"{where}: refuted_below goes with at_least")
    if c.refuted_above is not None and c.at_most is None:
        raise ClaimError(f"{where}: refuted_above goes with at_most")
    sig = signal or claim_signal
    if c.equals is not None and q not in ("bad", "good"):
        raise ClaimError(f"{where}: equals applies to the quantities bad and good only")
    if c.equals is None and sig == "exception":
        raise ClaimError(f"{where}: the exception signal takes 'equals' checks only")
    if c.at_least is not None and c.refuted_below is not None and c.refuted_below > c.at_least:
        raise ClaimError(f"{where}: refuted_below ({_num(c.refuted_below)}) must not exceed "
                         f"at_least ({_num(c.at_least)})")
    if c.at_most is not None and c.refuted_above is not None and c.refuted_above < c.at_most:
        raise ClaimError(f"{where}: refuted_above ({_num(c.refuted_above)}) must not be below "
                         f"at_most ({_num(c.at_most)})")
    return c


CLAIM_KEYS = {"id", "statement", "signal", "sizes", "bad", "good", "check", "premise", "expect",
              "kind", "repeats", "max_repeats", "warmup", "timeout_s", "memory_limit_mib",
              "inter_op_threads", "intra_op_threads", "size_name", "unit", "notes", "quote",
              "default_premises", "requires", "unit_cost"}


def _tables(value, key: str, where: str) -> list:
    if isinstance(value, dict):
        return [value]
    if not isinstance(value, list):
        raise ClaimError(f"{where}: {key} must be a table or an array of tables ([[{key}]]), got {value!r}")
    return value


QUOTE_FIELDS = {"sizes", "bad", "good", "bad_first", "bad_last", "good_first", "good_last",
                "bad_slope", "good_slope", "slope_ratio", "ratio", "difference", "tensorflow"}


def _check_quote(template: str, where: str) -> None:
    import string

    try:
        names = [name for _, name, spec, conv in string.Formatter().parse(template) if name is not None]
    except ValueError as exc:
        raise ClaimError(f"{where}: quote is not a valid template ({exc}); "
                         "write {{{{ and }}}} for braces") from None
    unknown = sorted({n for n in names if n not in QUOTE_FIELDS})
    if unknown or any(n == "" for n in names):
        raise ClaimError(f"{where}: quote uses unknown field(s) {unknown or ['{}']} "
                         f"(known: {', '.join(sorted(QUOTE_FIELDS))})")


def _requires(table: dict, where: str) -> tuple:
    value = table["requires"]
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items or not all(isinstance(i, str) for i in items):
        raise ClaimError(f'{where}: requires must be a string or a non-empty list of strings '
                         f'(requires = "gpu"), got {value!r}')
    for item in items:
        if item not in REQUIREMENTS:
            raise ClaimError(f"{where}: requires: unknown requirement {item!r} "
                             f"(known: {', '.join(map(repr, sorted(REQUIREMENTS)))})")
    return tuple(dict.fromkeys(items))


def _check_gpu_claim(table: dict, where: str, signal: str, premises: list[Check], use_default: bool) -> None:
    """A claim that requires a GPU is measured through its workload (worker processes, a returned
    value...): the measuring process must leave TensorFlow's runtime alone (see the README)."""
    if "memory_limit_mib" in table:
        raise ClaimError(f"{where}: memory_limit_mib does not apply to a claim that requires a GPU "
                         "(CUDA maps more address space than any useful limit): remove it")
    if signal in GPU_EXCLUDED_SIGNALS:
        raise ClaimError(f"{where}: signal {signal!r} cannot be measured in a claim that requires a GPU "
                         "(reading the CPU allocator starts TensorFlow's runtime in the measuring process)")
    for p in premises:
        if p.signal in GPU_EXCLUDED_SIGNALS:
            raise ClaimError(f"{where}: a premise on {p.signal!r} cannot hold in a claim that requires a "
                             "GPU (the measuring process records no allocator statistics)")
    if use_default:
        raise ClaimError(f"{where}: a claim that requires a GPU must set default_premises = false "
                         "(they test the measuring process's allocator, which it leaves alone); state "
                         "what the workload must show with [[premise]]")


def default_premises(signal: str) -> list[Check]:
    """Every claim's measurement must have done TensorFlow work in both variants: a fixture whose
    workload(n) returns at once (``return None``) proves nothing either way."""
    if signal in ("graph_nodes", "graphdef_bytes", "graph_ops"):
        return []  # those signals need a graph back, or the run is an ERROR
    why = "workload(n) did TensorFlow work (allocated tensors, traced a function or built a graph)"
    return [Check("bad", at_least=1, signal="tf_work", why=f"bad: {why}"),
            Check("good", at_least=1, signal="tf_work", why=f"good: {why}")]


def _claim(table, default_id: str, source: Path, roots: list[Path], kind: str) -> Claim:
    if not isinstance(table, dict):
        raise ClaimError(f"{source}: claim {default_id}: a [[claim]] must be a table")
    cid = table.get("id", default_id)
    where = f"{source}: claim {cid}"
    unknown = set(table) - CLAIM_KEYS
    if unknown:
        raise ClaimError(f"{where}: unknown key(s) {sorted(unknown)}")
    if "id" in table:
        cid = _string(table, "id", where, nonempty=True)
        if not ID_PATTERN.match(cid):
            raise ClaimError(f"{where}: id may hold letters, digits, '_', '.', '-' only, got {cid!r}")
    for key in ("statement", "signal", "sizes", "bad", "good", "check"):
        if key not in table:
            raise ClaimError(f"{where}: missing key {key!r}")
    statement = _string(table, "statement", where, nonempty=True)
    signal = _string(table, "signal", where, choices=set(SIGNALS))
    noisy = not SIGNALS[signal][1]
    sizes = table["sizes"]
    if not isinstance(sizes, list) or not sizes:
        raise ClaimError(f"{where}: sizes must be a non-empty list of numbers, got {sizes!r}")
    for s in sizes:
        if not _is_number(s) or not math.isfinite(s) or s < 0:
            raise ClaimError(f"{where}: sizes must be numbers >= 0, got {s!r}")
    if len(set(sizes)) != len(sizes):
        raise ClaimError(f"{where}: sizes must be distinct, got {sizes}")
    bad = _string(table, "bad", where, nonempty=True)
    good = _string(table, "good", where, nonempty=True)
    expect = (_string(table, "expect", where, choices={"CONFIRMED", "REFUTED"}) if "expect" in table
              else ("REFUTED" if kind == "myth" else "CONFIRMED"))
    ckind = _string(table, "kind", where, choices={"rule", "myth"}) if "kind" in table else kind
    default_repeats = NOISY_REPEATS if noisy else 1
    repeats = (_number(table, "repeats", where, integer=True, minimum=1) if "repeats" in table
               else default_repeats)
    if repeats > 100:
        raise ClaimError(f"{where}: repeats must be at most 100, got {repeats}")
    if "max_repeats" in table:
        max_repeats = _number(table, "max_repeats", where, integer=True, minimum=1)
        if max_repeats < repeats:
            raise ClaimError(f"{where}: max_repeats ({max_repeats}) must not be below repeats ({repeats})")
        if max_repeats > 100:
            raise ClaimError(f"{where}: max_repeats must be at most 100, got {max_repeats}")
    else:
        max_repeats = max(repeats, NOISY_MAX_REPEATS) if noisy else repeats
    warmup = _number(table, "warmup", where, minimum=0) if "warmup" in table else None
    timeout_s = float(_number(table, "timeout_s", where, positive=True)) if "timeout_s" in table else 120.0
    memory = (_number(table, "memory_limit_mib", where, integer=True, minimum=1)
              if "memory_limit_mib" in table else 8192)
    inter, intra = (_number(table, k, where, integer=True, minimum=1) if k in table else None
                    for k in ("inter_op_threads", "intra_op_threads"))
    texts = {k: (_string(table, k, where) if k in table else None)
             for k in ("size_name", "unit", "notes", "quote", "unit_cost")}
    if texts["quote"]:
        _check_quote(texts["quote"], where)
    use_default = table.get("default_premises", True)
    if not isinstance(use_default, bool):
        raise ClaimError(f"{where}: default_premises must be true or false, got {use_default!r}")

    checks = _tables(table["check"], "check", where)
    if not checks:
        raise ClaimError(f"{where}: at least one [[check]] is needed")
    parsed = [_check(c, f"{where} check {i + 1}", premise=False, claim_signal=signal)
              for i, c in enumerate(checks)]
    premises = [_check(p, f"{where} premise {i + 1}", premise=True, claim_signal=signal)
                for i, p in enumerate(_tables(table.get("premise", []), "premise", where))]
    for i, c in enumerate(parsed):
        default_band(c, noisy, f"{where} check {i + 1}")
    slopes = [c for c in parsed + premises if c.quantity.endswith("slope") or c.quantity == "slope_ratio"]
    if slopes and len(sizes) < 2:
        raise ClaimError(f"{where}: a slope needs at least two sizes")
    if signal == "exception" and any(c.equals is None for c in parsed):
        raise ClaimError(f"{where}: the exception signal takes 'equals' checks only")
    requires = _requires(table, where) if "requires" in table else ()
    if "gpu" in requires:
        _check_gpu_claim(table, where, signal, premises, use_default)
    if use_default:
        premises = default_premises(signal) + premises
    return Claim(
        id=str(cid), source=source, statement=statement.strip(), signal=signal, sizes=sorted(sizes),
        bad=_resolve(bad, source, roots), good=_resolve(good, source, roots), checks=parsed,
        expect=expect, kind=ckind, repeats=repeats, max_repeats=max_repeats, warmup=warmup,
        timeout_s=timeout_s, memory_limit_mib=memory, inter_op_threads=inter,
        intra_op_threads=intra, size_name=texts["size_name"] or "n",
        unit=texts["unit"] if texts["unit"] is not None else SIGNALS[signal][0],
        notes=(texts["notes"] or "").strip(), quote=(texts["quote"] or "").strip(), premises=premises,
        requires=requires, unit_cost=texts["unit_cost"] or "",
    )


def parse_claims(text: str, source: Path, roots: list[Path], toml_only: bool = False) -> list[Claim]:
    """Parse the claims of one page (or TOML file). An empty list when the page has no claim.

    Raises ClaimError for the first problem found (the whole page is then unusable)."""
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
        tables = _tables(data["claim"], "claim", str(source))
        extra = set(data) - {"claim"}
        if extra:
            raise ClaimError(f"{source}: keys {sorted(extra)} must go inside a [[claim]] table")
        return [_claim(t, stem if i == 0 else f"{stem}-{i + 1}", source, roots, kind)
                for i, t in enumerate(tables)]
    return [_claim(data, stem, source, roots, kind)]


@dataclass
class Discovery:
    claims: list  # Claim and BrokenClaim, in file order
    warnings: list[str] = field(default_factory=list)


def discover_all(directories: list[Path], roots: list[Path]) -> Discovery:
    """Every claim under the directories (``*.md`` pages with a ``## Claim`` block and ``*.toml``
    files). A file that cannot be read gives one BrokenClaim (an ERROR when run); the rest run."""
    found = Discovery([])
    seen: set[str] = set()
    for directory in directories:
        files = sorted(p for p in directory.rglob("*") if p.suffix in (".md", ".toml") and p.is_file())
        for path in files:
            kind = "myth" if path.parent.name == "myths" else "rule"
            try:
                text = path.read_text(encoding="utf-8")
                if path.suffix == ".md":
                    warning = claim_section_warning(text, path)
                    if warning:
                        found.warnings.append(warning)
                claims = parse_claims(text, path, [directory, directory.parent, *roots],
                                      toml_only=path.suffix == ".toml")
            except (ClaimError, OSError, UnicodeDecodeError) as exc:
                found.claims.append(BrokenClaim(_unique(path.stem, seen), path, str(exc), kind=kind,
                                                expect="REFUTED" if kind == "myth" else "CONFIRMED"))
                continue
            for claim in claims:
                if claim.id in seen:
                    found.claims.append(BrokenClaim(
                        _unique(claim.id, seen), path, f"{path}: claim id {claim.id!r} is used twice",
                        kind=claim.kind, expect=claim.expect, statement=claim.statement))
                    continue
                seen.add(claim.id)
                found.claims.append(claim)
    return found


def _unique(name: str, seen: set) -> str:
    out, i = name, 2
    while out in seen:
        out, i = f"{name}#{i}", i + 1
    seen.add(out)
    return out


def discover(directories: list[Path], roots: list[Path]) -> list[Claim]:
    """The readable claims only; raises ClaimError on the first unreadable one (strict)."""
    found = discover_all(directories, roots)
    broken = [c for c in found.claims if isinstance(c, BrokenClaim)]
    if broken:
        raise ClaimError(broken[0].error)
    return found.claims


def select(claims: list, codes: list[str]) -> list:
    """Keep the claims named by CODE arguments (an id, its prefix before '-', or 'myths'/'rules')."""
    if not codes:
        return claims
    wanted = {c.upper() for c in codes}
    out = []
    for c in claims:
        names = {c.id.upper(), c.id.split("-")[0].upper(), c.source.stem.upper()}
        names.add("MYTHS" if c.kind == "myth" else "RULES")
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
