"""`# noqa` in the command behaves exactly as flake8's does (the plugin cannot change flake8's),
checked against real flake8 on every case: the comment belongs on the reported line; a multi-line
string or a backslash continuation joins lines, brackets do not."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tf_memlint.cli import main

SOURCE = """\
import tensorflow as tf

@tf.function
def f(x):
    for i in range(1000):{comment}
        x = x + 1.0
    return x
"""

FORMS = [
    ("", False),
    ("  # noqa", True),
    ("  # noqa: TFM101", True),
    ("  # NOQA:TFM101", True),
    ("  # noqa: TFM1", True),
    ("  # noqa: TFM102", False),
    ("  # noqa: E501,TFM101", True),
    ("  # noqa:E501 TFM101", True),
    ("  # not a noqa", False),
    ("  #noqa", False),  # flake8 wants one space after the hash
    ("  # noqa: tfm101", False),  # codes are compared as written, in flake8 too
    ("  # noqa:TFM101,TFM102", True),
]

HEAD = "import tensorflow as tf\n\n@tf.function\ndef f(x):\n"
MULTILINE = {
    # (source, line of the finding that must remain, or None when it is silenced)
    "second_line_of_brackets": (HEAD + "    for i in range(\n        1000,  # noqa: TFM101\n    ):\n"
                                "        x = x + 1.0\n    return x\n", 5),
    "first_line_of_brackets": (HEAD + "    for i in range(  # noqa: TFM101\n        1000,\n    ):\n"
                               "        x = x + 1.0\n    return x\n", None),
    "backslash_continuation": (HEAD + "    for i in \\\n            range(1000):  # noqa: TFM101\n"
                               "        x = x + 1.0\n    return x\n", None),
    "end_of_a_multiline_string": (HEAD + '    for i in range(1000): x = x + len("""\n    text\n"""'
                                  ')  # noqa: TFM101\n    return x\n', None),
    "noqa_text_inside_a_string": (HEAD + '    for i in range(1000): x = x + len("# noqa")\n    return x\n', None),
    "unrelated_line_below": (HEAD + "    for i in range(1000):\n        x = x + 1.0  # noqa\n    return x\n", 5),
}


@pytest.fixture(scope="module")
def both_doors(tmp_path_factory):
    """Every case through flake8 and through the command, once: {name: (flake8, command)} as
    sorted (line, column, code) lists."""
    root = tmp_path_factory.mktemp("noqa")
    cases = {f"form_{i}": SOURCE.format(comment=comment) for i, (comment, _) in enumerate(FORMS)}
    cases.update({name: source for name, (source, _) in MULTILINE.items()})
    for name, source in cases.items():
        (root / f"{name}.py").write_text(source)
    flake8 = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select", "TFM", "."],
                            capture_output=True, text=True, cwd=root, timeout=300)
    command = subprocess.run([sys.executable, "-m", "tf_memlint", "--isolated", "."],
                             capture_output=True, text=True, cwd=root, timeout=300)
    assert flake8.returncode in (0, 1) and command.returncode in (0, 1), (flake8.stderr, command.stderr)

    def parse(out: str) -> dict[str, list[tuple[int, int, str]]]:
        found: dict[str, list[tuple[int, int, str]]] = {name: [] for name in cases}
        for line in out.splitlines():
            path, row, col, rest = line.split(":", 3)
            found[path.removeprefix("./")[:-3]].append((int(row), int(col), rest.split()[0]))
        return {name: sorted(items) for name, items in found.items()}

    flake8_found, command_found = parse(flake8.stdout), parse(command.stdout)
    return {name: (flake8_found[name], command_found[name]) for name in cases}


@pytest.mark.parametrize("index", range(len(FORMS)), ids=[c.strip() or "none" for c, _ in FORMS])
def test_noqa_forms_as_flake8(both_doors, index):
    from_flake8, from_command = both_doors[f"form_{index}"]
    assert from_command == from_flake8
    assert (from_command == []) is FORMS[index][1]


@pytest.mark.parametrize("name", list(MULTILINE))
def test_multiline_statements_as_flake8(both_doors, name):
    from_flake8, from_command = both_doors[name]
    assert from_command == from_flake8
    expected_line = MULTILINE[name][1]
    assert [line for line, _, _ in from_command] == ([] if expected_line is None else [expected_line])


def test_noqa_in_the_lint_helper(lint):
    """The in-process path (files.lint_file) applies the same rules."""
    assert lint(SOURCE.format(comment="  # noqa: TFM101")) == []
    assert [d.line for d in lint(MULTILINE["second_line_of_brackets"][0])] == [5]


def test_noqa_when_the_source_does_not_tokenize():
    from tf_memlint.noqa import filter_noqa
    from tf_memlint.rule import Diagnostic

    findings = [Diagnostic(1, 0, "TFM101", "m"), Diagnostic(2, 0, "TFM101", "m")]
    source = "x = 1  # noqa\ny = '''unterminated\n"
    assert filter_noqa(source, findings) == [findings[1]]


def test_noqa_through_main(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text(SOURCE.format(comment="  # noqa: TFM101"))
    assert main(["m.py", "--isolated"]) == 0
