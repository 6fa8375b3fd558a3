"""Finding and reading the files to lint, and linting them (in a process pool when asked)."""

from __future__ import annotations

import fnmatch
import io
import os
import tokenize
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from tf_memlint.config import DEFAULT_INCLUDE
from tf_memlint.engine import PATH_SETTING, LintError, lint_source
from tf_memlint.noqa import filter_noqa
from tf_memlint.notebook import CellLocation, NotebookError, is_notebook_path
from tf_memlint.notebook import load as load_notebook
from tf_memlint.rule import Diagnostic

# The settings key that tells the engine it is linting a notebook (engine: ``TFContext.notebook``).
NOTEBOOK_SETTING = "notebook"
# The settings key for project.build's tables ({path: table}); lint_file hands a file its own.
PROJECT_TABLES = "project_tables"
# Below this many files a process pool costs more to start than it saves.
_MIN_FILES_PER_JOB = 16


@dataclass
class FileResult:
    path: str
    findings: list[Diagnostic] = field(default_factory=list)
    error: str | None = None  # why the file (or a part of it) could not be linted
    # notebooks: where each finding is in the notebook (cell, line in the cell, raw JSON position)
    cells: dict[Diagnostic, CellLocation] = field(default_factory=dict)


def _excluded(path: Path, patterns: list[str]) -> bool:
    name = path.name
    text = path.as_posix()
    return any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(text, p) or fnmatch.fnmatch(text, f"*/{p}")
               for p in patterns)


def discover(paths: list[str], exclude: list[str], force_exclude: bool = False,
             include: tuple[str, ...] | list[str] = DEFAULT_INCLUDE) -> Iterator[tuple[str, str | None]]:
    """(path, error) for every file under ``paths`` whose name matches ``include`` (Python files
    and notebooks by default). Paths named on the command line are linted whatever their name,
    and even if they match an exclude pattern (as ruff does) unless ``force_exclude``."""
    for given in paths:
        root = Path(given)
        if force_exclude and _excluded_with_parents(root, exclude):
            continue
        if root.is_dir():
            yield from _walk(root, exclude, include)
        elif root.exists() or root.is_symlink():
            yield given, None
        else:
            yield given, "no such file or directory"


def _excluded_with_parents(path: Path, patterns: list[str]) -> bool:
    """A named path is excluded when it or a directory above it (within the project: relative
    to the current directory) matches, as ruff's --force-exclude does: pre-commit passes
    ``generated/model.py``, and ``exclude = ["generated"]`` must cover it."""
    if path.is_absolute():
        try:
            path = path.relative_to(Path.cwd())
        except ValueError:
            return _excluded(path, patterns)
    parts = path.parts
    return any(_excluded(Path(*parts[:i]), patterns) for i in range(len(parts), 0, -1))


def excluded(path: str, exclude: list[str]) -> bool:
    """Whether ``--force-exclude`` drops this named path (or the --stdin-filename)."""
    return _excluded_with_parents(Path(path), exclude)


def _walk(root: Path, exclude: list[str], include: tuple[str, ...] | list[str]) -> Iterator[tuple[str, str | None]]:
    errors: list[OSError] = []
    for directory, dirnames, filenames in os.walk(root, onerror=errors.append):
        base = Path(directory)
        dirnames[:] = sorted(d for d in dirnames if not _excluded(base / d, exclude))
        for name in sorted(filenames):
            if _excluded(base / name, list(include)) and not _excluded(base / name, exclude):
                yield str(base / name), None
        yield from _walk_errors(errors, directory)
    yield from _walk_errors(errors, str(root))  # the root itself could not be listed


def _walk_errors(errors: list[OSError], directory: str) -> Iterator[tuple[str, str | None]]:
    while errors:
        error = errors.pop(0)
        yield str(error.filename or directory), f"cannot read directory: {error.strerror or error}"


def read_bytes(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as error:
        raise LintError(f"cannot read: {error.strerror}") from None


def decode_source(raw: bytes) -> str:
    """The text of Python source bytes, decoded as CPython does (PEP 263 coding cookie, BOM, else
    UTF-8). What CPython refuses to run is refused (LintError), through both front doors: bytes
    that are not valid in the file's encoding (the flake8 plugin reports that as TFM000, where
    flake8 itself would quietly fall back to Latin-1), and NUL bytes."""
    nul = raw.find(b"\0")
    if nul >= 0:
        line = raw.count(b"\n", 0, nul) + 1
        raise LintError(f"source contains a NUL byte (line {line}); Python refuses it too")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except (SyntaxError, LookupError) as error:  # unknown or contradictory coding cookie
        raise LintError(f"cannot decode: {error}") from None
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        declared = "declared" if encoding not in ("utf-8", "utf-8-sig") else "default"
        raise LintError(f"cannot decode: not valid {encoding} (the {declared} encoding), byte "
                        f"{raw[error.start]:#04x} on line {line}; Python refuses it too") from None
    except LookupError as error:
        raise LintError(f"cannot decode: {error}") from None


def read_source(path: str) -> str:
    """The file's text, decoded as Python does (see ``decode_source``)."""
    return decode_source(read_bytes(path))


def lint_file(path: str, codes: list[str], settings: dict[str, Any], *, display: str | None = None,
              raw: bytes | None = None) -> FileResult:
    """Lint one file (a notebook when its name ends in .ipynb). ``raw``: its bytes, when they do
    not come from ``path`` (stdin); ``display``: the name to report (default ``path``)."""
    name = display if display is not None else path
    settings = {**settings, PATH_SETTING: name}
    try:
        data = read_bytes(path) if raw is None else raw
        if is_notebook_path(name):
            return _lint_notebook(name, data, codes, settings)
        source = decode_source(data)
        tables = settings.get(PROJECT_TABLES)
        if tables:  # cross-module summaries of the command's files (project.py)
            settings = {**settings, "project": tables.get(path)}
        return FileResult(name, filter_noqa(source, lint_source(source, codes, settings)))
    except (LintError, NotebookError) as error:
        return FileResult(name, error=str(error))
    except RecursionError:
        return FileResult(name, error="nested too deeply to analyse")
    except Exception as error:  # noqa: BLE001 - one bad file must not stop the run
        return FileResult(name, error=f"TFM000 internal error: {type(error).__name__}: {error}")


def _lint_notebook(name: str, raw: bytes, codes: list[str], settings: dict[str, Any]) -> FileResult:
    """The code cells as one module (``notebook.load``), findings mapped back to their cells. The
    engine is told it is linting a notebook (``TFContext.notebook``: a kernel lives on, so memory
    held past its last use matters more there)."""
    notebook = load_notebook(raw)
    findings = filter_noqa(notebook.source, lint_source(notebook.source, codes,
                                                        {**settings, NOTEBOOK_SETTING: True}))
    cells = {finding: notebook.locate(finding.line, finding.col) for finding in findings}
    return FileResult(name, findings, error="; ".join(notebook.skipped) or None, cells=cells)


def _lint_chunk(paths: list[str], codes: list[str], settings: dict[str, Any],
                raws: dict[str, bytes] | None = None) -> list[FileResult]:
    return [lint_file(path, codes, settings, raw=raws.get(path) if raws else None) for path in paths]


def lint_files(paths: list[str], codes: list[str], settings: dict[str, Any], jobs: int,
               raws: dict[str, bytes] | None = None) -> list[FileResult]:
    """``raws``: the bytes of some of the files, already read (the cache keys results by them)."""
    jobs = max(1, min(jobs, len(paths) // _MIN_FILES_PER_JOB))
    if jobs == 1:
        return _lint_chunk(paths, codes, settings, raws)
    chunk = max(1, min(64, len(paths) // (jobs * 8)))
    chunks = [paths[i:i + chunk] for i in range(0, len(paths), chunk)]
    chunk_raws = [{p: raws[p] for p in c if p in raws} if raws else None for c in chunks]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        results = pool.map(_lint_chunk, chunks, [codes] * len(chunks), [settings] * len(chunks), chunk_raws)
        return [result for batch in results for result in batch]
