"""Jupyter notebooks (``.ipynb``, nbformat 4) as one Python module, read with the stdlib ``json``.

A notebook is one namespace: its code cells run in one kernel, in order. So the code cells are
linted as one module, concatenated in order, and every finding is mapped back to its cell:

    cell     the cell's 1-based position in the notebook, markdown and raw cells included (the
             number Jupyter's own navigation and ruff's ``nb.ipynb:cell 3:4:5`` use)
    line     1-based line within the cell; col: 0-based column within that line
    raw      the same character's line and column in the ``.ipynb`` file's text (the JSON), for
             SARIF and GitHub annotations, which point into the file as stored

IPython syntax is neutralised without moving anything: a line magic (``%matplotlib inline``),
a shell escape (``!pip install x``, ``files = !ls``) and a help query (``obj?``) become ``pass``
(``x = None`` for an assignment) on the same line at the same indentation; ``%time``/``%timeit``
keep their statement in place (``%time f(x)`` becomes ``if 1: f(x)``, columns unchanged); a cell magic in the first line
(``%%bash``, ``%%writefile``, ...) blanks the whole cell except for the ones whose body is Python
(``%%time``, ``%%timeit``, ``%%capture``, ...), as ruff does. Cells are only rewritten when they
do not parse as they are, so a ``%`` inside a string or a continued expression is never touched.

Two more things IPython runs, as IPython does: a cell whose first line is indented loses that
indentation on every line that starts with it (IPython's ``leading_indent``; columns are mapped
back); and a one-line cell that starts with a line magic's name without its ``%`` (automagic:
``ls -lh *.h5``, ``cd data``, ``pip install x``), which IPython applies to one-line cells only.

A cell that is still not Python is left out (its lines are blank) and reported, one line, with
the cell and the line; the other cells are linted. A file that is not nbformat 4 JSON is one
error (``NotebookError``).
"""

from __future__ import annotations

import ast
import bisect
import json
import re
import warnings
from dataclasses import dataclass, field
from json.decoder import scanstring
from typing import Any

NOTEBOOK_SUFFIX = ".ipynb"
# Cell magics whose body is Python (ruff's list, and IPython's own %%prun/%%debug/%%capture).
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "debug", "prun", "pypy", "python",
                                "python3", "writefile_python"})
_TIMERS = re.compile(r"^(\s*)(%timeit|%time)( +)(?!-)(?=\S)")
_ASSIGNED_MAGIC = re.compile(r"^(\s*[A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*)(!|%[A-Za-z]).*$")
_LINE_MAGIC = re.compile(r"^(\s*)(?:!(?!=)|%[A-Za-z%]|\?|[A-Za-z_][\w.]*\?\??\s*$)")
_LEADING_INDENT = re.compile(r"^[ \t]+")
# IPython's line magics and its POSIX shell aliases: the names automagic runs without a `%`.
AUTOMAGICS = frozenset("""
    alias alias_magic autoawait autocall automagic bookmark cat cd clear colors conda config cp debug
    dhist dirs doctest_mode ed edit env gui hist history killbgscripts ldir less lf lk ll load
    load_ext loadpy logoff logon logstart logstate logstop ls lsmagic lx macro magic mamba man
    matplotlib micromamba mkdir more mv notebook page pastebin pdb pdef pdoc pfile pinfo pinfo2 pip
    popd pprint precision prun psearch psource pushd pwd pycat pylab qtconsole quickref recall
    rehashx reload_ext rep rerun reset reset_selective rm rmdir run save sc set_env store sx system
    tb time timeit unalias unload_ext uv who who_ls whos xdel xmode""".split())


class NotebookError(Exception):
    """The file is not a notebook this tool can read; the message (one line) says why."""


@dataclass(frozen=True)
class CellLocation:
    cell: int  # 1-based position of the cell in the notebook (all cell types count)
    line: int  # 1-based line within the cell
    col: int  # 0-based column within that line
    raw_line: int  # 1-based line of the .ipynb file's text
    raw_col: int  # 0-based column there

    def __str__(self) -> str:
        return f"cell {self.cell}:{self.line}:{self.col + 1}"


@dataclass
class Notebook:
    """The code cells of a notebook as one module, and the way back from it to the cells."""

    source: str  # the code cells, concatenated, magics neutralised
    text: str  # the .ipynb file's text (for raw positions)
    # per line of ``source`` (index = line - 1): (cell number, line in the cell)
    line_map: list[tuple[int, int]] = field(default_factory=list)
    # source line -> columns removed from its start (a cell whose first line was indented)
    dedented: dict[int, int] = field(default_factory=dict)
    # cell number -> that cell's source exactly as stored (for raw positions)
    cell_sources: dict[int, str] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)  # cells left out, one message each
    _raw: dict[int, list[tuple[int, str]]] | None = None
    _line_starts: list[int] | None = None

    def locate(self, line: int, col: int) -> CellLocation:
        """Where ``source``'s ``line`` (1-based), ``col`` (0-based) is in the notebook."""
        cell, cell_line = self.line_map[line - 1] if 0 < line <= len(self.line_map) else (0, line)
        col += self.dedented.get(line, 0)
        raw_line, raw_col = self._raw_position(cell, cell_line, col)
        return CellLocation(cell, cell_line, col, raw_line, raw_col)

    # -- positions in the .ipynb text ----------------------------------------------------------
    def _raw_position(self, cell: int, cell_line: int, col: int) -> tuple[int, int]:
        if self._raw is None:
            self._raw = _source_literals(self.text)
            self._line_starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", self.text)]
        literals = self._raw.get(cell)
        source = self.cell_sources.get(cell)
        if not literals or source is None:
            return 1, 0
        # The character's offset in the cell's source, then the JSON string literal holding it.
        lines = _NEWLINE_KEPT.findall(source)
        offset = sum(len(text) for text in lines[:cell_line - 1]) + col
        for start, value in literals:
            if offset < len(value) or (start, value) == literals[-1]:
                raw = _raw_offset(self.text, start, min(offset, len(value)))
                break
            offset -= len(value)
        number = bisect.bisect_right(self._line_starts, raw) - 1  # type: ignore[arg-type]
        return number + 1, raw - self._line_starts[number]  # type: ignore[index]


def is_notebook_path(path: str) -> bool:
    return path.lower().endswith(NOTEBOOK_SUFFIX)


def load(raw: bytes | str) -> Notebook:
    """The notebook's code cells as one module. Raises NotebookError (one line) when ``raw`` is
    not nbformat 4 JSON."""
    if isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise NotebookError(f"not a notebook: not valid UTF-8 JSON (byte {raw[error.start]:#04x} at "
                                f"offset {error.start})") from None
    else:
        text = raw
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise NotebookError(f"not a notebook: invalid JSON: {error.msg} (line {error.lineno}, "
                            f"column {error.colno})") from None
    except RecursionError:
        raise NotebookError("not a notebook: JSON nested too deeply") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise NotebookError("not a notebook: no list of cells at the top level (nbformat 4 expected)")
    version = data.get("nbformat")
    if version != 4:
        raise NotebookError(f"unsupported notebook format nbformat={version!r}: only nbformat 4 is read; "
                            f"convert it with `jupyter nbconvert --to notebook --inplace`")
    notebook = Notebook(source="", text=text)
    if not _is_python(data.get("metadata")):
        return notebook  # an R or Julia notebook: no Python to lint
    pieces: list[str] = []
    for number, cell in enumerate(data["cells"], start=1):
        if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"), str):
            raise NotebookError(f"not a notebook: cell {number} is not a cell object")
        if cell["cell_type"] != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(s, str) for s in source):
            source = "".join(source)
        if not isinstance(source, str):
            raise NotebookError(f"not a notebook: the source of cell {number} is not text")
        notebook.cell_sources[number] = source
        lines = _NEWLINE.split(source)
        if lines[-1] == "":
            lines.pop()  # the source ended with a line break (or was empty)
        indent = _LEADING_INDENT.match(lines[0]) if lines else None
        if indent and not _parses("\n".join(lines) + "\n"):
            first = len(notebook.line_map) + 1
            prefix = indent.group(0)
            for index, line in enumerate(lines):
                if line.startswith(prefix):
                    notebook.dedented[first + index] = len(prefix)
            lines = [line[len(prefix):] if line.startswith(prefix) else line for line in lines]
        python = python_lines(lines)
        problem = _syntax_problem("\n".join(python) + "\n") if python else None
        if problem:
            python = python_lines(lines, keep_timed=False)
            problem = _syntax_problem("\n".join(python) + "\n")
        if problem:
            notebook.skipped.append(f"cell {number}: {problem}; that cell was not checked")
            python = [""] * len(lines)
        pieces.extend(line + "\n" for line in python)
        notebook.line_map.extend((number, index) for index in range(1, len(python) + 1))
    notebook.source = "".join(pieces)
    return notebook


def _is_python(metadata: Any) -> bool:
    if not isinstance(metadata, dict):
        return True
    for key, name in (("language_info", "name"), ("kernelspec", "language")):
        table = metadata.get(key)
        if isinstance(table, dict) and isinstance(table.get(name), str):
            return table[name].lower() in ("python", "python3", "ipython", "ipython3")
    return True


def python_lines(lines: list[str], keep_timed: bool = True) -> list[str]:
    """The cell's lines as Python: IPython syntax neutralised line for line (same count, same
    columns for everything kept). Lines are given and returned without line endings.
    ``keep_timed``: keep the statement of ``%time``/``%timeit`` (as ``if 1: stmt``); without it,
    such a line is ``pass`` like any other magic (for a compound statement after ``%time``)."""
    if not lines:
        return []
    lines = list(lines)
    first = lines[0].lstrip()
    if first.startswith("%%"):
        name = first[2:].split(None, 1)[0] if first[2:].strip() else ""
        if name not in PYTHON_CELL_MAGICS:
            return [""] * len(lines)  # %%bash, %%writefile, %%html, ...: not Python
        lines[0] = ""
    if _parses("\n".join(lines) + "\n"):
        return lines
    if len(lines) == 1 and _is_automagic(lines[0]):
        return [lines[0][:len(lines[0]) - len(lines[0].lstrip())] + "pass"]
    out: list[str] = []
    continued = False
    for line in lines:
        if continued:  # the rest of a magic continued with a backslash
            out.append("")
            continued = line.rstrip().endswith("\\")
            continue
        timer = _TIMERS.match(line)
        assigned = _ASSIGNED_MAGIC.match(line)
        if timer and keep_timed:
            # `%time stmt` -> `if 1: stmt`, padded to the same width: the statement stays where it was.
            width = len(timer.group(2)) + len(timer.group(3))
            out.append(timer.group(1) + "if 1:".ljust(width) + line[timer.end():])
        elif assigned:
            out.append(assigned.group(1) + "None")
            continued = line.rstrip().endswith("\\")
        elif _LINE_MAGIC.match(line):
            out.append(line[:len(line) - len(line.lstrip())] + "pass")
            continued = line.rstrip().endswith("\\")
        else:
            out.append(line)
    return out


def _is_automagic(line: str) -> bool:
    """``ls -lh *.h5``: a magic's name, then anything that is not an assignment or a call."""
    words = line.split(None, 1)
    if not words or words[0] not in AUTOMAGICS:
        return False
    rest = line.lstrip()[len(words[0]):]
    return not re.match(r"\s*(?:[-+*/%&|^@]?=|\(|\.|\[)", rest)  # `ls = 3`, `cd(x)`: Python


def _parses(source: str) -> bool:
    return _syntax_problem(source) is None


def _syntax_problem(source: str) -> str | None:
    """None when the cell is Python (CPython's parser, else LibCST's: newer syntax), else why."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(source)
        return None
    except SyntaxError as error:
        message = f"syntax error: {error.msg} (line {error.lineno} of the cell)"
    except (ValueError, RecursionError, MemoryError) as error:
        return f"cannot parse: {type(error).__name__}"
    try:
        import libcst

        libcst.parse_module(source)
        return None
    except Exception:  # noqa: BLE001 - any refusal means: not Python we can lint
        return message


# -- the JSON text: where each code cell's source strings are ------------------------------------

# Python's line breaks only (str.splitlines also breaks at \f, \x1c, \u2028, ...).
_NEWLINE = re.compile(r"\r\n|\r|\n")
_NEWLINE_KEPT = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
_WS = re.compile(r"[ \t\n\r]*")
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null")


def _source_literals(text: str) -> dict[int, list[tuple[int, str]]]:
    """cell number -> [(offset of the opening quote, decoded value)] for each string of that
    cell's ``source`` in the JSON text (which ``json.loads`` has already accepted)."""
    found: dict[int, list[tuple[int, str]]] = {}
    i = _WS.match(text, 1 if text.startswith("\ufeff") else 0).end()
    if text[i:i + 1] != "{":
        return found
    i += 1
    while True:
        i = _WS.match(text, i).end()
        if text[i] == "}":
            return found
        key, i = scanstring(text, i + 1)
        i = _WS.match(text, i).end() + 1  # the colon
        i = _WS.match(text, i).end()
        if key == "cells" and text[i] == "[":
            i = _cells(text, i, found)
        else:
            i = _skip(text, i)
        i = _WS.match(text, i).end()
        if text[i] == ",":
            i += 1


def _cells(text: str, i: int, found: dict[int, list[tuple[int, str]]]) -> int:
    i += 1
    number = 0
    while True:
        i = _WS.match(text, i).end()
        if text[i] == "]":
            return i + 1
        number += 1
        if text[i] == "{":
            i += 1
            while True:
                i = _WS.match(text, i).end()
                if text[i] == "}":
                    i += 1
                    break
                key, i = scanstring(text, i + 1)
                i = _WS.match(text, _WS.match(text, i).end() + 1).end()
                if key == "source":
                    literals: list[tuple[int, str]] = []
                    if text[i] == '"':
                        value, end = scanstring(text, i + 1)
                        literals.append((i, value))
                        i = end
                    elif text[i] == "[":
                        i += 1
                        while True:
                            i = _WS.match(text, i).end()
                            if text[i] == "]":
                                i += 1
                                break
                            if text[i] == ",":
                                i += 1
                                continue
                            value, end = scanstring(text, i + 1)
                            literals.append((i, value))
                            i = end
                    else:
                        i = _skip(text, i)
                    found[number] = literals
                else:
                    i = _skip(text, i)
                i = _WS.match(text, i).end()
                if text[i] == ",":
                    i += 1
        else:
            i = _skip(text, i)
        i = _WS.match(text, i).end()
        if text[i] == ",":
            i += 1


def _skip(text: str, i: int) -> int:
    """The offset just past the JSON value starting at ``i`` (iterative: no recursion limit)."""
    depth = 0
    while True:
        i = _WS.match(text, i).end()
        char = text[i]
        if char == '"':
            i = scanstring(text, i + 1)[1]
        elif char in "[{":
            depth += 1
            i += 1
            continue
        elif char in "]}":
            depth -= 1
            i += 1
        elif char in ",:":
            i += 1
            continue
        else:
            match = _SCALAR.match(text, i)
            i = match.end() if match else i + 1
        if depth == 0:
            return i


def _raw_offset(text: str, quote: int, index: int) -> int:
    """The offset in ``text`` of character ``index`` of the JSON string literal at ``quote``."""
    i = quote + 1
    for _ in range(index):
        if text[i] != "\\":
            i += 1
        elif text[i + 1] == "u":
            unit = int(text[i + 2:i + 6], 16)
            i += 6
            if 0xD800 <= unit < 0xDC00 and text[i:i + 2] == "\\u":
                i += 6  # a surrogate pair is one character once decoded
        else:
            i += 2
    return i
