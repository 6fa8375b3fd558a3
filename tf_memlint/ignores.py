"""Per-file ignores and test code: which files a code is ignored in, which files are tests.

``per-file-ignores`` has ruff's syntax in ``[tool.tf-memlint]`` (a table of glob -> codes)::

    [tool.tf-memlint.per-file-ignores]
    "tests/**" = ["TFM404"]
    "scripts/*.py" = ["TFM1", "TFM405"]
    "!src/**" = ["TFM402"]          # a leading ! ignores in every file the glob does NOT match

and flake8's in ``[tf-memlint]`` of setup.cfg (``glob: codes`` entries, one per line or
separated by whitespace), so a flake8 value can be copied as it is.

``test-paths`` names test code beyond the defaults (``test_*.py``, ``*_test.py``,
``conftest.py``, and anything under a ``tests/`` or ``test/`` folder).

Globs match as ruff's do: against the path relative to the project root (the directory of the
configuration file, else the current directory), against the absolute path, and, for a glob
without ``/``, against the file name; ``*`` crosses ``/`` (``tests/*`` covers ``tests/a/b.py``),
``**/`` may match nothing, ``{a,b}`` alternates. As in flake8, a glob that matches a folder
covers the files below it (``tests`` = ``tests/**``); a glob without ``/`` matches a folder of
that name at any depth.
"""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path, PurePosixPath
from typing import Any, Iterable

from tf_memlint.rule import all_rules

DEFAULT_TEST_FILES = ("test_*.py", "*_test.py", "conftest.py", "test_*.ipynb")
DEFAULT_TEST_FOLDERS = ("tests", "test")


class IgnoreError(ValueError):
    """A per-file-ignores or test-paths value that cannot be used; the message says why."""


def _expand_braces(pattern: str) -> list[str]:
    match = re.search(r"\{([^{}]*)\}", pattern)
    if not match:
        return [pattern]
    head, tail = pattern[:match.start()], pattern[match.end():]
    return [expanded for option in match.group(1).split(",")
            for expanded in _expand_braces(head + option + tail)]


def _relative(path: str, root: Path | None) -> tuple[str, str]:
    """(the path relative to ``root`` when it is below it, else as given; the absolute path)."""
    absolute = os.path.abspath(path)
    base = os.path.abspath(root if root is not None else os.getcwd())
    relative = os.path.relpath(absolute, base) if absolute.startswith(base + os.sep) else path
    return (PurePosixPath(Path(relative)).as_posix().removeprefix("./"),
            PurePosixPath(Path(absolute)).as_posix())


def glob_matches(pattern: str, path: str, root: Path | None = None) -> bool:
    """Whether ``path`` (a file) matches ``pattern`` (no ``!``; see the module docstring)."""
    relative, absolute = _relative(path, root)
    parts = relative.split("/")
    # The file, then each folder above it (within the root): a glob naming a folder covers it.
    candidates = ["/".join(parts[:i]) for i in range(len(parts), 0, -1)]
    for glob in _expand_braces(pattern.strip().removeprefix("./").rstrip("/")):
        globs = [glob, glob[3:]] if glob.startswith("**/") else [glob]
        for form in globs:
            if "/" not in form and any(fnmatch.fnmatchcase(part, form) for part in parts):
                return True
            if any(fnmatch.fnmatchcase(candidate, form) for candidate in candidates):
                return True
            if fnmatch.fnmatchcase(absolute, form):
                return True
    return False


def _codes(value: Any, where: str) -> list[str]:
    if isinstance(value, str):
        value = re.split(r"[\s,]+", value)
    if not isinstance(value, list) or not all(isinstance(code, str) for code in value):
        raise IgnoreError(f"{where}: the codes must be a list of strings")
    codes = [code.strip().upper() for code in value if code.strip()]
    unknown = [code for code in codes if not any(rule.startswith(code) for rule in all_rules())]
    if unknown:
        raise IgnoreError(f"{where}: unknown rule code or prefix: {', '.join(unknown)}")
    return codes


def parse_per_file_ignores(value: Any) -> list[tuple[str, list[str]]]:
    """[(glob, codes)] from a TOML table (ruff's form) or a flake8 string (``glob: codes``)."""
    if isinstance(value, dict):
        return [(str(glob), _codes(codes, f"per-file-ignores {glob!r}")) for glob, codes in value.items()]
    if not isinstance(value, str):
        raise IgnoreError("per-file-ignores must be a table of glob = [codes] (or, in setup.cfg, "
                          "`glob: codes` entries)")
    entries: list[tuple[str, list[str]]] = []
    # flake8's syntax: `glob: codes` pairs separated by whitespace or commas; a token ending in
    # `:` (or holding one) starts a new pair.
    tokens = [token for token in re.split(r"[\s,]+", value) if token]
    glob: str | None = None
    codes: list[str] = []
    for token in tokens:
        if ":" in token:
            if glob is not None:
                entries.append((glob, codes))
            glob, _, rest = token.partition(":")
            codes = [rest] if rest else []
        elif glob is None:
            raise IgnoreError(f"per-file-ignores: {token!r} comes before any `glob:`")
        else:
            codes.append(token)
    if glob is not None:
        entries.append((glob, codes))
    return [(glob, _codes(codes, f"per-file-ignores {glob!r}")) for glob, codes in entries]


def parse_globs(value: Any, key: str) -> list[str]:
    """A list of globs, from a TOML list or a comma/line separated string (setup.cfg, flake8)."""
    if isinstance(value, str):
        value = re.split(r"[,\n]", value)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise IgnoreError(f"{key} must be a list of strings")
    return [v.strip() for v in value if v.strip()]


def ignored_codes(path: str, per_file_ignores: Iterable[tuple[str, list[str]]],
                  root: Path | None = None) -> list[str]:
    """The codes and prefixes ignored in ``path``."""
    codes: list[str] = []
    for glob, ignored in per_file_ignores:
        negated = glob.startswith("!")
        if glob_matches(glob[1:] if negated else glob, path, root) != negated:
            codes.extend(ignored)
    return codes


def is_ignored(code: str, prefixes: Iterable[str]) -> bool:
    return any(code.startswith(prefix) for prefix in prefixes)


def is_test_path(path: str, config: Any = None) -> bool:
    """Whether ``path`` is test code: a ``test_*.py``, ``*_test.py`` or ``conftest.py`` file, a
    file under a ``tests/`` or ``test/`` folder, or one matching the ``test-paths`` of
    ``config`` (a ``Config``, or a list of globs matched from the current directory)."""
    relative, _ = _relative(path, _root(config))
    parts = relative.split("/")
    if any(fnmatch.fnmatchcase(parts[-1], pattern) for pattern in DEFAULT_TEST_FILES):
        return True
    if any(part in DEFAULT_TEST_FOLDERS for part in parts[:-1]):
        return True
    return configured_test_path(path, config)


def configured_test_path(path: str, config: Any = None) -> bool:
    """Whether ``path`` matches the ``test-paths`` globs the user configured (``is_test_path``
    without the default names and folders): test code by the user's word."""
    globs = config if isinstance(config, (list, tuple)) else getattr(config, "test_paths", None) or []
    return any(glob_matches(glob, path, _root(config)) for glob in globs)


def _root(config: Any) -> Path | None:
    source = getattr(config, "source", None)
    return Path(source).parent if source is not None else None


def without_ignored(results: list, config: Any) -> list:
    """``results`` (``FileResult``) without the findings ``per-file-ignores`` ignores in their file."""
    from dataclasses import replace

    rules = getattr(config, "per_file_ignores", None)
    if not rules:
        return results
    kept = []
    for result in results:
        prefixes = ignored_codes(result.path, rules, _root(config))
        if not prefixes or not result.findings:
            kept.append(result)
            continue
        findings = [f for f in result.findings if not is_ignored(f.code, prefixes)]
        cells = {f: c for f, c in result.cells.items() if not is_ignored(f.code, prefixes)}
        kept.append(replace(result, findings=findings, cells=cells))
    return kept


def codes_for(codes: list[str], config: Any):
    """``path -> the codes of ``codes`` that per-file-ignores leave on there`` (None without any)."""
    rules = getattr(config, "per_file_ignores", None)
    if not rules:
        return None
    root = _root(config)

    def of(path: str) -> list[str]:
        prefixes = ignored_codes(path, rules, root)
        return [code for code in codes if not is_ignored(code, prefixes)]

    return of
