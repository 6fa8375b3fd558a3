"""Where the rule pages (rules/) and fixtures (fixtures/) are: the source tree, or the install."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def _find(name: str) -> Path:
    checkout = _PACKAGE.parent / name  # a source checkout or an editable install
    if checkout.is_dir():
        return checkout
    return _PACKAGE / "_data" / name  # a wheel: shipped as package data


def rules_dir() -> Path:
    return _find("rules")


def fixtures_dir() -> Path:
    return _find("fixtures")


def rule_page(code: str) -> Path:
    return rules_dir() / f"{code.upper()}.md"
