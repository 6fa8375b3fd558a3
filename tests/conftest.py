"""Shared test helpers: the fixtures and the expectations written inside them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
# `# expect: TFM404`, `TFM404@17` (a pinned column), `TFM404(high)` (a pinned confidence).
_ITEM = r"TFM\d{3}(?:@\d+)?(?:\((?:high|medium|low)\))?"
_EXPECT = re.compile(r"#\s*expect:\s*(?P<codes>%s(?:\s*,\s*%s)*)" % (_ITEM, _ITEM))
_PARTS = re.compile(r"(?P<code>TFM\d{3})(?:@(?P<col>\d+))?(?:\((?P<confidence>\w+)\))?")
# The fixture tests see every finding, whatever its grade: a marker says the rule fires there;
# a confidence in the marker pins its grade too.
EVERY_GRADE = {"confidence": "low"}


def _range_1000_grade() -> str:
    """What the grade adds to the message of a loop over range(1000) in a program: its evidence
    and, when TFM101's claim measured a unit cost, the projected cost."""
    from tf_memlint.evidence import COUNT, Evidence, Repetition
    from tf_memlint.grading import graded_message, project

    loop = Evidence(Repetition(COUNT, 1000, "range(1000)"), "program")
    return graded_message("", loop.words(), project("TFM101", loop)[0])


RANGE_1000_GRADE = _range_1000_grade()


def every_rule() -> list[str]:
    """Command-line arguments that turn on every rule, the opt-in ones too."""
    from tf_memlint.rule import all_rules

    return ["--extend-select", ",".join(all_rules())]


def fixture_files() -> list[Path]:
    """Every fixture, not the expected outputs of the fixes (``fixtures/TFMnnn/fixed/``)."""
    return sorted(p for p in FIXTURES.rglob("*.py") if p.parent.name != "fixed")


def expectations(path: Path) -> set[tuple[int, str, int | None]]:
    """(line, code, 1-based column or None) for every `# expect:` marker in the file."""
    expected = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        match = _EXPECT.search(line)
        if match:
            for item in re.split(r"\s*,\s*", match.group("codes")):
                part = _PARTS.fullmatch(item)
                expected.add((number, part["code"], int(part["col"]) if part["col"] else None))
    return expected


def expected_confidences(path: Path) -> dict[tuple[int, str], str]:
    """(line, code) -> confidence, for the markers that pin one."""
    pinned = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        match = _EXPECT.search(line)
        if match:
            for item in re.split(r"\s*,\s*", match.group("codes")):
                part = _PARTS.fullmatch(item)
                if part["confidence"]:
                    pinned[(number, part["code"])] = part["confidence"]
    return pinned


def matches(expected: set[tuple[int, str, int | None]], found: set[tuple[int, str, int]]) -> bool:
    """Found (line, code, column) equals the expectations; a pinned column must match too."""
    if {(line, code) for line, code, _ in expected} != {(line, code) for line, code, _ in found}:
        return False
    columns = {(line, code): col for line, code, col in found}
    return all(col is None or columns[(line, code)] == col for line, code, col in expected)


@pytest.fixture
def lint(tmp_path):
    """Lint a snippet through the same path the command uses (noqa included); return findings."""
    from tf_memlint.files import lint_file
    from tf_memlint.rule import all_rules

    def run(source: str, codes=None, **settings):
        path = tmp_path / "snippet.py"
        path.write_text(source, encoding="utf-8")
        result = lint_file(str(path), list(all_rules()) if codes is None else codes, {**EVERY_GRADE, **settings})
        assert result.error is None, result.error
        return result.findings

    return run


@pytest.fixture(autouse=True)
def _cache_of_its_own(tmp_path_factory, monkeypatch):
    """Each test runs the command with an empty cache of its own (cache.py): no test is served
    results another test left, and none writes a cache into the checkout."""
    monkeypatch.setenv("TF_MEMLINT_CACHE_DIR", str(tmp_path_factory.mktemp("tf-memlint") / ".tf-memlint-cache"))
