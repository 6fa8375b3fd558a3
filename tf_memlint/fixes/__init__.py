"""Fixes: one LibCST rewrite per rule that has a mechanical one (``tfmNNN.py``), applied by the
``tf-memlint --fix`` command (``driver.py``); the flake8 plugin only reports.

A fix is *shipped* (offered by ``--fix``) only when the verifier measured it: its rule's bad
fixture, fixed, measured like the good fixture with the rule's own claim, came out CONFIRMED
(``tf-memlint verify --fixes``; the verdicts are recorded in ``measured.json``, see measure.py).
"""

from __future__ import annotations

import importlib
import json
from functools import lru_cache
from pathlib import Path
from types import ModuleType

# Every rule with a fix. A rule missing here has none ("Fix: none" on its page says why).
FIXABLE = ("TFM104", "TFM201", "TFM401", "TFM402", "TFM403", "TFM404", "TFM406")
MEASURED = Path(__file__).resolve().parent / "measured.json"


def fix_module(code: str) -> ModuleType:
    return importlib.import_module(f"tf_memlint.fixes.{code.lower()}")


@lru_cache(maxsize=1)
def measured() -> dict:
    """The recorded measurement of every fix: {code: {"claims": {id: verdict}, ...}}."""
    try:
        return json.loads(MEASURED.read_text(encoding="utf-8"))["fixes"]
    except (OSError, ValueError, KeyError):
        return {}


def shipped(code: str) -> bool:
    """The fix exists and every claim of its rule, measured on the fixed bad fixture, was CONFIRMED."""
    if code not in FIXABLE:
        return False
    verdicts = measured().get(code, {}).get("claims", {})
    return bool(verdicts) and all(verdict == "CONFIRMED" for verdict in verdicts.values())


def shipped_fixes() -> list[str]:
    return [code for code in FIXABLE if shipped(code)]
