"""The command's cache: each file's findings and each module's project summary, kept between
runs in ``.tf-memlint-cache/`` at the project root (the directory of the configuration file,
else the current directory), as ruff keeps ``.ruff_cache``.

Every entry is addressed by a key that hashes everything its value depends on, so an entry is
never stale, only unused:

- a module's summary (project.summarize): tf-memlint itself (``fingerprint``), the file's bytes
  and the two flags summarize reads (provider, graph mode);
- a file's result: tf-memlint itself, the rules selected, the settings (every option the engine
  reads comes through them), the file's path and bytes, and the project table the file was given
  (project.build: what the functions it imports from the project do). A table is made from the
  summaries of the modules the file imports, so editing a module changes its summary, and only
  when that changes the table of a file that calls it is that caller linted again; every other
  file is served from the cache.

Layout: ``<root>/<version>/`` holds one JSON file per kind of entry (a *pack*, read whole: one
read instead of one per file): ``text.json`` (what project.build's text tests found in a file's
bytes), ``summary.json`` (module summaries) and ``result-<settings>.json`` (results, one pack
per selection of rules and options). A pack is written at the end of a run that added to it: the
pack as it is on disk then (another run may have added to it meanwhile), what this run used and
added, to a temporary file renamed over the pack (``os.replace``), so a reader never sees half a
pack; two runs that save at once lose at worst the other's additions (misses next time). Only
the parent process reads and writes (workers lint what missed). A pack that cannot be read, does
not parse or was written by another tf-memlint is empty; an entry of the wrong shape is a miss;
either way the file is linted again and the entry rewritten. stdin is never cached.
``TF_MEMLINT_CACHE_LOG=FILE`` appends, per run, what was linted and what was reused.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from tf_memlint import __version__
from tf_memlint.files import PROJECT_TABLES, FileResult, lint_files as lint_uncached, read_bytes
from tf_memlint.engine import LintError
from tf_memlint.notebook import CellLocation
from tf_memlint.project import TEXT_FLAGS, TEXT_VARIANT
from tf_memlint.rule import Diagnostic

DIRECTORY_NAME = ".tf-memlint-cache"
DIRECTORY_ENV = "TF_MEMLINT_CACHE_DIR"
LOG_ENV = "TF_MEMLINT_CACHE_LOG"
CACHEDIR_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
                "# This file is a cache directory tag created by tf-memlint.\n"
                "# For information about cache directory tags see https://bford.info/cachedir/\n")
GITIGNORE = "# Automatically created by tf-memlint.\n*\n"
# Errors that say something about this run, not about the file: linted again next time.
_TRANSIENT_ERRORS = ("TFM000 internal error", "nested too deeply")
# A pack keeps the entries of earlier runs (other selections of files: pre-commit's few, a
# subdirectory) until it holds this many, then only those of the run that saves it.
_PACK_LIMIT = 50_000

_UMASK = os.umask(0o022)
os.umask(_UMASK)
_fingerprint: str | None = None


def fingerprint() -> str:
    """tf-memlint as it is installed: its version, the bytes of its modules (a development
    checkout changes without a new version), and the parsers it relies on."""
    global _fingerprint
    if _fingerprint is None:
        digest = hashlib.blake2b(digest_size=16)
        for part in (__version__, sys.version, _libcst_version()):
            digest.update(part.encode() + b"\0")
        package = Path(__file__).resolve().parent
        for path in sorted(package.rglob("*.py")):
            digest.update(path.relative_to(package).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
        _fingerprint = digest.hexdigest()
    return _fingerprint


def _libcst_version() -> str:
    try:
        from libcst._version import __version__ as version
    except ImportError:  # pragma: no cover - a libcst without the module
        from importlib.metadata import version as installed

        return installed("libcst")
    return str(version)


def _hash(*parts: bytes | str) -> str:
    digest = hashlib.blake2b(digest_size=16)
    for part in parts:
        data = part.encode("utf-8", "surrogatepass") if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


def directory(cache_dir: str | os.PathLike[str] | None, config_source: Path | None) -> Path:
    """Where the cache lives: ``--cache-dir``, else $TF_MEMLINT_CACHE_DIR, else
    ``.tf-memlint-cache`` beside the configuration file, else in the current directory."""
    if cache_dir is not None:
        return Path(cache_dir)
    if os.environ.get(DIRECTORY_ENV):
        return Path(os.environ[DIRECTORY_ENV])
    root = config_source.resolve().parent if config_source is not None else Path.cwd()
    return root / DIRECTORY_NAME


class _Pack:
    """The entries of one kind: read whole at the first ``get``, saved whole by ``save``."""

    def __init__(self, path: Path, fingerprint: str, valid: Any) -> None:
        self.path, self.fingerprint, self.valid = path, fingerprint, valid
        self.entries: dict[str, Any] | None = None
        self.used: set[str] = set()
        self.added: dict[str, Any] = {}

    def _load(self) -> dict[str, Any]:
        try:
            with open(self.path, "rb") as handle:
                document = json.loads(handle.read())
        except (OSError, ValueError, RecursionError, MemoryError):  # absent, unreadable, not JSON
            return {}
        if not isinstance(document, dict) or document.get("fingerprint") != self.fingerprint \
                or not isinstance(document.get("entries"), dict):
            return {}  # another tf-memlint's, or not a pack
        return document["entries"]

    def get(self, key: str) -> Any:
        if self.entries is None:
            self.entries = self._load()
        value = self.added.get(key, self.entries.get(key))
        if value is None or not self.valid(value):
            return None
        self.used.add(key)
        return value

    def put(self, key: str, value: Any) -> None:
        self.added[key] = value

    def save(self) -> None:
        if not self.added:
            return
        kept = self._load()  # with what other runs saved since this one read it
        if len(kept) + len(self.added) > _PACK_LIMIT:
            kept = {}
        kept.update((key, self.entries[key]) for key in self.used if self.entries and key in self.entries)
        kept.update(self.added)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _replace(self.path, json.dumps({"fingerprint": self.fingerprint, "entries": kept},
                                       separators=(",", ":")).encode())
        self.added = {}


class Cache:
    """One cache directory, for one run."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.base = root / __version__
        self.fingerprint = fingerprint()
        self.packs: dict[str, _Pack] = {}
        self.linted: list[str] = []  # paths whose result missed (linted in this run)
        self.reused: list[str] = []  # paths served from the cache
        self.summarized = 0  # module summaries computed (missed) in this run
        self.summaries_reused = 0

    def _pack(self, name: str, valid: Any) -> _Pack:
        if name not in self.packs:
            self.packs[name] = _Pack(self.base / f"{name}.json", self.fingerprint, valid)
        return self.packs[name]

    def save(self) -> None:
        """Write what this run added; a cache that cannot be written is only a slower run."""
        try:
            self._prepare()
        except OSError:
            return
        for pack in self.packs.values():
            try:
                pack.save()
            except (OSError, ValueError, TypeError, RecursionError, MemoryError):
                pass

    def _prepare(self) -> None:
        """The directory, tagged as a cache (backup tools skip it) and ignored by git."""
        if not any(pack.added for pack in self.packs.values()):
            return
        self.root.mkdir(parents=True, exist_ok=True)
        for name, text in (("CACHEDIR.TAG", CACHEDIR_TAG), (".gitignore", GITIGNORE)):
            if not (self.root / name).is_file():
                _replace(self.root / name, text.encode())

    # project.build's ``summaries``: a module's text facts (variant "text") and its summary ----
    def get(self, raw: bytes, variant: str) -> dict[str, Any] | None:
        text = variant == TEXT_VARIANT
        pack = self._pack("text", _is_text_facts) if text else self._pack("summary", _is_summary)
        value = pack.get(_hash(variant, raw))
        if not text:
            if value is None:
                self.summarized += 1
            else:
                self.summaries_reused += 1
        return value

    def put(self, raw: bytes, variant: str, value: dict[str, Any]) -> None:
        pack = self._pack("text", _is_text_facts) if variant == TEXT_VARIANT else self._pack("summary", _is_summary)
        pack.put(_hash(variant, raw), value)

    # Results -----------------------------------------------------------------------------------
    def settings_key(self, codes: list[str], settings: dict[str, Any]) -> str:
        options = {k: v for k, v in settings.items() if k != PROJECT_TABLES}
        return _hash(json.dumps(codes), json.dumps(options, sort_keys=True, default=repr))

    def result_key(self, path: str, raw: bytes, table: Any) -> str:
        # The path too: the engine may judge a file by where it is (test code), and names it.
        return _hash(path, raw, json.dumps(table, separators=(",", ":"), default=repr))

    def load_result(self, settings_key: str, key: str, name: str) -> FileResult | None:
        return _as_result(name, self._pack(f"result-{settings_key[:20]}", _is_result).get(key))

    def store_result(self, settings_key: str, key: str, result: FileResult) -> None:
        if result.error and result.error.startswith(_TRANSIENT_ERRORS):
            return
        findings = [_values(f) for f in result.findings]
        cells = [None if result.cells.get(f) is None else _values(result.cells[f]) for f in result.findings]
        self._pack(f"result-{settings_key[:20]}", _is_result).put(
            key, {"findings": findings, "error": result.error, "cells": cells})

    def log(self) -> None:
        """What this run linted and reused, appended to $TF_MEMLINT_CACHE_LOG (one line each)."""
        target = os.environ.get(LOG_ENV)
        if not target:
            return
        lines = [f"lint {path}" for path in self.linted] + [f"reuse {path}" for path in self.reused]
        lines.append(f"summaries computed {self.summarized} reused {self.summaries_reused}")
        try:
            with open(target, "a", encoding="utf-8") as handle:
                handle.write("".join(line + "\n" for line in lines) + "end\n")
        except OSError as error:
            print(f"tf-memlint: cannot write the cache log {target}: {error.strerror or error}", file=sys.stderr)


def _replace(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all: a temporary file beside it, renamed."""
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        os.chmod(temporary, 0o666 & ~_UMASK)  # as open() would make it (mkstemp: owner only)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def _is_text_facts(value: Any) -> bool:
    """The shape of project.text_facts."""
    return (isinstance(value, dict) and all(type(value.get(k)) is bool for k in TEXT_FLAGS)
            and isinstance(value.get("words"), list) and all(isinstance(w, str) for w in value["words"]))


def _is_result(value: Any) -> bool:
    return isinstance(value, dict)  # _as_result checks the rest


def _is_summary(value: Any) -> bool:
    """The shape project.summarize returns (anything else is a damaged entry)."""
    if not isinstance(value, dict):
        return False
    if value.get("unparsable") is True:
        return True
    functions, imports, effects, calls, undone = (value.get(k) for k in ("functions", "imports", "effects", "calls",
                                                                          "undone"))
    return (isinstance(functions, dict) and all(isinstance(k, str) and type(v) is int for k, v in functions.items())
            and isinstance(imports, list) and all(
                isinstance(i, list) and len(i) == 4 and i[0] in ("import", "from") and isinstance(i[1], str)
                and type(i[2]) is int and isinstance(i[3], list) and all(
                    isinstance(n, list) and len(n) == 2 and isinstance(n[0], str) and (n[1] is None or isinstance(n[1], str))
                    for n in i[3]) for i in imports)
            and isinstance(effects, dict) and all(
                isinstance(e, dict) and all(isinstance(k, str) and isinstance(w, str) for k, w in e.items())
                for e in effects.values())
            and isinstance(calls, dict) and all(
                isinstance(c, list) and all(isinstance(d, str) for d in c) for c in calls.values())
            and isinstance(undone, dict) and all(
                isinstance(u, list) and all(isinstance(k, str) for k in u) for u in undone.values()))


def _values(record: Any) -> list[Any]:
    """A finding or a cell location as the list of its fields (all of them: a finding's grade too)."""
    return [getattr(record, f.name) for f in dataclasses.fields(record)]


_TYPES = {"int": int, "str": str, "None": type(None), "float": float, "bool": bool}


def _field_types(cls: type) -> list[tuple[type, ...] | None]:
    """What each field of a dataclass of plain values may hold (None: a type this cannot check)."""
    found = []
    for f in dataclasses.fields(cls):
        names = [n.strip().strip("'\"") for n in str(f.type).strip("'\"").split("|")]
        found.append(tuple(_TYPES[n] for n in names) if all(n in _TYPES for n in names) else None)
    return found


def _record(cls: type, values: Any) -> Any:
    """``cls(*values)`` when ``values`` are what its fields hold, else None."""
    types = _field_types(cls)
    if not isinstance(values, list) or len(values) != len(types):
        return None
    for value, allowed in zip(values, types):
        if allowed is None:
            if not isinstance(value, (str, int, float, bool, type(None))):
                return None
        elif type(value) not in allowed:  # exact: True is not an int here
            return None
    return cls(*values)


def _as_result(name: str, value: Any) -> FileResult | None:
    """The FileResult a stored value describes, or None when it is not one."""
    if not isinstance(value, dict):
        return None
    findings, error, cells = value.get("findings"), value.get("error"), value.get("cells")
    if not (isinstance(findings, list) and isinstance(cells, list) and len(cells) == len(findings)
            and (error is None or isinstance(error, str))):
        return None
    result = FileResult(name, error=error)
    for values, cell_values in zip(findings, cells):
        finding = _record(Diagnostic, values)
        if finding is None:
            return None
        result.findings.append(finding)
        if cell_values is not None:
            cell = _record(CellLocation, cell_values)
            if cell is None:
                return None
            result.cells[finding] = cell
    return result


def lint_files(cache: Cache, paths: list[str], codes: list[str], settings: dict[str, Any],
               jobs: int) -> list[FileResult]:
    """files.lint_files through the cache: each file's result is reused when its key matches;
    the others are linted (in ``jobs`` processes), from the very bytes their key was made of.
    Saves the cache (project.build's entries too)."""
    tables = settings.get(PROJECT_TABLES) or {}
    settings_key = cache.settings_key(codes, settings)
    results: list[FileResult | None] = [None] * len(paths)
    missed: list[int] = []
    raws: dict[str, bytes] = {}
    keys: dict[int, str] = {}
    for index, path in enumerate(paths):
        try:
            raw = read_bytes(path)
        except LintError:  # lint_file says why
            missed.append(index)
            continue
        key = keys[index] = cache.result_key(path, raw, tables.get(path))
        results[index] = cache.load_result(settings_key, key, path)
        if results[index] is None:
            missed.append(index)
            raws[path] = raw
        else:
            cache.reused.append(path)
    linted = lint_uncached([paths[i] for i in missed], codes, settings, jobs, raws=raws)
    for index, result in zip(missed, linted):
        results[index] = result
        cache.linted.append(paths[index])
        if index in keys:
            cache.store_result(settings_key, keys[index], result)
    cache.save()
    cache.log()
    return results  # type: ignore[return-value]


def clean(root: Path) -> str | None:
    """Delete the cache directory ``root``; an error message when it is not one of ours."""
    if not root.exists():
        return None
    tag = root / "CACHEDIR.TAG"
    try:
        ours = tag.is_file() and tag.read_text(encoding="utf-8", errors="replace") == CACHEDIR_TAG
    except OSError:
        ours = False
    if not root.is_dir() or not ours:
        return f"{root} is not a tf-memlint cache (no CACHEDIR.TAG): not deleted"
    try:
        shutil.rmtree(root)
    except OSError as error:
        return f"cannot delete {root}: {error.strerror or error}"
    return None
