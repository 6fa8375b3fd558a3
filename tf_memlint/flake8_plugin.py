"""The flake8 entry point. flake8 itself applies --select/--ignore and # noqa to what we yield.

flake8 hands the plugin the stdlib ast tree it has already built; the engine's gate reads it, so
a module where no rule can fire costs a walk of that tree and no LibCST parse.

``run`` never raises into flake8 (that would stop the user's whole run). A module that LibCST
cannot analyse although CPython parsed it, and any internal error, become one TFM000 finding
that says why: a finding is never lost silently.

Both front doors make the same decisions:
- ``# noqa``: flake8 applies it; the command copies flake8's rules (tf_memlint.noqa).
- A file that is not valid in its encoding (non-UTF-8 bytes and no coding declaration): CPython
  refuses to run it and the command refuses it (exit 2); flake8 silently decodes it as Latin-1,
  so the plugin checks the bytes itself and reports one TFM000 instead of findings.
- Options: counts go through ``config.positive_int``, as in pyproject.toml and on the command line.
- Messages are one line.
"""

from __future__ import annotations

import argparse
import ast
from typing import Any, ClassVar, Iterator

from tf_memlint import __version__
from tf_memlint.config import positive_int
from tf_memlint.engine import PATH_SETTING, TEST_PATHS_SETTING, LintError, lint_source
from tf_memlint.grading import DEFAULT_MIN_MIB, DEFAULT_MIN_SECONDS, HIGH, LEVELS
from tf_memlint.rule import all_rules


def _reported_codes(options: Any) -> list[str]:
    """The rules whose findings flake8 can report with these options, asked of flake8's own
    decision engine (select, ignore, extend-select, the opt-in codes' extend-default-ignore).
    A rule flake8 would drop everywhere is not run: its triggers no longer make the gate build
    LibCST trees for nothing. per-file-ignores only ignore more, so they cannot bring one back.
    If flake8's engine cannot be asked, every rule runs and flake8 filters, as before."""
    codes = list(all_rules())
    try:
        from flake8.style_guide import Decision, DecisionEngine

        decisions = DecisionEngine(options)
        return [code for code in codes if decisions.decision_for(code) is Decision.Selected]
    except Exception:  # noqa: BLE001 - a superset is always correct: flake8 still filters
        return codes


def _flag(option: str) -> str:
    return "--tfm-" + option.replace("_", "-")


class TFMemlintChecker:
    name = "tf-memlint"
    version = __version__
    settings: ClassVar[dict[str, Any]] = {}
    codes: ClassVar[list[str] | None] = None
    # Globs naming test code beyond the defaults (``ignores.is_test_path``); flake8's own
    # per-file-ignores already applies to TFM codes, so the plugin adds no option of that name
    # (flake8 refuses to start when a plugin registers one of its own option names).
    test_paths: ClassVar[list[str]] = []

    def __init__(self, tree: ast.AST, lines: list[str], filename: str = "") -> None:
        self.tree = tree
        self.lines = lines
        self.filename = filename

    @classmethod
    def add_options(cls, manager: Any) -> None:
        # Opt-in rules stay off unless selected, as flake8-bugbear does with B9xx.
        manager.extend_default_ignore([code for code, rule in all_rules().items() if not rule.default_enabled])
        manager.add_option("--tfm-confidence", choices=LEVELS, default=HIGH, parse_from_config=True,
                           help="tf-memlint: show findings of this confidence and above (default high)")
        manager.add_option("--tfm-min-memory-cost", type=_positive_int, default=DEFAULT_MIN_MIB, parse_from_config=True,
                           help=f"tf-memlint: a projected memory cost below this many MiB is graded low (default {DEFAULT_MIN_MIB})")
        manager.add_option("--tfm-min-time-cost", type=_positive_int, default=int(DEFAULT_MIN_SECONDS),
                           parse_from_config=True,
                           help=f"tf-memlint: a projected time cost below this many seconds is graded low "
                                f"(default {DEFAULT_MIN_SECONDS:g})")
        seen = set()
        for rule in all_rules().values():
            for option, (default, help_text) in rule.options.items():
                if option in seen:
                    continue
                seen.add(option)
                manager.add_option(_flag(option), type=_positive_int, default=default,
                                   parse_from_config=True, help=f"tf-memlint: {help_text} (default {default})")

        manager.add_option("--tfm-test-paths", default="", parse_from_config=True, comma_separated_list=True,
                           help="tf-memlint: globs naming test code beyond test_*.py, *_test.py, "
                                "conftest.py, tests/ and test/ (comma-separated)")

    @classmethod
    def parse_options(cls, options: Any) -> None:
        # A value from the command line has been through _positive_int already; one from a
        # config file reaches us as the string flake8 read, so it is validated here.
        settings = {}
        for rule in all_rules().values():
            for option, (default, _) in rule.options.items():
                value = getattr(options, "tfm_" + option, default)
                try:
                    settings[option] = positive_int(value)
                except ValueError as error:
                    raise ValueError(f"tf-memlint: {_flag(option)[2:]} {error}") from None
        confidence = getattr(options, "tfm_confidence", HIGH)
        if confidence not in LEVELS:
            raise ValueError(f"tf-memlint: tfm-confidence must be one of {', '.join(LEVELS)}, not {confidence!r}")
        settings["confidence"] = confidence
        for option, default in (("min_memory_cost", DEFAULT_MIN_MIB), ("min_time_cost", int(DEFAULT_MIN_SECONDS))):
            try:
                settings[option] = positive_int(getattr(options, "tfm_" + option, default))
            except ValueError as error:
                raise ValueError(f"tf-memlint: tfm-{option.replace('_', '-')} {error}") from None
        cls.settings = settings
        cls.codes = _reported_codes(options)
        cls.test_paths = [glob for glob in getattr(options, "tfm_test_paths", None) or [] if glob]

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        try:
            results = self._findings()
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as error:  # noqa: BLE001 - never take down the user's flake8 run
            results = [(1, 0, f"TFM000 tf-memlint internal error: {_describe(error)}")]
        for line, col, message in results:
            yield line, col, message, type(self)

    def _findings(self) -> list[tuple[int, int, str]]:
        source = "".join(self.lines)
        undecodable = self._undecodable(source)
        if undecodable is not None:
            return [undecodable]
        # flake8 only calls a tree plugin with a tree it built; an empty one (tests) is no tree.
        tree = self.tree if isinstance(self.tree, ast.Module) and self.tree.body else None
        try:
            findings = lint_source(source, self.codes, {**self.settings, PATH_SETTING: self.filename,
                                                        TEST_PATHS_SETTING: self.test_paths}, tree=tree)
        except LintError as error:
            if tree is None:
                return []  # flake8 reports the syntax error itself (E999)
            return [(1, 0, f"TFM000 tf-memlint could not analyse this file: {error}")]
        except RecursionError:
            return [(1, 0, "TFM000 tf-memlint could not analyse this file: nested too deeply")]
        return [(f.line, f.col, f"{f.code} {' '.join(f.message.split())}") for f in findings]

    def _undecodable(self, source: str) -> tuple[int, int, str] | None:
        """flake8 decodes a file it cannot decode as Latin-1 and says nothing; CPython (and the
        command) refuse it. Only a non-ASCII text can be such a file, so only then are the bytes
        read again. stdin is not re-readable: flake8's decoding stands there."""
        if source.isascii() or self.filename in ("", "-", "stdin"):
            return None
        from tf_memlint.files import decode_source, read_bytes

        try:
            decode_source(read_bytes(self.filename))
        except LintError as error:
            if not str(error).startswith("cannot decode"):
                return None
            return (1, 0, f"TFM000 tf-memlint could not analyse this file: {error}")
        return None


def _positive_int(value: str) -> int:
    try:
        return positive_int(value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _describe(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__
