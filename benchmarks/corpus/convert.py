#!/usr/bin/env python3
"""Convert notebooks and Markdown books of the real-code corpus to plain .py files.

    python benchmarks/corpus/convert.py DIR [DIR ...]

For every ``X.ipynb`` under DIR, writes ``X.ipynb.py`` next to it:
  * the code cells in order, each preceded by one marker comment ``# cell N``
    (N counts code cells from 1);
  * IPython syntax that is not Python is commented out in place (indentation kept):
    line magics ``%...``, shell escapes ``!...`` and ``x = !cmd``, help lines ``obj?``/``?obj``
    (an indented one becomes ``pass  # ...`` so that its block stays valid);
    a cell magic line ``%%...`` is commented out, and when the cell magic runs a body
    that is not Python (``%%bash``, ``%%writefile``, ``%%html``...) the whole cell is commented out;
  * notebooks whose kernel language is not Python (R, Julia...) are skipped.

For every ``X.md`` (also ``.markdown``) under DIR, writes ``X.md.py`` next to it holding the
fenced code blocks whose info string names Python (```python, ```py, ```python3, ```ipython,
```{.python .input}, ~~~python ...), in order, each preceded by ``# block N (line L)``; the same
magic handling applies. A block whose first line is a d2l tab marker (``%%tab X, Y`` or
``#@tab X``) is kept only when the tab list names ``tensorflow`` or ``all``.
Markdown files without a Python block produce no file.

The conversion is deterministic (same input, same output) and uses the standard library only.
"""
from __future__ import annotations

import json
import os
import re
import sys

# Cell magics whose body is not Python: the whole cell is commented out.
NON_PYTHON_CELL_MAGICS = {
    "bash", "sh", "script", "writefile", "file", "html", "javascript", "js", "latex",
    "markdown", "svg", "perl", "ruby", "system", "sx", "R", "sql", "cmd", "powershell",
    "python2", "pypy", "tab_nb",
}

_ASSIGN_SHELL = re.compile(r"^[A-Za-z_][\w\s,\[\]().]*=\s*!")   # files = !ls
_ASSIGN_MAGIC = re.compile(r"^[A-Za-z_][\w\s,\[\]().]*=\s*%")   # t = %timeit -o f()
_HELP = re.compile(r"^(\?\??[\w.]+|[\w.]+(\(\))?\?\??)\s*$")      # ?obj, obj?, obj??


def _comment(line: str, keep_block: bool = False) -> str:
    stripped = line.lstrip()
    indent = line[: len(line) - len(stripped)]
    if not stripped:
        return line
    if keep_block and indent:
        # an indented magic may be the only statement of its block (`if IS_COLAB: !pip ...`)
        return f"{indent}pass  # {stripped}"
    return f"{indent}# {stripped}"


def _is_ipython_line(stripped: str) -> bool:
    if not stripped:
        return False
    if stripped[0] in "%!":
        return True
    if _ASSIGN_SHELL.match(stripped) or _ASSIGN_MAGIC.match(stripped):
        return True
    return bool(_HELP.match(stripped))


def convert_source(lines: list[str]) -> list[str]:
    """Comment out the IPython-only syntax of one cell / block (list of lines, no newlines)."""
    first = next((ln.strip() for ln in lines if ln.strip()), "")
    if first.startswith("%%"):
        magic = first[2:].split()[0] if first[2:].split() else ""
        if magic in NON_PYTHON_CELL_MAGICS:
            return [_comment(ln) for ln in lines]
    out = []
    continuation = False  # a magic/shell line ending in a backslash continues on the next line
    for ln in lines:
        stripped = ln.strip()
        if continuation:
            out.append(_comment(ln))
            continuation = stripped.endswith("\\")
        elif _is_ipython_line(stripped):
            out.append(_comment(ln, keep_block=True))
            continuation = stripped.endswith("\\")
        else:
            out.append(ln)
            continuation = False
    return out


def _cell_lines(source) -> list[str]:
    if isinstance(source, list):
        text = "".join(source)
    else:
        text = source or ""
    return text.splitlines()


def notebook_to_py(text: str) -> str | None:
    """Return the .py text of a notebook, or None if it is not a Python notebook / not JSON."""
    try:
        nb = json.loads(text)
    except ValueError:
        return None
    if not isinstance(nb, dict):
        return None
    meta = nb.get("metadata") or {}
    lang = ((meta.get("kernelspec") or {}).get("language")
            or (meta.get("language_info") or {}).get("name") or "python")
    if not str(lang).lower().startswith("python"):
        return None
    if "cells" in nb:
        cells = nb["cells"]
    else:  # nbformat 3
        cells = [c for ws in nb.get("worksheets", []) for c in ws.get("cells", [])]
    out = []
    n = 0
    for cell in cells:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        n += 1
        src = cell.get("source", cell.get("input", ""))
        out.append(f"# cell {n}")
        out.extend(convert_source(_cell_lines(src)))
        out.append("")
    return "\n".join(out) + "\n" if out else "\n"


_FENCE_OPEN = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})\s*(?P<info>.*)$")
_PY_INFO = re.compile(r"^\{?\s*\.?(python3?|py|ipython3?)\b", re.I)
_TAB = re.compile(r"^\s*(?:%%tab|#@tab)\s+(?P<tabs>.*)$")


def markdown_to_py(text: str) -> str | None:
    """Return the .py text holding the Python fenced blocks of a Markdown file, or None."""
    lines = text.splitlines()
    out = []
    n = 0
    i = 0
    while i < len(lines):
        m = _FENCE_OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        fence, indent, info = m.group("fence"), m.group("indent"), m.group("info").strip()
        start = i + 1
        j = start
        body = []
        while j < len(lines):
            stripped = lines[j].strip()
            if stripped.startswith(fence[0] * len(fence)) and stripped.strip(fence[0]) == "":
                break
            ln = lines[j]
            body.append(ln[len(indent):] if ln.startswith(indent) else ln.lstrip())
            j += 1
        i = j + 1
        if not _PY_INFO.match(info):
            continue
        first = next((b for b in body if b.strip()), "")
        tab = _TAB.match(first)
        if tab:
            tabs = {t.strip().lower() for t in re.split(r"[,\s]+", tab.group("tabs")) if t.strip()}
            if not tabs & {"tensorflow", "all"}:
                continue
        n += 1
        out.append(f"# block {n} (line {start})")
        out.extend(convert_source(body))
        out.append("")
    if not n:
        return None
    return "\n".join(out) + "\n"


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def convert_tree(root: str) -> dict:
    stats = {"ipynb": 0, "ipynb_skipped": 0, "md": 0, "md_without_python": 0}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != ".git")
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                continue
            lower = name.lower()
            if lower.endswith(".ipynb"):
                text = _read(path)
                result = notebook_to_py(text) if text is not None else None
                if result is None:
                    stats["ipynb_skipped"] += 1
                    continue
                stats["ipynb"] += 1
            elif lower.endswith((".md", ".markdown")):
                text = _read(path)
                result = markdown_to_py(text) if text is not None else None
                if result is None:
                    stats["md_without_python"] += 1
                    continue
                stats["md"] += 1
            else:
                continue
            with open(path + ".py", "w", encoding="utf-8") as f:
                f.write(result)
    return stats


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    for root in argv:
        print(root, convert_tree(root))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
