"""Every finding is graded by its evidence (evidence.py) and its projected cost (grading.py).

These tests lint small programs through the command's path and check the grade and the words
the message gives, one evidence kind at a time; each has a look-alike that must grade otherwise.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from conftest import FIXTURES, REPO, expectations
from tf_memlint.files import lint_file
from tf_memlint.grading import unit_costs
from tf_memlint.resources import rule_page
from tf_memlint.rule import all_rules

PREDICT = """\
import numpy as np
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
{loop}
    frame = np.random.rand(1, 4)
    model.predict(frame)
"""


def _graded(lint, source, code, **settings):
    found = [d for d in lint(source, **settings) if d.code == code]
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize("loop, confidence, words", [
    ("while True:", "high", "unbounded: while True"),
    ("for step in range(100000):", "high", "100,000 iterations (range(100000))"),
    ("for image in images:", "high", "per item: images"),  # data, by its name: as telling as range(steps)
    ("for name in os.listdir(folder):", "medium", "per item: os.listdir(folder)"),  # a handful, or thousands
    ("for batch in dataset:", "high", "per item: dataset"),
    ("for step in range(steps):", "high", "per step: range(steps)"),
    ("for epoch in range(epochs):", "medium", "per epoch: range(epochs)"),  # tens to hundreds of times
    ("for k in range(num_models):", "low", "unknown: range(num_models)"),  # nobody can size it
    ("for t in range(len(series) - window):", "high", "per item: range(len(series) - window)"),
])
def test_repetition_sets_the_grade(lint, loop, confidence, words):
    source = PREDICT.format(loop=loop)
    if "images" in loop:
        source = source.replace("model = ", "images = load_images()\nmodel = ")
    if "os." in loop:
        source = "import os\n" + source
    if "dataset" in loop:
        source = source.replace("model = ", "dataset = tf.data.Dataset.range(10**6).map(tf.sin)\nmodel = ")
    finding = _graded(lint, source, "TFM404")
    assert finding.confidence == confidence
    assert finding.evidence.startswith(words), finding.evidence
    assert f"[{words}" in finding.message


def test_a_projected_cost_below_the_threshold_grades_low(lint):
    if "TFM404" not in unit_costs():
        pytest.skip("no unit cost measured for TFM404")
    few = _graded(lint, PREDICT.format(loop="for i in range(12):"), "TFM404")
    many = _graded(lint, PREDICT.format(loop="for i in range(5000):"), "TFM404")
    assert few.confidence == "low" and many.confidence == "high"
    assert many.cost.startswith("at least ~") and "over 5,000 calls" in many.cost
    # the threshold is a setting: lower it and the short loop counts
    half_of_twelve_calls = 12 * unit_costs()["TFM404"]["value"] / 2
    cheap = _graded(lint, PREDICT.format(loop="for i in range(12):"), "TFM404", min_time_cost=half_of_twelve_calls)
    assert cheap.confidence == "high"


def test_test_code_grades_low(lint, tmp_path):
    source = PREDICT.format(loop="while True:")
    in_test_function = source.replace("while True:", "def test_serving():\n  while True:").replace(
        "\n    frame", "\n      frame").replace("\n    model.predict", "\n      model.predict")
    assert _graded(lint, in_test_function, "TFM404").confidence == "low"
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "serve_check.py").write_text("import pytest\n" + source)
    result = lint_file(str(tests / "serve_check.py"), ["TFM404"], {"confidence": "low"})
    assert [d.confidence for d in result.findings] == ["low"]
    assert "test code (test file)" in result.findings[0].message


def test_a_script_named_like_a_test_is_a_program_unless_it_holds_tests_or_is_configured(tmp_path):
    """An evaluation script named test_model.py that plays its model over a webcam is a program;
    the same name holding a test function, or matched by the user's test-paths, is test code."""
    source = PREDICT.format(loop="while True:")
    script = tmp_path / "test_model.py"
    script.write_text(source)
    assert [d.confidence for d in lint_file(str(script), ["TFM404"], {"confidence": "low"}).findings] == ["high"]
    script.write_text(source + "\n\ndef test_shapes():\n    assert model.output_shape == (None, 1)\n")
    assert [d.confidence for d in lint_file(str(script), ["TFM404"], {"confidence": "low"}).findings] == ["low"]
    script.write_text(source)
    configured = {"confidence": "low", "test_paths": [str(tmp_path / "*.py")]}
    found = lint_file(str(script), ["TFM404"], configured).findings
    assert [d.confidence for d in found] == ["low"], found


def test_a_request_handler_repeats_per_request(lint):
    source = """\
import flask
import tensorflow as tf

app = flask.Flask(__name__)
model = tf.keras.models.load_model("m.h5")


@app.route("/predict", methods=["POST"])
def predict():
    return str(model.predict(flask.request.json["x"]))
"""
    finding = _graded(lint, source, "TFM404")
    assert finding.confidence == "high"
    assert finding.evidence.startswith("per request: predict() handles requests")


def test_the_default_shows_high_only_and_confidence_shows_more(lint):
    source = "import os\n" + PREDICT.format(loop="for name in os.listdir(folder):")
    assert [d for d in lint(source, confidence="high") if d.code == "TFM404"] == []
    assert [d.confidence for d in lint(source, confidence="medium") if d.code == "TFM404"] == ["medium"]


def test_the_seed_articles_examples_are_reported_by_default():
    """The five founding patterns' examples (fixtures/seeds) at the default settings; the myths
    among them stay silent."""
    seeds = sorted((FIXTURES / "seeds").glob("*.py"))
    assert seeds
    for path in seeds:
        result = lint_file(str(path), [c for c, r in all_rules().items() if r.default_enabled], {})
        found = {(d.line, d.code) for d in result.findings}
        assert found == {(line, code) for line, code, _ in expectations(path)}, path


def test_unit_costs_are_the_figures_the_pages_quote():
    """grading's table is written by the evidence run (verify --costs): each rule's unit cost is
    its claim's bad slope, and the rule's page quotes the same figure from the same run."""
    table = unit_costs()
    assert table, "tf_memlint/unit_costs.json is missing: run verify --costs"
    for code, cost in table.items():
        assert code in all_rules()
        assert cost["value"] > 0 and cost["per"]
        page = rule_page(code).read_text(encoding="utf-8")
        assert f'unit_cost = "{cost["per"]}"' in page, code
        measured = re.search(rf"Measured by `tf-memlint verify {re.escape(cost['claim'])}`[^\n]*", page)
        assert measured and cost["quoted"] in measured.group(0), (code, cost["quoted"])


def test_a_one_sample_payload_is_stated_and_does_not_size_a_folder(lint):
    """Per item of data (a list named images) is high whatever the payload; predicting on one
    sample of it per iteration (``image[None]``) is said in the evidence. Per file of a folder it
    settles nothing (the folder may hold a handful): medium either way."""
    source = PREDICT.format(loop="for image in images:").replace("model = ", "images = load_images()\nmodel = ")
    assert _graded(lint, source, "TFM404").confidence == "high"
    one = source.replace("model.predict(frame)", "model.predict(image[None])")
    finding = _graded(lint, one, "TFM404")
    assert finding.confidence == "high" and "one sample per call" in finding.evidence
    batch = source.replace("model.predict(frame)", "model.predict(np.stack(images))")
    assert "one sample per call" not in _graded(lint, batch, "TFM404").evidence
    folder = "import os\n" + PREDICT.format(loop="for name in os.listdir(folder):").replace(
        "model.predict(frame)", "model.predict(np.load(name)[None])")
    assert _graded(lint, folder, "TFM404").confidence == "medium"


def test_json_and_sarif_carry_the_grade(tmp_path):
    path = tmp_path / "serve.py"
    path.write_text(PREDICT.format(loop="while True:"))
    out = subprocess.run([sys.executable, "-m", "tf_memlint", str(path), "--isolated", "--format", "json"],
                         capture_output=True, text=True, cwd=REPO)
    finding = json.loads(out.stdout)["findings"][0]
    assert finding["confidence"] == "high" and finding["evidence"] == "unbounded: while True"
    out = subprocess.run([sys.executable, "-m", "tf_memlint", str(path), "--isolated", "--format", "sarif"],
                         capture_output=True, text=True, cwd=REPO)
    result = json.loads(out.stdout)["runs"][0]["results"][0]
    assert result["rank"] == 90.0 and result["level"] == "warning"
    assert result["properties"]["confidence"] == "high"


@pytest.mark.parametrize("after, confidence", [
    ("    break", "low"),                       # the loop ends once the model has predicted
    ("    if frame.sum() > 2:\n        break", "high"),  # it may go on: still unbounded
    ("    for _ in range(3):\n        break", "high"),  # a break of an inner loop ends that loop
    ("    raise SystemExit", "low"),
])
def test_a_loop_that_ends_after_the_place_does_not_repeat_it(lint, after, confidence):
    source = PREDICT.format(loop="while True:") + after + "\n"
    finding = _graded(lint, source, "TFM404")
    assert finding.confidence == confidence, finding.message


def test_what_a_place_that_runs_once_holds_is_its_cost():
    """A rule that reads off the code what its finding holds (an embedded array's bytes) has the
    cost of a place that runs once: below the memory threshold it grades low, as a bounded
    repetition does; in a notebook kernel the threshold is lower; an unknown size keeps the
    rule's own grade."""
    from dataclasses import replace

    from tf_memlint.evidence import NOTEBOOK, ONCE_HERE, PROGRAM, Evidence
    from tf_memlint.grading import grade
    once = Evidence(ONCE_HERE, PROGRAM, held_bytes=3_000_000)
    assert grade("TFM106", once, "high").confidence == "low"
    assert grade("TFM106", replace(once, held_bytes=400_000_000), "high").confidence == "high"
    assert grade("TFM106", replace(once, lifetime=NOTEBOOK, held_bytes=8_000_000), "high").confidence == "high"
    assert grade("TFM106", replace(once, held_bytes=None), "high").confidence == "high"
