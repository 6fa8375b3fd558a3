"""`tf-memlint -` reads the source from stdin, as editors and pipes use it (ruff's and flake8's
convention); --stdin-filename names it for the output, --force-exclude and the configuration."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import RANGE_1000_GRADE

BAD = "import tensorflow as tf\n\n@tf.function\ndef f(x):\n    for i in range(1000):\n        x += 1\n    return x\n"


def _run(args, stdin: bytes | str, cwd):
    data = stdin.encode() if isinstance(stdin, str) else stdin
    return subprocess.run([sys.executable, "-m", "tf_memlint", *args], input=data, capture_output=True,
                          cwd=cwd, timeout=120)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "f.py").write_text(BAD)
    return tmp_path


def test_stdin_with_a_filename(project):
    completed = _run(["-", "--stdin-filename", "src/f.py"], BAD, project)
    assert completed.returncode == 1, completed.stderr
    assert completed.stdout.decode() == ("src/f.py:5:5: TFM101 Python loop over range(1000) is unrolled into "
                                         "the traced graph (1000 copies of its body); use tf.range" + RANGE_1000_GRADE + "\n")


def test_stdin_without_a_filename_is_dash(project):
    completed = _run(["-"], BAD, project)
    assert completed.returncode == 1 and completed.stdout.decode().startswith("-:5:5: TFM101")


def test_stdin_filename_alone_reads_stdin(project):
    completed = _run(["--stdin-filename", "src/f.py"], BAD, project)
    assert completed.returncode == 1 and completed.stdout.decode().startswith("src/f.py:5:5: TFM101")


def test_clean_stdin_and_noqa(project):
    assert _run(["-"], "import tensorflow as tf\n", project).returncode == 0
    silenced = BAD.replace("range(1000):", "range(1000):  # noqa: TFM101")
    assert _run(["-", "--stdin-filename", "src/f.py"], silenced, project).returncode == 0


def test_configuration_is_found_from_the_stdin_filename(project, tmp_path_factory):
    """An editor may run the command from anywhere: the file's own project configuration applies."""
    (project / "src" / "pyproject.toml").write_text('[tool.tf-memlint]\nignore = ["TFM101"]\n')
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    completed = _run(["-", "--stdin-filename", str(project / "src" / "f.py")], BAD, elsewhere)
    assert completed.returncode == 0, completed.stdout
    assert _run(["-", "--stdin-filename", str(project / "f.py")], BAD, elsewhere).returncode == 1


def test_excludes_apply_to_the_stdin_filename_with_force_exclude(project):
    (project / "pyproject.toml").write_text('[tool.tf-memlint]\nextend-exclude = ["generated"]\n')
    args = ["-", "--stdin-filename", "generated/f.py"]
    assert _run(args, BAD, project).returncode == 1  # named: linted, as a named path would be
    completed = _run([*args, "--force-exclude"], BAD, project)
    assert completed.returncode == 0 and completed.stdout == b""


def test_stdin_formats_are_one_line_per_finding(project):
    for fmt in ("text", "github"):
        out = _run(["-", "--stdin-filename", "src/f.py", "--format", fmt], BAD, project).stdout.decode()
        assert len(out.splitlines()) == 1 and "src/f.py" in out


def test_stdin_decoding_follows_python(project):
    latin = b"# -*- coding: latin-1 -*-\n" + BAD.replace("x += 1", "x += 1  # caf\xe9").encode("latin-1")
    assert _run(["-"], latin, project).returncode == 1
    completed = _run(["-", "--stdin-filename", "src/f.py"], b"import tensorflow as tf\ns = 'caf\xe9'\n", project)
    assert completed.returncode == 2
    assert completed.stderr.decode().startswith("src/f.py: error: cannot decode: not valid utf-8")


@pytest.mark.parametrize("args, message", [
    (["-", "f.py"], "cannot be combined"),
    (["f.py", "--stdin-filename", "x.py"], "give `-` as the only path"),
])
def test_stdin_usage_errors(project, args, message):
    completed = _run(args, "", project)
    assert completed.returncode == 2 and message in completed.stderr.decode()
