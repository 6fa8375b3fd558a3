"""The flake8 entry point. flake8 itself applies --select/--ignore and # noqa to what we yield.

It must never raise into flake8 (that would stop the user's whole run): a file LibCST cannot
parse yields nothing (flake8 reports E999 for it), and any internal error becomes one TFM000
finding that names it.
"""

from __future__ import annotations

import ast
from typing import Any, ClassVar, Iterator

from tf_memlint import __version__
from tf_memlint.engine import LintError, lint_source
from tf_memlint.rule import all_rules


def _flag(option: str) -> str:
    return "--tfm-" + option.replace("_", "-")


class TFMemlintChecker:
    name = "tf-memlint"
    version = __version__
    settings: ClassVar[dict[str, Any]] = {}
    codes: ClassVar[list[str] | None] = None

    def __init__(self, tree: ast.AST, lines: list[str], filename: str = "") -> None:
        self.lines = lines
        self.filename = filename

    @classmethod
    def add_options(cls, manager: Any) -> None:
        # Opt-in rules stay off unless selected, as flake8-bugbear does with B9xx.
        manager.extend_default_ignore([code for code, rule in all_rules().items() if not rule.default_enabled])
        seen = set()
        for rule in all_rules().values():
            for option, (default, help_text) in rule.options.items():
                if option in seen:
                    continue
                seen.add(option)
                manager.add_option(_flag(option), type=type(default), default=default,
                                   parse_from_config=True, help=f"tf-memlint: {help_text} (default {default})")

    @classmethod
    def parse_options(cls, options: Any) -> None:
        cls.settings = {option: getattr(options, "tfm_" + option, default)
                        for rule in all_rules().values()
                        for option, (default, _) in rule.options.items()}
        # flake8 decides what is reported; we run every rule (opt-in ones included), and flake8's
        # select/ignore (and its extend-default-ignore of opt-in codes) filters the output.
        cls.codes = list(all_rules())

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        try:
            findings = lint_source("".join(self.lines), self.codes, self.settings)
        except LintError:
            return  # flake8 reports the syntax error itself (E999)
        except Exception as error:  # noqa: BLE001 - never take down the user's flake8 run
            yield 1, 0, f"TFM000 tf-memlint internal error: {type(error).__name__}: {error}", type(self)
            return
        for finding in findings:
            yield finding.line, finding.col, f"{finding.code} {finding.message}", type(self)
