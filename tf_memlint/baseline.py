"""A baseline: findings recorded once, so that only new ones are reported.

``tf-memlint --write-baseline FILE`` records every current finding; ``tf-memlint --baseline FILE``
(or ``baseline = "FILE"`` in the configuration) reports only the findings the file does not hold.
A finding is recorded by what survives unrelated edits: its code, its file (relative to the
baseline's folder, so the command may run from anywhere), and the text of the flagged line with
its whitespace collapsed, not its line number. The same (code, file, text) may be recorded several
times: a run reports as many of those as exceed the recorded count, the ones farthest from the
recorded lines. So lines moved above a finding do not bring it back, an edit of the flagged line
does (it is new code), and a copy of a flagged line is one new finding.

The file is JSON, sorted, one finding per entry, so it diffs well in review::

    {"tool": "tf-memlint", "baseline": 1, "findings": [
      {"code": "TFM404", "path": "src/serve.py", "text": "y = model.predict(x)", "line": 12}, ...]}

``line`` is informative (where it was when recorded) and only breaks ties.
"""

from __future__ import annotations

import json
import os
import re
from collections import defaultdict
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from tf_memlint import __version__

if TYPE_CHECKING:
    from tf_memlint.files import FileResult
    from tf_memlint.rule import Diagnostic

FORMAT = 1


class BaselineError(Exception):
    """The baseline file cannot be read or written; the message (one line) says why."""


Key = tuple  # (code, path, text)


_NEWLINE = re.compile(r"\r\n|\r|\n")  # Python's line breaks, as the engine numbers lines


def _normalized(text: str) -> str:
    return " ".join(text.split())


def _relative(path: str, root: Path) -> str:
    absolute = os.path.abspath(path)
    try:
        return PurePosixPath(Path(os.path.relpath(absolute, os.path.abspath(root)))).as_posix()
    except ValueError:  # another drive (Windows)
        return PurePosixPath(Path(absolute)).as_posix()


class _Lines:
    """The text of a finding's line: in the file, or in its notebook cell."""

    def __init__(self, sources: dict[str, str] | None = None) -> None:
        self.sources = dict(sources or {})
        self._files: dict[str, list[str]] = {}
        self._cells: dict[str, dict[int, list[str]]] = {}

    def text(self, result: FileResult, finding: Diagnostic) -> str:
        cell = result.cells.get(finding)
        if cell is not None:
            lines, number = self._cell_lines(result.path).get(cell.cell, []), cell.line
        else:
            lines, number = self._file_lines(result.path), finding.line
        return _normalized(lines[number - 1]) if 0 < number <= len(lines) else ""

    def _raw(self, path: str) -> str:
        if path in self.sources:
            return self.sources[path]
        try:
            with open(path, "rb") as handle:
                return handle.read().decode("utf-8", errors="replace")
        except OSError:
            return ""

    def _file_lines(self, path: str) -> list[str]:
        if path not in self._files:
            self._files[path] = _NEWLINE.split(self._raw(path))
        return self._files[path]

    def _cell_lines(self, path: str) -> dict[int, list[str]]:
        if path not in self._cells:
            from tf_memlint.notebook import NotebookError, load

            try:
                notebook = load(self._raw(path))
                sources = notebook.cell_sources.items()
                self._cells[path] = {cell: _NEWLINE.split(source) for cell, source in sources}
            except NotebookError:
                self._cells[path] = {}
        return self._cells[path]


def _entries(results: list[FileResult], root: Path,
             lines: _Lines) -> list[tuple[Key, int, FileResult, Diagnostic]]:
    entries = []
    for result in results:
        path = _relative(result.path, root)
        for finding in result.findings:
            cell = result.cells.get(finding)
            line = cell.line if cell is not None else finding.line
            entries.append(((finding.code, path, lines.text(result, finding)), line, result, finding))
    return entries


def write(path: Path, results: list[FileResult], sources: dict[str, str] | None = None) -> int:
    """Record every finding of ``results`` in ``path``; returns how many."""
    root = path.parent
    records = sorted(({"code": code, "path": file, "text": text, "line": line}
                      for (code, file, text), line, _, _ in _entries(results, root, _Lines(sources))),
                     key=lambda r: (r["path"], r["line"], r["code"], r["text"]))
    # One finding per line: a review sees which findings a change adds to or drops from it.
    head = json.dumps({"tool": "tf-memlint", "version": __version__, "baseline": FORMAT})[:-1]
    body = ",\n".join("  " + json.dumps(record, ensure_ascii=False) for record in records)
    text = f'{head},\n "findings": [\n{body}\n ]}}\n' if records else f'{head}, "findings": []}}\n'
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        raise BaselineError(f"{path}: cannot write the baseline: {error.strerror or error}") from None
    return len(records)


def read(path: Path) -> dict[Key, list[int]]:
    """(code, path, text) -> the recorded lines of each such finding."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BaselineError(f"{path}: no such baseline; write one with --write-baseline {path}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise BaselineError(f"{path}: cannot read the baseline: {error}") from None
    except json.JSONDecodeError as error:
        raise BaselineError(f"{path}: not a tf-memlint baseline: invalid JSON: {error.msg} "
                            f"(line {error.lineno})") from None
    if not isinstance(document, dict) or document.get("baseline") != FORMAT:
        raise BaselineError(f"{path}: not a tf-memlint baseline (format {FORMAT} expected); "
                            f"write it again with --write-baseline")
    records = document.get("findings")
    if not isinstance(records, list):
        raise BaselineError(f"{path}: not a tf-memlint baseline: no list of findings")
    recorded: dict[Key, list[int]] = defaultdict(list)
    for record in records:
        try:
            key = (str(record["code"]), str(record["path"]), str(record["text"]))
            recorded[key].append(int(record.get("line", 0)))
        except (KeyError, TypeError, ValueError, AttributeError):
            raise BaselineError(f"{path}: not a tf-memlint baseline: a finding lacks code, path "
                                f"or text") from None
    return recorded


def new_findings(results: list[FileResult], path: Path,
                 sources: dict[str, str] | None = None) -> list[FileResult]:
    """``results`` without the findings recorded in the baseline at ``path``."""
    recorded = read(path)
    by_key: dict[Key, list[tuple[int, FileResult, Diagnostic]]] = defaultdict(list)
    for key, line, result, finding in _entries(results, path.parent, _Lines(sources)):
        by_key[key].append((line, result, finding))
    known: set[int] = set()
    for key, found in by_key.items():
        # Each recorded finding absorbs the current one nearest its recorded line.
        left = list(found)
        for line in sorted(recorded.get(key, ())):
            if not left:
                break
            nearest = min(left, key=lambda item: (abs(item[0] - line), item[0]))
            left.remove(nearest)
            known.add(id(nearest[2]))
    kept = []
    for result in results:
        findings = [f for f in result.findings if id(f) not in known]
        cells = {f: c for f, c in result.cells.items() if id(f) not in known}
        unchanged = len(findings) == len(result.findings)
        kept.append(result if unchanged else replace(result, findings=findings, cells=cells))
    return kept


def option_path(value: str, config: Any) -> Path:
    """The baseline named by the configuration key: relative to the configuration file."""
    source = getattr(config, "source", None)
    base = Path(source).parent if source is not None else Path.cwd()
    return base / value
