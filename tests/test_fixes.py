"""The fixes (tf_memlint/fixes): fixture pairs, what --fix / --unsafe-fixes / --diff do, `# noqa`,
the rule pages' "Fix:" lines, and the measurement that decides which fixes ship.

Each bad fixture of a rule with a fix either has its expected fixed text in
``fixtures/TFMnnn/fixed/<same name>`` or must come out of the fix unchanged.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
import shutil

import libcst as cst
import pytest

from conftest import EVERY_GRADE, FIXTURES, REPO
from tf_memlint.cli import main
from tf_memlint.files import lint_file, read_source
from tf_memlint.fixes import FIXABLE, fix_module, measured, shipped
from tf_memlint.fixes.base import SAFE, UNSAFE
from tf_memlint.fixes.driver import fix_text
from tf_memlint.fixes.measure import digest, fixed_source
from tf_memlint.resources import rule_page
from tf_memlint.rule import all_rules

BAD = [path for code in FIXABLE for path in sorted((FIXTURES / code).glob("bad_*.py"))]
HAS_TF = importlib.util.find_spec("tensorflow") is not None


def _id(path):
    return f"{path.parent.name}/{path.name}"


def _apply(path, code, capsys=None):
    """--fix --unsafe-fixes on ``path`` in place: through the command when the fix ships, else
    through the driver (a fix the measurement holds back is still tested)."""
    if shipped(code):
        # every grade: a fixture's finding is fixed whatever its confidence
        main([str(path), "--isolated", "--select", code, "--confidence", "low", "--fix", "--unsafe-fixes", "--exit-zero"])
    else:
        source = read_source(str(path))
        path.write_text(fix_text(source, [code], EVERY_GRADE, unsafe=True, unmeasured=True).text, encoding="utf-8")
    return path.read_text(encoding="utf-8")


def _findings(path, code):
    result = lint_file(str(path), [code], EVERY_GRADE)
    assert result.error is None, result.error
    return result.findings


@pytest.mark.parametrize("bad", BAD, ids=_id)
def test_fixture_pair(bad, tmp_path):
    code = bad.parent.name
    expected_path = bad.parent / "fixed" / bad.name
    work = tmp_path / bad.name
    shutil.copy(bad, work)
    before = _findings(work, code)
    applied = len(fix_text(read_source(str(bad)), [code], EVERY_GRADE, unsafe=True, unmeasured=True).applied)
    fixed = _apply(work, code)
    if not expected_path.exists():
        assert fixed == bad.read_text(encoding="utf-8"), f"{bad.name} has no fixed/ twin: the fix must leave it alone"
        return
    assert fixed == expected_path.read_text(encoding="utf-8")
    ast.parse(fixed)
    cst.parse_module(fixed)
    # A fixture with a fixed twin holds only what the fix rewrites: the rule is silent after it.
    # Shapes no rewrite may change (sessions the program keeps, whole outputs) are fixtures of
    # their own, without a twin, that the fix must leave alone (above).
    assert before and applied >= 1
    assert _findings(work, code) == []
    assert _apply(work, code) == fixed  # idempotent: a second --fix changes nothing


def test_every_fixed_text_has_its_bad_fixture():
    for fixed in FIXTURES.glob("TFM*/fixed/*.py"):
        assert (fixed.parent.parent / fixed.name).is_file(), fixed
        assert fixed.parent.parent.name in FIXABLE, fixed


# -- the command ------------------------------------------------------------------------------

TAPE = """import tensorflow as tf


def grads(x, steps):
    with tf.GradientTape(persistent=True) as tape:
        y = x * x
        z = y * y
    dz = tape.gradient(z, x)
    dy = tape.gradient(y, x)
    for _ in range(steps):
        x = x + dz + dy
    return x
"""
TAPE_FIXED = TAPE.replace("    dy = tape.gradient(y, x)\n", "    dy = tape.gradient(y, x)\n    del tape\n")

COMPILE = """import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
for epoch in range(100):
    model.compile("sgd", "mse")
    model.fit(x, y)
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _need(*codes):
    missing = [code for code in codes if not shipped(code)]
    if missing:
        pytest.skip(f"not shipped (its measurement did not confirm it): {missing}")


def test_fix_applies_safe_fixes_and_reports_what_is_left(project, capsys):
    _need("TFM401", "TFM406")
    (project / "a.py").write_text(TAPE + "\n\n" + COMPILE.split("\n", 2)[2])
    status = main(["--confidence", "low", "a.py", "--isolated", "--extend-select", "TFM401", "--fix"])
    out, err = capsys.readouterr()
    text = (project / "a.py").read_text()
    assert "del tape" in text and "for epoch in range(100):\n    model.compile" in text  # 406 is unsafe
    assert "TFM406" in out and "TFM401" not in out and status == 1
    assert "fixed 1 finding in 1 file" in err and "1 unsafe fix not applied (add --unsafe-fixes)" in err
    status = main(["--confidence", "low", "a.py", "--isolated", "--extend-select", "TFM401", "--fix", "--unsafe-fixes"])
    assert status == 0 and capsys.readouterr().out == ""
    assert 'model.compile("sgd", "mse")\nfor epoch in range(100):' in (project / "a.py").read_text()


def test_diff_writes_nothing_and_exits_1_when_there_is_a_fix(project, capsys):
    _need("TFM401")
    (project / "a.py").write_text(TAPE)
    assert main(["--confidence", "low", "a.py", "--isolated", "--extend-select", "TFM401", "--diff"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("--- a/a.py\n+++ b/a.py\n") and "+    del tape\n" in out
    assert (project / "a.py").read_text() == TAPE
    (project / "a.py").write_text(TAPE_FIXED)
    assert main(["--confidence", "low", "a.py", "--isolated", "--extend-select", "TFM401", "--diff"]) == 0
    assert capsys.readouterr().out == ""


def test_stdin_is_fixed_to_stdout(monkeypatch, capsys):
    _need("TFM401")
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(TAPE.encode())))
    assert main(["--confidence", "low", "-", "--isolated", "--extend-select", "TFM401", "--fix"]) == 0
    assert capsys.readouterr().out == TAPE_FIXED


def test_unsafe_fixes_alone_is_a_usage_error(capsys):
    assert main(["--confidence", "low", "--unsafe-fixes", "--isolated", "nothing.py"]) == 2
    assert "--unsafe-fixes goes with --fix or --diff" in capsys.readouterr().err


def test_the_encoding_and_line_endings_are_kept(project):
    _need("TFM401")
    source = ("# -*- coding: latin-1 -*-\n# caf\xe9\n" + TAPE).replace("\n", "\r\n")
    (project / "a.py").write_bytes(source.encode("latin-1"))
    main(["--confidence", "low", "a.py", "--isolated", "--extend-select", "TFM401", "--fix"])
    raw = (project / "a.py").read_bytes()
    assert raw.decode("latin-1") == ("# -*- coding: latin-1 -*-\n# caf\xe9\n" + TAPE_FIXED).replace("\n", "\r\n")


# -- # noqa -----------------------------------------------------------------------------------

SESSION = """import tensorflow as tf

KEPT = []
for _ in range(100):
    sess = tf.compat.v1.Session()
    sess.run(y)
    KEPT.append(sess){comment}
"""


def _fixed(source, code):
    return fix_text(source, [code], EVERY_GRADE, unsafe=True, unmeasured=True)


def test_a_line_with_a_matching_noqa_is_never_touched():
    # the finding's own line: silenced, so nothing is fixed
    silenced = TAPE.replace("as tape:", "as tape:  # noqa: TFM401")
    assert _fixed(silenced, "TFM401").text == silenced
    # another line the fix would rewrite (the with block re-indents the rest of the loop body)
    plain = SESSION.format(comment="")
    assert "with tf.compat.v1.Session() as sess:" in _fixed(plain, "TFM201").text
    for comment in ("  # noqa: TFM201", "  # noqa", "  # noqa: TFM2"):
        guarded = SESSION.format(comment=comment)
        assert _fixed(guarded, "TFM201").text == guarded, comment
    other = SESSION.format(comment="  # noqa: E501")  # a noqa for another code does not hold it
    assert "with tf.compat.v1.Session() as sess:" in _fixed(other, "TFM201").text
    assert "KEPT.append(sess)  # noqa: E501" in _fixed(other, "TFM201").text


def test_a_fix_that_does_not_remove_its_finding_is_not_kept():
    from tf_memlint.fixes.base import Edit, Site
    from tf_memlint.rule import Diagnostic

    def lint(text):  # the finding stays whatever the fix writes
        return [Diagnostic(5, 4, "TFM401", "stays")]

    class Noop:
        @staticmethod
        def fix(site: Site, finding):
            return Edit(site.module.with_changes(header=[*site.module.header]), SAFE)

    import tf_memlint.fixes.driver as driver
    original = driver.fix_module
    driver.fix_module = lambda code: Noop
    try:
        assert fix_text(TAPE, ["TFM401"], EVERY_GRADE, unmeasured=True, lint=lint).applied == []
    finally:
        driver.fix_module = original


def test_tfm401_is_unsafe_where_the_scope_is_read_by_locals():
    source = TAPE.replace("    return x\n", "    return locals()\n")
    assert _fixed(source, "TFM401").applied
    assert not fix_text(source, ["TFM401"], EVERY_GRADE, unsafe=False, unmeasured=True).applied
    assert fix_text(TAPE, ["TFM401"], EVERY_GRADE, unsafe=False, unmeasured=True).applied


# -- pages and registry -----------------------------------------------------------------------

FIX_LINE = re.compile(r"^Fix: (safe|unsafe|none), because .+", re.M)


@pytest.mark.parametrize("code", list(all_rules()))
def test_every_rule_page_says_whether_it_has_a_fix(code):
    found = FIX_LINE.findall(rule_page(code).read_text(encoding="utf-8"))
    assert len(found) == 1, f"{code}: one line 'Fix: safe / unsafe / none, because ...'"
    if code not in FIXABLE:
        assert found == ["none"]
    else:
        assert found == [fix_module(code).APPLICABILITY]
        assert fix_module(code).APPLICABILITY in (SAFE, UNSAFE)


def test_the_recorded_measurement_is_of_todays_fixes():
    """measured.json decides what ships: it must hold a verdict for every claim of every fix and
    the hash of the fixed text that was measured (a changed fix must be measured again:
    `python -m tf_memlint.fixes.measure TFMnnn`)."""
    record = measured()
    assert set(record) == set(FIXABLE)
    for code in FIXABLE:
        for bad in sorted((FIXTURES / code).glob("bad_measured*.py")):
            assert record[code]["fixed_sha256"][bad.name] == digest(fixed_source(bad)), (
                f"{code}: the fix of {bad.name} changed since it was measured")
        assert shipped(code) == all(v == "CONFIRMED" for v in record[code]["claims"].values())


def test_pyproject_ships_the_record():
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert '"tf_memlint.fixes" = ["measured.json"]' in text


# -- measured under real TensorFlow -----------------------------------------------------------

def _measure(tmp_path, codes):
    from tf_memlint.verify import command

    out = tmp_path / "fixes.json"
    command.run(["--fixes", *codes, "--format", "json", "-o", str(out), "--no-progress"])
    return {claim["id"]: claim for claim in json.loads(out.read_text())["claims"]}


@pytest.mark.skipif(not HAS_TF, reason="tensorflow is not installed")
def test_a_fix_measured_like_the_good_fixture(tmp_path):
    """One fast fix in the normal suite (deterministic signal, seconds): TFM406's compile hoisted
    out of the loop traces the train function once, like the good fixture."""
    claims = _measure(tmp_path, ["TFM406"])
    assert claims["TFM406-fix"]["verdict"] == "CONFIRMED", claims
    assert claims["TFM406-fix"]["verdict"] == measured()["TFM406"]["claims"]["TFM406-fix"]
    series = claims["TFM406-fix"]["series"]
    assert series["good"][0] == series["good"][-1] < series["bad"][-1]


@pytest.mark.slow
@pytest.mark.skipif(not HAS_TF, reason="tensorflow is not installed")
def test_every_fix_measured_as_recorded(tmp_path):
    """Every fix measured again: each verdict is the recorded one (a fix ships on CONFIRMED)."""
    claims = _measure(tmp_path, list(FIXABLE))
    recorded = {cid: verdict for entry in measured().values() for cid, verdict in entry["claims"].items()}
    assert {cid: c["verdict"] for cid, c in claims.items()} == recorded


# -- cases met on the development corpus ------------------------------------------------------

def test_tfm404_keeps_the_call_layout_and_leaves_unpacked_results():
    source = """import numpy as np
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
for i in range(100):
    p = model.predict(
        np.ones((1, 4)))
    a, b = model.predict(np.ones((1, 4)), verbose=0)
"""
    text = _fixed(source, "TFM404").text
    assert "    p = model(\n        np.ones((1, 4)), training=False).numpy()\n" in text
    assert "a, b = model.predict(np.ones((1, 4)), verbose=0)" in text  # two outputs: no .numpy()


def test_tfm403_names_keras_with_an_import_that_has_run():
    source = """from tensorflow.keras.models import Sequential
from tensorflow.keras.layers import Dense

for trial in range(100):
    model = Sequential([Dense(1)])

import tensorflow.keras.initializers
"""
    text = _fixed(source, "TFM403").text
    # `tensorflow` is bound only below the loop: the fix imports keras after the first Keras import
    assert text.startswith("from tensorflow.keras.models import Sequential\nfrom tensorflow import keras\n")
    assert "for trial in range(100):\n    keras.backend.clear_session()\n" in text


def test_the_readme_diff_example_is_what_the_command_prints(project, capsys):
    _need("TFM406")
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    example = re.search(r"```text\n\$ tf-memlint train.py --diff --unsafe-fixes\n(.*?)```", readme, re.S).group(1)
    source = (FIXTURES / "TFM406" / "bad_measured.py").read_text(encoding="utf-8")
    (project / "train.py").write_text(source.replace("  # expect: TFM406", ""))
    assert main(["--confidence", "low", "train.py", "--diff", "--unsafe-fixes"]) == 1
    assert capsys.readouterr().out == example


def test_a_file_that_cannot_be_fixed_is_named_and_the_others_are_fixed(project, capsys, monkeypatch):
    _need("TFM401")
    (project / "a.py").write_text(TAPE)
    (project / "b.py").write_text(TAPE)
    import tf_memlint.fixes.tfm401 as tfm401

    real = tfm401.fix

    def broken_on_b(site, finding):
        if "b_marker" in site.module.code:
            raise ValueError("a bug in a fix")
        return real(site, finding)

    monkeypatch.setattr(tfm401, "fix", broken_on_b)
    (project / "b.py").write_text(TAPE + "# b_marker\n")
    assert main(["--confidence", "low", "a.py", "b.py", "--isolated", "--extend-select", "TFM401", "--diff"]) == 2
    captured = capsys.readouterr()
    assert "+++ b/a.py" in captured.out and "b.py" not in captured.out
    assert "b.py: error: not fixed: TFM000 internal error: ValueError: a bug in a fix" in captured.err


# -- where a rewrite would change what the code means, none is offered ------------------------

def test_tfm201_closes_an_interactive_session_in_finally_and_never_with():
    source = """import tensorflow.compat.v1 as tf


def shells(xs):
    for x in xs:
        sess = tf.InteractiveSession()
        print(sess.run(x))
"""
    text = _fixed(source, "TFM201").text
    # InteractiveSession has no __enter__: a with block would raise
    assert "with tf.InteractiveSession()" not in text
    assert "        try:\n            print(sess.run(x))\n        finally:\n            sess.close()\n" in text


def test_tfm201_leaves_a_session_used_after_the_loop_or_handed_on():
    used_after = """import tensorflow.compat.v1 as tf


def shells(xs):
    for x in xs:
        sess = tf.InteractiveSession()
        sess.run(x)
    return sess.run(xs[0])
"""
    handed_on = used_after.replace("    return sess.run(xs[0])\n", "").replace(
        "        sess.run(x)\n", "        RUNNERS.append(Runner(sess))\n")
    for source in (used_after, handed_on):
        assert _fixed(source, "TFM201").text == source


def test_tfm201_gives_no_close_method_to_a_class_whose_objects_are_kept():
    source = """import tensorflow.compat.v1 as tf


class Agent:
    def __init__(self, graph):
        self.sess = tf.InteractiveSession(graph=graph)


def population(graphs):
    agents = []
    for g in graphs:
        agents.append(Agent(g))
    return agents
"""
    assert _fixed(source, "TFM201").text == source


def test_tfm401_renews_no_tape_entered_under_a_loop_of_the_method():
    source = """import tensorflow as tf


class Accumulator:
    def __init__(self):
        self._tape = tf.GradientTape(persistent=True)

    def step(self, batches, w):
        loss = 0.0
        for x in batches:
            with self._tape:
                loss += tf.reduce_sum(x * w)
        return self._tape.gradient(loss, w)


def run(batches, w):
    acc = Accumulator()
    for _ in range(100):
        acc.step(batches, w)
"""
    # the tape records every micro-batch of one step: a new tape per `with` would lose them
    assert "self._tape = tf.GradientTape" not in _fixed(source, "TFM401").text.split("def step", 1)[1]


def test_tfm402_wraps_no_loss_object_that_keeps_one_loss_per_example():
    source = """import tensorflow as tf

loss_fn = tf.keras.losses.MeanSquaredError(reduction="none")


def fit(dataset, model, optimizer):
    losses = []
    for x, y in dataset:
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        losses.append(loss)
    return losses
"""
    assert "float(" not in _fixed(source, "TFM402").text
    scalar = source.replace('reduction="none"', "")
    assert "losses.append(float(loss))" in _fixed(scalar, "TFM402").text


def test_tfm403_loads_once_only_what_does_not_depend_on_the_request_and_is_not_trained():
    source = """from flask import Flask, request
from tensorflow import keras

app = Flask(__name__)


@app.post("/classify")
def classify():
    model = keras.models.load_model({path})
    {use}
"""
    hoisted = source.format(path='"classifier.h5"', use='return model(request.json["x"])')
    text = _fixed(hoisted, "TFM403").text
    assert 'CLASSIFY_MODEL = keras.models.load_model("classifier.h5")\n\n\n@app.post' in text
    assert "    model = CLASSIFY_MODEL\n" in text
    for path, use in (('request.json["path"]', 'return model(request.json["x"])'),  # per request
                      ('"classifier.h5"', 'model.fit(request.json["x"], request.json["y"])')):  # trained
        source_ = source.format(path=path, use=use)
        assert _fixed(source_, "TFM403").text == source_


def test_tfm404_in_a_helper_leaves_a_predict_given_its_batch_size():
    source = """import numpy as np
from tensorflow import keras

model = keras.Sequential([keras.layers.Dense(2)])


def score(x):
    return model.predict(x, batch_size=256)


def score_all(items):
    for item in items:
        score(item)
"""
    assert _fixed(source, "TFM404").text == source
