"""Shared test helpers: the fixtures and the expectations written inside them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
_EXPECT = re.compile(r"#\s*expect:\s*(?P<codes>TFM\d{3}(?:@\d+)?(?:\s*,\s*TFM\d{3}(?:@\d+)?)*)")


def every_rule() -> list[str]:
    """Command-line arguments that turn on every rule, the opt-in ones too."""
    from tf_memlint.rule import all_rules

    return ["--extend-select", ",".join(all_rules())]


def fixture_files() -> list[Path]:
    return sorted(p for p in FIXTURES.rglob("*.py"))


def expectations(path: Path) -> set[tuple[int, str, int | None]]:
    """(line, code, 1-based column or None) for every `# expect:` marker in the file."""
    expected = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        match = _EXPECT.search(line)
        if match:
            for item in re.split(r"\s*,\s*", match.group("codes")):
                code, _, column = item.partition("@")
                expected.add((number, code, int(column) if column else None))
    return expected


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
        result = lint_file(str(path), list(all_rules()) if codes is None else codes, settings)
        assert result.error is None, result.error
        return result.findings

    return run


@pytest.fixture(autouse=True)
def _cache_of_its_own(tmp_path_factory, monkeypatch):
    """Each test runs the command with an empty cache of its own (cache.py): no test is served
    results another test left, and none writes a cache into the checkout."""
    monkeypatch.setenv("TF_MEMLINT_CACHE_DIR", str(tmp_path_factory.mktemp("tf-memlint") / ".tf-memlint-cache"))
