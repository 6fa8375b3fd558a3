"""The catalogue's documents stay in step with the code: a page per rule, listed in the README."""

from __future__ import annotations

import pytest

from conftest import REPO
from tf_memlint.resources import rule_page
from tf_memlint.rule import all_rules

SECTIONS = ("## What it does", "## Why is this bad?", "## Example", "## Use instead")


@pytest.mark.parametrize("code", list(all_rules()))
def test_rule_page_has_the_ruff_sections(code):
    text = rule_page(code).read_text(encoding="utf-8")
    rule = all_rules()[code]
    assert text.startswith(f"# {code}: {rule.name}\n")
    for section in SECTIONS:
        assert section in text, f"{code}: missing {section}"
    assert ("opt-in" in text.lower()) or rule.default_enabled, f"{code} is opt-in: its page must say so"
    for option in rule.options:
        assert option.replace("_", "-") in text, f"{code}: option {option} is not documented"


@pytest.mark.parametrize("code", list(all_rules()))
def test_readme_lists_every_rule(code):
    assert f"[{code}](rules/{code}.md)" in (REPO / "README.md").read_text(encoding="utf-8")
