"""Measure the fixes: each rule's claim run again with its bad fixture, fixed, in place of the
good fixture (same signal, sizes, checks), so a fix counts only if the code it writes measures
like the code the rule page recommends.

``tf-memlint verify --fixes [CODE ...]`` runs those claims (ids ``<claim>-fix``); a claim whose
bad fixture the fix does not change is an ERROR. ``python -m tf_memlint.fixes.measure`` runs it
for every fix and records the verdicts in ``measured.json``, which decides what ``--fix``
ships (``fixes.shipped``): a rule's fix is offered only when every claim of its rule came out
CONFIRMED on the fixed code. ``tests/test_fixes.py`` checks that the record is of today's fixes
(the fixed text's hash) and, under real TensorFlow, measures them again.
"""

from __future__ import annotations

import atexit
import dataclasses
import hashlib
import json
import shutil
import sys
import tempfile
from pathlib import Path

from tf_memlint.files import read_source
from tf_memlint.fixes import FIXABLE, MEASURED
from tf_memlint.fixes.driver import fix_text
from tf_memlint.verify.claims import BrokenClaim

SUFFIX = "-fix"


def rule_of(claim) -> str:
    return claim.id.split("-")[0].upper()


def fixed_source(bad: Path) -> str:
    """The bad fixture with its rule's fix applied, unsafe fixes included, measured or not."""
    code = bad.parent.name
    return fix_text(read_source(str(bad)), [code], {"confidence": "low"}, unsafe=True, unmeasured=True).text


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def fixed_claims(claims: list) -> list:
    """For every rule claim of a rule with a fix: the claim whose good variant is its bad fixture,
    fixed (written to a temporary directory removed at exit)."""
    directory = Path(tempfile.mkdtemp(prefix="tf-memlint-fixes-"))
    atexit.register(shutil.rmtree, directory, True)
    out = []
    for claim in claims:
        if isinstance(claim, BrokenClaim) or claim.kind != "rule" or rule_of(claim) not in FIXABLE:
            continue
        original = read_source(str(claim.bad))
        text = fixed_source(claim.bad)
        fix_id = claim.id + SUFFIX
        if text == original:
            continue  # another shape of the rule, which the fix does not rewrite: nothing to measure
        fixed = directory / f"{fix_id}_{claim.bad.name}"
        fixed.write_text(text, encoding="utf-8")
        out.append(dataclasses.replace(
            claim, id=fix_id, good=fixed, quote="",
            statement=f"{claim.statement} [the good variant: {claim.bad.name} with the {rule_of(claim)} fix]"))
    return out


def record(report: dict, command: str) -> dict:
    """measured.json's content from a ``verify --fixes --format json`` report."""
    fixes: dict[str, dict] = {}
    for claim in report["claims"]:
        code = claim["id"].split("-")[0]
        entry = fixes.setdefault(code, {"claims": {}, "series": {}, "fixed_sha256": {}})
        entry["claims"][claim["id"]] = claim["verdict"]
        entry["series"][claim["id"]] = {"sizes": claim.get("sizes"), "bad": claim.get("series", {}).get("bad"),
                                        "fixed": claim.get("series", {}).get("good"), "unit": claim.get("unit")}
    for code, entry in fixes.items():
        for bad in sorted((_fixtures() / code).glob("bad_measured*.py")):
            entry["fixed_sha256"][bad.name] = digest(fixed_source(bad))
    return {"command": command, "tensorflow": report.get("tensorflow"), "date": report.get("date"),
            "fixes": dict(sorted(fixes.items()))}


def _fixtures() -> Path:
    from tf_memlint.resources import data_root

    return data_root() / "fixtures"


def main(argv: list[str] | None = None) -> int:
    """Measure every fix and record the verdicts in measured.json (arguments go to verify)."""
    from tf_memlint.verify import command

    argv = list(sys.argv[1:] if argv is None else argv)
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "report.json"
        status = command.run(["--fixes", *argv, *(FIXABLE if not any(a.startswith("TFM") for a in argv) else ()),
                              "--format", "json", "-o", str(out)])
        if not out.exists():
            return status or 2
        report = json.loads(out.read_text(encoding="utf-8"))
    data = record(report, "python -m tf_memlint.fixes.measure " + " ".join(argv))
    if MEASURED.exists() and any(a.startswith("TFM") for a in argv):  # a partial run updates its rules only
        previous = json.loads(MEASURED.read_text(encoding="utf-8"))
        data["fixes"] = dict(sorted({**previous.get("fixes", {}), **data["fixes"]}.items()))
    MEASURED.write_text(json.dumps(data, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    for code, entry in data["fixes"].items():
        print(f"{code}: {', '.join(f'{k} {v}' for k, v in entry['claims'].items())}")
    return status


if __name__ == "__main__":
    sys.exit(main())
