"""Formats CI and editors read: SARIF 2.1.0 (validated against the official schema), GitHub
workflow annotations, --statistics."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from tf_memlint.cli import main
from tf_memlint.rule import all_rules

from conftest import RANGE_1000_GRADE

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
BAD = "import tensorflow as tf\n\n@tf.function\ndef f(x):\n    for i in range(1000):\n        x += 1\n    return x\n"


@pytest.fixture
def repo(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "model.py").write_text(BAD)
    (tmp_path / "src" / "pkg" / "broken.py").write_bytes(b"import tensorflow as tf\ndef f(:\n")
    monkeypatch.chdir(tmp_path / "src")  # run from a subdirectory: paths stay repository-relative
    return tmp_path


def _sarif(capsys, *args) -> tuple[int, dict]:
    status = main([*args, "--format", "sarif", "--isolated"])
    return status, json.loads(capsys.readouterr().out)


def _validate(document: dict) -> None:
    validator = jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(document), key=str)
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:5])


def test_schema_is_the_official_one():
    assert SCHEMA["title"] == "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"
    assert SCHEMA["id"].startswith("https://docs.oasis-open.org/sarif/sarif/v2.1.0/")


def test_sarif_validates_and_has_what_code_scanning_needs(repo, capsys):
    status, document = _sarif(capsys, "pkg/model.py")
    assert status == 1
    _validate(document)
    (run,) = document["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted(all_rules())  # one entry per TFM code
    for rule in rules:
        assert rule["name"] and rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
        assert rule["helpUri"].endswith(f"/rules/{rule['id']}.md")
    (result,) = run["results"]
    assert result["ruleId"] == "TFM101"
    assert rules[result["ruleIndex"]]["id"] == "TFM101"
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "src/pkg/model.py", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 5, "startColumn": 5}  # 1-based, like flake8
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == repo.resolve().as_uri() + "/"
    assert run["invocations"][0]["executionSuccessful"] is True


def test_unlintable_files_become_notifications(repo, capsys):
    status, document = _sarif(capsys, "pkg")
    assert status == 2
    _validate(document)
    invocation = document["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    (note,) = invocation["toolExecutionNotifications"]
    assert note["level"] == "error" and "syntax error" in note["message"]["text"]
    assert note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "src/pkg/broken.py"
    assert len(document["runs"][0]["results"]) == 1


def test_fingerprints_are_stable_across_unrelated_edits(repo, capsys):
    _, before = _sarif(capsys, "pkg/model.py")
    model = repo / "src" / "pkg" / "model.py"
    model.write_text("# a new header comment\n\n" + BAD)
    _, after = _sarif(capsys, "pkg/model.py")
    (old,), (new,) = before["runs"][0]["results"], after["runs"][0]["results"]
    assert new["locations"][0]["physicalLocation"]["region"]["startLine"] == 7
    assert old["partialFingerprints"] == new["partialFingerprints"]
    # Two identical flagged lines in one file get different fingerprints.
    model.write_text(BAD + BAD.replace("import tensorflow as tf\n", "").replace("def f", "def g"))
    _, twice = _sarif(capsys, "pkg/model.py")
    prints = [json.dumps(r["partialFingerprints"]) for r in twice["runs"][0]["results"]]
    assert len(prints) == 2 and len(set(prints)) == 2


def test_empty_run_validates(repo, capsys):
    (repo / "src" / "clean.py").write_text("import tensorflow as tf\n")
    status, document = _sarif(capsys, "clean.py")
    assert status == 0 and document["runs"][0]["results"] == []
    _validate(document)


def test_github_annotations(repo, capsys):
    assert main(["pkg", "--format", "github", "--isolated"]) == 2
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("::error title=tf-memlint,file=pkg/broken.py::syntax error")
    assert out[1] == ("::warning title=tf-memlint TFM101 (python-loop-in-tf-function),file=pkg/model.py,"
                      "line=5,col=5::TFM101 Python loop over range(1000) is unrolled into the traced graph "
                      "(1000 copies of its body); use tf.range" + RANGE_1000_GRADE)


def test_github_escapes_workflow_command_syntax():
    from tf_memlint.files import FileResult
    from tf_memlint.report import github
    from tf_memlint.rule import Diagnostic

    out = github([FileResult("a,b:c.py", [Diagnostic(1, 0, "TFM101", "50% of\nit")], error="bad\r\nfile")])
    # escaped for the workflow command; a line break in a message is flattened (one line each)
    assert "file=a%2Cb%3Ac.py" in out and "::TFM101 50%25 of it\n" in out
    assert out.endswith("::bad file\n") and len(out.splitlines()) == 2


def test_statistics(repo, capsys):
    (repo / "src" / "two.py").write_text(BAD + BAD.replace("import tensorflow as tf\n", "").replace("def f", "def g"))
    assert main(["two.py", "pkg/model.py", "--statistics", "--isolated"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "3     TFM101 python-loop-in-tf-function"
    # machine formats keep stdout one document: the counts go to stderr
    assert main(["two.py", "--statistics", "--format", "json", "--isolated"]) == 1
    captured = capsys.readouterr()
    json.loads(captured.out)
    assert captured.err == "2     TFM101 python-loop-in-tf-function\n"
