"""Selections that say one thing and do another are refused: a select, extend-select or the
whole selection that enables no rule is a usage error (exit 2), never a silent clean run."""

from __future__ import annotations


def selection_problem(select: list[str], ignore: list[str], extend_select: list[str],
                      enabled: list[str]) -> str | None:
    """Why this selection cannot be what the user meant, in one line; None when it can."""
    for key, entries in (("select", select), ("extend-select", extend_select)):
        for entry in entries:
            if not any(code.startswith(entry) for code in enabled):
                blockers = [p for p in ignore if entry.startswith(p) or p.startswith(entry)]
                return (f"{key} {entry} enables no rule: ignore {','.join(blockers) or '?'} removes every "
                        f"rule under it")
    if not enabled:
        return f"the selection enables no rule (ignore {','.join(ignore)}); `tf-memlint rules` lists them"
    return None
