"""Configuration from ``[tool.tf-memlint]`` in pyproject.toml or ``[tf-memlint]`` in setup.cfg.

Found like ruff and flake8 find theirs: the nearest such file at or above the current directory.
Keys use dashes or underscores: select, ignore, extend-select, exclude, extend-exclude, include,
extend-include, jobs, confidence (high, medium or low: the least confidence shown),
min-memory-cost (MiB) and min-time-cost (seconds) (what a projected cost must reach to count),
each rule option (for example ``min-unrolled-iterations``), and the adoption keys
per-file-ignores, test-paths (``tf_memlint.ignores``), baseline (``tf_memlint.baseline``) and
rule-url-base (``tf_memlint.links``). Counts are
validated by ``positive_int``, the same function the command line and the flake8 options use.
"""

from __future__ import annotations

import configparser
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from tf_memlint.grading import LEVELS
from tf_memlint.ignores import parse_globs, parse_per_file_ignores
from tf_memlint.rule import all_rules

DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".bzr", ".tox", ".nox", ".venv", "venv", ".eggs", "*.egg-info",
    "__pycache__", "build", "dist", "node_modules", ".mypy_cache", ".pytest_cache", ".ruff_cache",
    "__pypackages__", "site-packages", ".ipynb_checkpoints", ".tf-memlint-cache",
)
# What a directory walk lints (ruff's ``include``; ``extend-include`` adds to it). Named files
# are linted whatever their name.
DEFAULT_INCLUDE = ("*.py", "*.pyi", "*.ipynb")
# What a projected cost must reach to count (grading.py): MiB of memory, seconds of time.
GRADING_COSTS = {"min-memory-cost": "MiB", "min-time-cost": "seconds"}
_LIST_KEYS = ("select", "ignore", "extend-select", "exclude", "extend-exclude", "include", "extend-include")


class ConfigError(Exception):
    pass


@dataclass
class Config:
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=lambda: list(DEFAULT_EXCLUDE))
    include: list[str] = field(default_factory=lambda: list(DEFAULT_INCLUDE))
    settings: dict[str, Any] = field(default_factory=dict)
    jobs: int | None = None
    source: Path | None = None
    per_file_ignores: list[tuple[str, list[str]]] = field(default_factory=list)
    test_paths: list[str] = field(default_factory=list)
    baseline: str | None = None  # relative to the configuration file's directory
    rule_url_base: str | None = None


def rule_options() -> dict[str, Any]:
    """Every rule option name (with underscores) and its default."""
    return {name: default for rule in all_rules().values() for name, (default, _) in rule.options.items()}


def find_config_file(start: Path) -> Path | None:
    for directory in (start, *start.parents):
        pyproject = directory / "pyproject.toml"
        if pyproject.is_file() and _pyproject_table(pyproject) is not None:
            return pyproject
        setup_cfg = directory / "setup.cfg"
        if setup_cfg.is_file() and _setup_cfg_table(setup_cfg) is not None:
            return setup_cfg
    return None


def _pyproject_table(path: Path) -> dict[str, Any] | None:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None
    table = data.get("tool", {}).get("tf-memlint")
    if table is not None and not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.tf-memlint] must be a table")
    return table


def _setup_cfg_table(path: Path) -> dict[str, Any] | None:
    parser = configparser.ConfigParser()
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: invalid setup.cfg: {error}") from None
    if not parser.has_section("tf-memlint"):
        return None
    table: dict[str, Any] = {}
    for key, value in parser.items("tf-memlint"):
        if key.replace("_", "-") in _LIST_KEYS:
            table[key] = [v for v in value.replace("\n", ",").split(",") if v.strip()]
        else:
            table[key] = value
    return table


def load_config(path: Path | None) -> Config:
    config = Config(source=path)
    if path is None:
        return config
    table = _pyproject_table(path) if path.name == "pyproject.toml" else _setup_cfg_table(path)
    options = rule_options()
    paths: dict[str, list[str]] = {}
    for raw_key, value in (table or {}).items():
        key = raw_key.replace("_", "-")
        if key in _LIST_KEYS:
            if isinstance(value, str):
                value = [value]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{path}: tf-memlint `{raw_key}` must be a list of strings")
            values = [v.strip() for v in value]
            if key in ("exclude", "extend-exclude", "include", "extend-include"):
                paths[key] = values
            else:
                setattr(config, key.replace("-", "_"), [v.upper() for v in values])
        elif key == "jobs":
            config.jobs = _coerce(path, raw_key, value, 1)
        elif key == "confidence":
            if value not in LEVELS:
                raise ConfigError(f"{path}: tf-memlint `{raw_key}` must be one of {', '.join(LEVELS)}, not {value!r}")
            config.settings["confidence"] = value
        elif key in GRADING_COSTS:
            config.settings[key.replace("-", "_")] = _coerce(path, raw_key, value, 1)
        elif key in ADOPTION_KEYS:
            try:
                setattr(config, key.replace("-", "_"), ADOPTION_KEYS[key](value))
            except ValueError as error:
                raise ConfigError(f"{path}: tf-memlint `{raw_key}`: {error}") from None
        elif key.replace("-", "_") in options:
            name = key.replace("-", "_")
            config.settings[name] = _coerce(path, raw_key, value, options[name])
        else:
            raise ConfigError(f"{path}: unknown tf-memlint setting `{raw_key}`")
    # exclude/include replace the defaults; extend-* add to them (whatever the order of the keys).
    config.exclude = paths.get("exclude", list(DEFAULT_EXCLUDE)) + paths.get("extend-exclude", [])
    config.include = paths.get("include", list(DEFAULT_INCLUDE)) + paths.get("extend-include", [])
    return config


def positive_int(value: Any) -> int:
    """The one validation of every count setting (``jobs`` and each rule option), for the config
    file, the command line and flake8's options alike: a whole number, 1 or more. Strings are
    accepted when they spell one (``"4"``, from setup.cfg or a command line); ``2.5``, ``2.0``,
    ``0``, ``-3``, ``true`` are not. Raises ValueError with the reason."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(f"must be a whole number of 1 or more, not {value!r}")
    if isinstance(value, str):
        if not re.fullmatch(r"\s*[+-]?\d+(?:_\d+)*\s*", value):
            raise ValueError(f"must be a whole number of 1 or more, not {value!r}")
        value = int(value)
    if value < 1:
        raise ValueError(f"must be a whole number of 1 or more, not {value}")
    return value


def _text(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError("must be a non-empty string")
    return value.strip()


# Keys parsed by the modules that use them (each raises ValueError with the reason).
ADOPTION_KEYS = {
    "per-file-ignores": parse_per_file_ignores,
    "test-paths": lambda value: parse_globs(value, "test-paths"),
    "baseline": _text,
    "rule-url-base": _text,
}


def _coerce(path: Path, key: str, value: Any, default: Any) -> Any:
    if not isinstance(default, int) or isinstance(default, bool):  # no such option today
        raise ConfigError(f"{path}: tf-memlint `{key}`: unsupported option type {type(default).__name__}")
    try:
        return positive_int(value)
    except ValueError as error:
        raise ConfigError(f"{path}: tf-memlint `{key}` {error}") from None
