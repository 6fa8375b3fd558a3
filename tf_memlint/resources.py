"""Where the rule pages (rules/) and fixtures (fixtures/) are: the source tree, or the install."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def data_root() -> Path:
    """The directory holding rules/ and fixtures/: the checkout (or an editable install) when
    there is one, else the copy shipped inside the wheel as package data."""
    checkout = _PACKAGE.parent
    if (checkout / "rules").is_dir() and (checkout / "fixtures").is_dir():
        return checkout
    return _PACKAGE / "_data"


def rules_dir() -> Path:
    return data_root() / "rules"


def rule_page(code: str) -> Path:
    return rules_dir() / f"{code.upper()}.md"
