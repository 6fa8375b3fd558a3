"""Jupyter notebooks: code cells linted as one module, IPython syntax neutralised line for line,
every finding reported with its cell in every format, malformed notebooks one error line."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from conftest import FIXTURES, every_rule
from tf_memlint import engine
from tf_memlint.cli import main
from tf_memlint.files import lint_file
from tf_memlint.notebook import NotebookError, load, python_lines
from tf_memlint.rule import all_rules

NOTEBOOK = FIXTURES / "notebooks" / "bad_training.ipynb"
SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
_EXPECT = re.compile(r"#\s*expect:\s*(TFM\d{3})")

EVERY_RULE = every_rule()


def _notebook(*cells: str | tuple[str, str], **top) -> str:
    """An nbformat 4 notebook: a str is a code cell, (type, source) any cell."""
    nb = {"cells": [], "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}
    for cell in cells:
        kind, source = cell if isinstance(cell, tuple) else ("code", cell)
        entry = {"cell_type": kind, "metadata": {}, "source": source.splitlines(True)}
        if kind == "code":
            entry.update(execution_count=None, outputs=[])
        nb["cells"].append(entry)
    nb.update(top)
    return json.dumps(nb, indent=1)


def _expected(path: Path) -> list[tuple[int, int, str]]:
    """(cell, line in the cell, code) for every `# expect:` in the notebook's code cells."""
    found = []
    for number, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"], start=1):
        if cell["cell_type"] != "code":
            continue
        for line_number, line in enumerate("".join(cell["source"]).splitlines(), start=1):
            match = _EXPECT.search(line)
            if match:
                found.append((number, line_number, match.group(1)))
    return found


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()  # the SARIF root
    shutil.copy(NOTEBOOK, tmp_path / "train.ipynb")
    return tmp_path


# -- every finding, with its cell, in every format ------------------------------------------------

def test_fixture_notebook_has_findings_in_several_cells_and_magics():
    expected = _expected(NOTEBOOK)
    assert len({cell for cell, _, _ in expected}) >= 4
    text = NOTEBOOK.read_text(encoding="utf-8")
    for magic in ("%matplotlib", "!pip", "%%time", "%%bash", "= !ls", "summary?", "%time ", "%timeit", "# noqa"):
        assert magic in text


def test_text_format(project, capsys):
    assert main(["train.ipynb", "--isolated", *EVERY_RULE]) == 1
    out = capsys.readouterr().out
    found = [tuple(int(x) for x in re.match(r"train\.ipynb:cell (\d+):(\d+):\d+: ", line).groups()) + (line.split()[2],)
             for line in out.splitlines()]
    assert found == _expected(NOTEBOOK)
    assert "train.ipynb:cell 3:3:5: TFM101 Python loop over range(1000)" in out
    assert "range(2000)" in out  # a multi-line range( ... ) is quoted on one line


def test_json_format(project, capsys):
    main(["train.ipynb", "--isolated", *EVERY_RULE, "--format", "json"])
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert [(f["cell"], f["line"], f["code"]) for f in findings] == _expected(NOTEBOOK)
    assert findings[0] == {"path": "train.ipynb", "cell": 3, "line": 3, "column": 5, "code": "TFM101",
                           "name": "python-loop-in-tf-function", "message": findings[0]["message"],
                           "confidence": "high", "evidence": "1,000 iterations (range(1000)); notebook",
                           "cost": findings[0]["cost"], "url": findings[0]["url"]}


def test_sarif_format_points_into_the_ipynb_and_validates(project, capsys):
    assert main(["train.ipynb", "--isolated", *EVERY_RULE, "--format", "sarif"]) == 1
    document = json.loads(capsys.readouterr().out)
    validator = jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.FormatChecker())
    assert not sorted(validator.iter_errors(document), key=str)
    raw_lines = (project / "train.ipynb").read_text(encoding="utf-8").splitlines()
    results = document["runs"][0]["results"]
    assert [(r["properties"]["notebookCell"], r["properties"]["cellLine"], r["ruleId"]) for r in results] \
        == _expected(NOTEBOOK)
    cells = json.loads((project / "train.ipynb").read_text(encoding="utf-8"))["cells"]
    for result in results:
        location = result["locations"][0]
        region = location["physicalLocation"]["region"]
        assert location["physicalLocation"]["artifactLocation"]["uri"] == "train.ipynb"
        props = result["properties"]
        cell_line = "".join(cells[props["notebookCell"] - 1]["source"]).splitlines()[props["cellLine"] - 1]
        flagged = cell_line[props["cellColumn"] - 1:]
        # the region is the flagged character in the JSON text as stored
        assert raw_lines[region["startLine"] - 1][region["startColumn"] - 1:].startswith(flagged[:10])
        assert location["message"]["text"] == f"cell {props['notebookCell']}:{props['cellLine']}:{props['cellColumn']}"


def test_github_format(project, capsys):
    main(["train.ipynb", "--isolated", *EVERY_RULE, "--format", "github"])
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(_expected(NOTEBOOK))
    first = lines[0]
    assert first.startswith("::warning title=tf-memlint TFM101 (python-loop-in-tf-function),file=train.ipynb,line=")
    assert "::cell 3:3:5: TFM101 Python loop over range(1000)" in first
    raw = (project / "train.ipynb").read_text(encoding="utf-8").splitlines()
    line, col = (int(x) for x in re.search(r",line=(\d+),col=(\d+)::", first).groups())
    assert raw[line - 1][col - 1:].startswith("for i in range(1000)")


def test_directory_walk_includes_notebooks_and_include_is_configurable(project, capsys):
    (project / "sub").mkdir()
    (project / "train.ipynb").rename(project / "sub" / "train.ipynb")
    assert main([".", "--isolated", *EVERY_RULE]) == 1
    assert "sub/train.ipynb:cell 3:3:5" in capsys.readouterr().out
    assert main([".", "--isolated", *EVERY_RULE, "--include", "*.py"]) == 0
    (project / "pyproject.toml").write_text('[tool.tf-memlint]\ninclude = ["*.py"]\n')
    assert main(["."]) == 0
    (project / "pyproject.toml").write_text('[tool.tf-memlint]\nextend-exclude = ["*.ipynb"]\n')
    assert main(["."]) == 0
    capsys.readouterr()


def test_notebook_from_stdin(project, capsys, monkeypatch):
    import io

    raw = (project / "train.ipynb").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw)))
    assert main(["-", "--stdin-filename", "nb/train.ipynb", "--isolated", *EVERY_RULE]) == 1
    assert capsys.readouterr().out.startswith("nb/train.ipynb:cell 3:3:5: TFM101")


# -- one namespace, noqa, the engine knows -------------------------------------------------------

def test_cells_are_one_module_in_order(tmp_path):
    """The tf.function is defined in one cell and called with a changing Python number in a later
    one: only linting the cells together sees it."""
    path = tmp_path / "nb.ipynb"
    path.write_text(_notebook("import tensorflow as tf\n",
                              "@tf.function\ndef f(x):\n    return x\n",
                              ("markdown", "call it\n"),
                              "for i in range(100):\n    f(i)\n"))
    result = lint_file(str(path), list(all_rules()), {})
    assert result.error is None
    assert [(result.cells[d].cell, result.cells[d].line, d.code) for d in result.findings] == [(4, 2, "TFM104")]


def test_noqa_in_a_cell(tmp_path):
    source = "import tensorflow as tf\n@tf.function\ndef f(x):\n    for i in range(1000):{}\n        x += 1\n    return x\n"
    path = tmp_path / "nb.ipynb"
    path.write_text(_notebook("%load_ext autoreload\n" + source.format("  # noqa: TFM101")))
    assert lint_file(str(path), list(all_rules()), {}).findings == []
    path.write_text(_notebook("%load_ext autoreload\n" + source.format("")))
    assert [d.code for d in lint_file(str(path), list(all_rules()), {}).findings] == ["TFM101"]


def test_the_engine_is_told_it_lints_a_notebook(tmp_path, monkeypatch):
    """TFContext.notebook: True for a notebook's cells, False for a .py file (and under flake8)."""
    seen = []
    real_run = engine._BatchedWalk.run

    def spy(walker, walked):
        seen.append(walker.context.notebook)
        return real_run(walker, walked)

    monkeypatch.setattr(engine._BatchedWalk, "run", spy)
    source = "import tensorflow as tf\n@tf.function\ndef f(x):\n    for i in range(1000):\n        x += 1\n    return x\n"
    (tmp_path / "nb.ipynb").write_text(_notebook(source))
    (tmp_path / "m.py").write_text(source)
    lint_file(str(tmp_path / "nb.ipynb"), list(all_rules()), {})
    lint_file(str(tmp_path / "m.py"), list(all_rules()), {})
    assert seen == [True, False]


# -- IPython syntax ----------------------------------------------------------------------------

@pytest.mark.parametrize("lines, expected", [
    (["%matplotlib inline", "import tensorflow as tf"], ["pass", "import tensorflow as tf"]),
    (["!pip install x", "files = !ls -la", "x, y = %who_ls"], ["pass", "files = None", "x, y = None"]),
    (["model.summary?", "??tf.function", "%pinfo tf"], ["pass", "pass", "pass"]),
    (["%time f(x)", "%timeit -n 3 f(x)"], ["if 1: f(x)", "pass"]),
    (["if x:", "    %timeit f(x)", "    !echo"], ["if x:", "    if 1:   f(x)", "    pass"]),
    (["%pip install \\", "    tensorflow", "x = 1"], ["pass", "", "x = 1"]),
    (["%%bash", "echo hi", "for i in 1 2; do echo; done"], ["", "", ""]),
    (["%%writefile model.py", "import tensorflow as tf"], ["", ""]),
    (["%%time", "x = 1", "%time y = 2"], ["", "x = 1", "if 1: y = 2"]),
    # a valid cell is never touched: % continuing an expression, ! and ? in strings
    (["x = (10", "%3)", "s = '!ls?'"], ["x = (10", "%3)", "s = '!ls?'"]),
])
def test_magics_are_neutralised_line_for_line(lines, expected):
    assert python_lines(lines) == expected


def test_a_cell_that_is_not_python_is_reported_and_the_others_linted(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    bad = "import tensorflow as tf\n@tf.function\ndef f(x):\n    for i in range(1000):\n        x += 1\n    return x\n"
    (tmp_path / "nb.ipynb").write_text(_notebook(bad, "def broken(:\n    pass\n"))
    assert main(["nb.ipynb", "--isolated", *EVERY_RULE]) == 2
    captured = capsys.readouterr()
    assert captured.out.startswith("nb.ipynb:cell 1:4:5: TFM101")
    assert captured.err == ("nb.ipynb: error: cell 2: syntax error: invalid syntax (line 1 of the cell); "
                            "that cell was not checked\n")


# -- positions in the JSON text -------------------------------------------------------------------

@pytest.mark.parametrize("dump", [
    lambda nb: json.dumps(nb),  # everything on one line
    lambda nb: json.dumps(nb, indent=1, ensure_ascii=True),  # \u escapes before the flagged code
    lambda nb: json.dumps(nb, indent=2, ensure_ascii=False),
])
def test_raw_positions_survive_escapes_and_layouts(tmp_path, dump):
    source = ('import tensorflow as tf\ns = "caf\u00e9 \U0001F600 \\"q\\" \\t"\n@tf.function\ndef f(x):\n'
              '    for i in range(1000):\n        x += 1\n    return x\n')
    nb = json.loads(_notebook(("markdown", "# title"), source))
    nb["cells"][1]["source"] = source  # one string, not a list: allowed by nbformat
    path = tmp_path / "nb.ipynb"
    path.write_text(dump(nb), encoding="utf-8")
    result = lint_file(str(path), list(all_rules()), {})
    (finding,) = result.findings
    where = result.cells[finding]
    assert (where.cell, where.line, where.col) == (2, 5, 4)
    raw = path.read_text(encoding="utf-8").splitlines()[where.raw_line - 1]
    assert raw[where.raw_col:].startswith("for i in range(1000)")


def test_crlf_and_form_feed_in_cells_keep_the_line_numbers(tmp_path):
    source = "import tensorflow as tf\r\nx = '\x0c'\r\n@tf.function\r\ndef f(x):\r\n    for i in range(1000):\r\n        x += 1\r\n    return x\r\n"
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(json.loads(_notebook(source))), encoding="utf-8")
    result = lint_file(str(path), list(all_rules()), {})
    assert [(result.cells[d].cell, result.cells[d].line) for d in result.findings] == [(1, 5)]


# -- malformed notebooks ------------------------------------------------------------------------

@pytest.mark.parametrize("content, message", [
    ('{"cells": [', "not a notebook: invalid JSON"),
    ("", "not a notebook: invalid JSON"),
    ('[1, 2]', "no list of cells"),
    ('{"cells": {}, "nbformat": 4}', "no list of cells"),
    ('{"cells": [], "nbformat": 3, "worksheets": []}', "unsupported notebook format nbformat=3"),
    ('{"cells": []}', "unsupported notebook format nbformat=None"),
    ('{"cells": [3], "nbformat": 4}', "cell 1 is not a cell object"),
    ('{"cells": [{"cell_type": "code", "source": 5}], "nbformat": 4}', "source of cell 1 is not text"),
    (b'{"cells": ["\xff"], "nbformat": 4}', "not valid UTF-8"),
])
def test_malformed_notebook_is_one_line_and_the_rest_is_linted(tmp_path, monkeypatch, capsys, content, message):
    monkeypatch.chdir(tmp_path)
    bad = "import tensorflow as tf\n@tf.function\ndef f(x):\n    for i in range(1000):\n        x += 1\n    return x\n"
    (tmp_path / "bad.py").write_text(bad)
    path = tmp_path / "broken.ipynb"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    assert main(["--isolated", *EVERY_RULE, "."]) == 2
    captured = capsys.readouterr()
    assert captured.out.startswith("bad.py:4:5: TFM101")
    (line,) = captured.err.splitlines()
    assert line.startswith("broken.ipynb: error: ") and message in line, line


def test_empty_and_non_python_notebooks_are_clean(tmp_path):
    (tmp_path / "empty.ipynb").write_text(_notebook())
    r_source = "import tensorflow as tf\n@tf.function\ndef f(x):\n    for i in range(1000):\n        x += 1\n"
    (tmp_path / "r.ipynb").write_text(_notebook(r_source, metadata={"language_info": {"name": "R"}}))
    for name in ("empty.ipynb", "r.ipynb"):
        result = lint_file(str(tmp_path / name), list(all_rules()), {})
        assert result.error is None and result.findings == []


def test_load_rejects_what_is_not_json():
    with pytest.raises(NotebookError):
        load(b"import tensorflow as tf\n")


# -- the flake8 route: nbQA ----------------------------------------------------------------------

def test_nbqa_flake8_runs_the_plugin_on_notebooks(tmp_path):
    """README: `nbqa flake8 notebook.ipynb --select TFM`. nbQA numbers code cells only (cell_N)."""
    if shutil.which("nbqa") is None and subprocess.run([sys.executable, "-m", "nbqa", "--version"],
                                                       capture_output=True).returncode != 0:
        pytest.skip("nbqa is not installed")
    bad = "@tf.function\ndef f(x):\n    for i in range(1000):\n        x += 1\n    return x\n"
    (tmp_path / "nb.ipynb").write_text(_notebook(("markdown", "# t"), "%matplotlib inline\nimport tensorflow as tf\n", bad))
    completed = subprocess.run([sys.executable, "-m", "nbqa", "flake8", "nb.ipynb", "--select", "TFM"],
                               capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert completed.returncode == 1, completed.stderr
    assert completed.stdout.startswith("nb.ipynb:cell_2:3:5: TFM101"), completed.stdout


TRACED_LOOP_CELL = ("    import tensorflow as tf\n    @tf.function\n    def f(x):\n        for i in range(1000):\n"
                    "            x += 1\n        return x\n")


@pytest.mark.parametrize("line", ["ls -lh *.h5", "cd data", "pip install tensorflow-cpu==2.16", "  pwd",
                                  "mkdir -p out/checkpoints", "run train.py --epochs 3"])
def test_automagic_one_line_cells_are_accepted(tmp_path, line):
    """IPython runs a line magic without its % (automagic) in a one-line cell."""
    path = tmp_path / "nb.ipynb"
    path.write_text(_notebook(line, TRACED_LOOP_CELL.replace("    ", "", 1).replace("\n    ", "\n")))
    result = lint_file(str(path), list(all_rules()), {})
    assert result.error is None and [f.code for f in result.findings] == ["TFM101"]


def test_automagic_is_not_applied_to_longer_cells_or_python(tmp_path):
    """IPython applies automagic to one-line cells only; `ls = 3` and `cd(x)` are Python."""
    assert load(_notebook("ls -lh *.h5\nx = 1\n")).skipped  # IPython refuses this cell too
    assert python_lines(["ls = 3"]) == ["ls = 3"] and python_lines(["cd(x)"]) == ["cd(x)"]
    assert python_lines(["ls -lh *.h5"]) == ["pass"] and python_lines(["lsx -lh *.h5"]) == ["lsx -lh *.h5"]


def test_a_cell_whose_first_line_is_indented(tmp_path, capsys):
    """IPython removes the first line's indentation from every line that starts with it;
    positions stay those of the cell as written."""
    path = tmp_path / "nb.ipynb"
    path.write_text(_notebook(("markdown", "# title"), TRACED_LOOP_CELL))
    result = lint_file(str(path), list(all_rules()), {})
    assert result.error is None
    (finding,) = result.findings
    assert str(result.cells[finding]) == "cell 2:4:9"  # `for` is at column 9 of the cell's line 4
    assert (finding.code, finding.col) == ("TFM101", 4)
    main([str(path), "--isolated", "--format", "json"])
    (reported,) = json.loads(capsys.readouterr().out)["findings"]
    assert (reported["cell"], reported["line"], reported["column"]) == (2, 4, 9)
