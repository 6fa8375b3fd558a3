"""Every fixture fires exactly its `# expect:` markers, through the command and through flake8."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import defaultdict

import pytest

from conftest import EVERY_GRADE, FIXTURES, REPO, expectations, expected_confidences, fixture_files, matches
from tf_memlint.files import lint_file
from tf_memlint.rule import all_rules

ALL_CODES = list(all_rules())
FILES = fixture_files()


def _id(path):
    return str(path.relative_to(FIXTURES))


def test_there_are_fixtures_for_every_rule():
    for code in ALL_CODES:
        bad = list((FIXTURES / code).glob("bad_*.py"))
        good = list((FIXTURES / code).glob("good_*.py"))
        assert bad and good, f"{code} needs bad_*.py and good_*.py fixtures"


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_fixture_markers_fit_its_name(path):
    expected = expectations(path)
    if path.name.startswith("bad_") and path.parent.name == "seeds":
        assert expected, f"{path.name}: a seed article's example must expect its finding"
    elif path.name.startswith("bad_") and "myths" not in path.parts:
        own_code = path.parent.name
        assert any(code == own_code for _, code, _ in expected), f"{path.name} must expect {own_code}"
    else:
        assert not expected, f"{path.name} is a look-alike: it must not expect findings"


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_command_reports_exactly_the_markers(path):
    result = lint_file(str(path), ALL_CODES, EVERY_GRADE)
    assert result.error is None
    found = {(d.line, d.code, d.col + 1) for d in result.findings}
    expected = expectations(path)
    assert matches(expected, found), (
        f"\nexpected: {sorted(expected)}\nfound:    {sorted(found)}\n"
        + "".join(f"  {d.line}:{d.col + 1} {d}\n" for d in result.findings))
    graded = {(d.line, d.code): d.confidence for d in result.findings}
    for where, confidence in expected_confidences(path).items():
        assert graded[where] == confidence, f"line {where[0]} {where[1]}: graded {graded[where]}, expected {confidence}"


def _flake8(confidence: str) -> dict[str, set]:
    """One flake8 run over all fixtures at a confidence: {path: {(line, code, col)}}."""
    completed = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", f"--select={','.join(ALL_CODES + ['TFM000'])}",
         f"--tfm-confidence={confidence}", "--format=%(path)s|%(row)d|%(col)d|%(code)s", str(FIXTURES)],
        capture_output=True, text=True, cwd=REPO, timeout=600)
    assert completed.returncode in (0, 1), completed.stderr
    found = defaultdict(set)
    for line in completed.stdout.splitlines():
        path, row, col, code = line.rsplit("|", 3)
        found[str(REPO / path) if not path.startswith("/") else path].add((int(row), code, int(col)))
    return found


@pytest.fixture(scope="module")
def flake8_findings():
    return _flake8("low")


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_flake8_reports_exactly_the_markers(path, flake8_findings):
    found = flake8_findings.get(str(path), set())
    assert not any(code == "TFM000" for _, code, _ in found)
    assert matches(expectations(path), found), f"expected {sorted(expectations(path))}, flake8 {sorted(found)}"


@pytest.mark.parametrize("confidence", ["high", "medium", "low"])
def test_flake8_and_command_agree_at_every_confidence(confidence, flake8_findings):
    flake8 = flake8_findings if confidence == "low" else _flake8(confidence)
    shown = 0
    for path in FILES:
        result = lint_file(str(path), ALL_CODES, {"confidence": confidence})
        ours = {(d.line, d.code, d.col + 1) for d in result.findings}
        assert ours == flake8.get(str(path), set()), path
        shown += len(ours)
    assert shown  # every level shows some findings on the fixtures


def test_markers_are_well_formed():
    """A typo like `# expect TFM101` would silently make a bad fixture expect nothing."""
    loose = re.compile(r"#\s*expect\b(?!:\s*TFM\d{3})")
    for path in FILES:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            assert not loose.search(line), f"{path}:{number}: malformed expectation"
