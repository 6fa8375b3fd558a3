"""Tests of the runtime verifier (tf_memlint.verify).

The unit tests need no TensorFlow. The integration tests run real `tensorflow-cpu` in
subprocesses (no mocks): a couple of shipped claims, one myth, a claim directory written from
scratch, and three broken fixtures that must give ERROR. The full run of every shipped claim is
marked `slow` (deselected by default; run it with `-m slow`): it takes minutes.
"""

from __future__ import annotations

import importlib.util
import json
import re
import time
from pathlib import Path

import pytest

from tf_memlint.verify import claims as claims_mod
from tf_memlint.verify import command
from tf_memlint.verify.claims import Check, ClaimError, parse_claims, replace_claim_section
from tf_memlint.verify.runner import Run, Task
from tf_memlint.verify.verdict import evaluate, slope

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "verify_data"
HAS_TF = importlib.util.find_spec("tensorflow") is not None
needs_tf = pytest.mark.skipif(not HAS_TF, reason="tensorflow is not installed")

PAGE = """# TFM999

Some prose written by someone else.

## Claim

```toml claim
statement = "bad grows, good does not"
signal = "graph_nodes"
sizes = [10, 100]
bad = "bad.py"
good = "good.py"

[[check]]
quantity = "bad_slope"
at_least = 1.0
refuted_below = 0.5

[[check]]
quantity = "good_slope"
at_most = 0.01
refuted_above = 0.5
```
"""


# ----------------------------------------------------------------------------- claims as data


def test_parse_page_claim(tmp_path):
    page = tmp_path / "TFM999.md"
    page.write_text(PAGE)
    (tmp_path / "bad.py").write_text("")
    (tmp_path / "good.py").write_text("")
    [claim] = parse_claims(PAGE, page, [tmp_path])
    assert claim.id == "TFM999"
    assert claim.kind == "rule" and claim.expect == "CONFIRMED"
    assert claim.bad == (tmp_path / "bad.py").resolve()
    assert [c.quantity for c in claim.checks] == ["bad_slope", "good_slope"]
    assert claim.repeats == 1  # graph_nodes is deterministic


def test_page_without_claim_section_has_no_claim(tmp_path):
    assert parse_claims("# TFM999\n\n## The claim\nprose only\n", tmp_path / "x.md", []) == []


def test_myth_defaults_to_refuted_and_noisy_signal_repeats(tmp_path):
    myths = tmp_path / "myths"
    myths.mkdir()
    text = PAGE.replace('signal = "graph_nodes"', 'signal = "rss"')
    [claim] = parse_claims(text, myths / "some-myth.md", [])
    assert claim.kind == "myth" and claim.expect == "REFUTED" and claim.repeats == 3


def test_several_claims_on_one_page(tmp_path):
    text = """## Claim

```toml claim
[[claim]]
id = "A"
statement = "s"
signal = "exception"
sizes = [1]
bad = "b.py"
good = "g.py"
[[claim.check]]
quantity = "bad"
equals = "ValueError"

[[claim]]
statement = "t"
signal = "traces"
sizes = [1, 2]
bad = "b.py"
good = "g.py"
[[claim.check]]
quantity = "good"
at_most = 1
```
"""
    a, b = parse_claims(text, tmp_path / "P.md", [])
    assert a.id == "A" and b.id == "P-2"


@pytest.mark.parametrize("mutation, message", [
    (('signal = "graph_nodes"', 'signal = "vibes"'), "signal must be one of"),
    (("quantity = \"bad_slope\"", "quantity = \"nonsense\""), "quantity must be one of"),
    (("sizes = [10, 100]", "sizes = [10]"), "slope needs at least two sizes"),
    (("at_least = 1.0\n", "at_least = 1.0\nat_most = 2.0\n"), "exactly one of"),
    (('statement = "bad grows, good does not"\n', 'statment = "typo"\n'), "unknown key"),
    (("[[check]]", "[[check]"), "not valid TOML"),
])
def test_invalid_claims_are_rejected_with_a_reason(tmp_path, mutation, message):
    text = PAGE.replace(*mutation, 1)
    with pytest.raises(ClaimError, match=message):
        parse_claims(text, tmp_path / "TFM999.md", [])


def test_replace_claim_section_keeps_the_prose():
    prose = "# TFM999\n\nWhat it does.\n\n## References\n- a link\n"
    once = replace_claim_section(prose, 'statement = "x"')
    assert once.startswith(prose)
    assert "```toml claim\nstatement = \"x\"\n```" in once
    twice = replace_claim_section(once, 'statement = "y"')
    assert twice.startswith(prose) and 'statement = "y"' in twice and '"x"' not in twice
    assert twice.count("## Claim") == 1


# ----------------------------------------------------------------------------- verdicts


def _claim(tmp_path, checks, sizes=(1, 2, 3), signal="graph_nodes"):
    c = parse_claims(PAGE, tmp_path / "TFM999.md", [])[0]
    c.sizes = list(sizes)
    c.signal = signal
    c.checks = checks
    return c


def _runs(claim, bad, good):
    runs = []
    for i, size in enumerate(claim.sizes):
        runs.append(Run(Task(claim, "bad", size, 0), value=bad[i]))
        runs.append(Run(Task(claim, "good", size, 0), value=good[i]))
    return runs


def test_slope():
    assert slope([10, 100, 1000], [52, 502, 5002]) == pytest.approx(5.0)
    assert slope([1, 2], [7, 7]) == 0


def test_verdicts_confirmed_refuted_inconclusive_error(tmp_path):
    checks = [Check("bad_slope", at_least=1.0, refuted_below=0.5),
              Check("good_slope", at_most=0.01, refuted_above=0.5)]
    c = _claim(tmp_path, checks)
    r = evaluate(c, _runs(c, [10, 20, 30], [5, 5, 5]))
    assert r.verdict == "CONFIRMED" and "cleared by" in r.checks[0].margin
    assert evaluate(c, _runs(c, [5, 5, 5], [5, 5, 5])).verdict == "REFUTED"
    assert evaluate(c, _runs(c, [5, 5.7, 6.4], [5, 5, 5])).verdict == "INCONCLUSIVE"
    runs = _runs(c, [10, 20, 30], [5, 5, 5])
    runs[0].value, runs[0].error = None, "timed out after 5 s"
    r = evaluate(c, runs)
    assert r.verdict == "ERROR" and "timed out" in r.errors[0]


def test_ratio_uses_the_worst_size_and_medians_of_repeats(tmp_path):
    c = _claim(tmp_path, [Check("ratio", at_least=4, refuted_below=1.5)], sizes=(1, 2))
    runs = _runs(c, [100, 100], [10, 50])
    assert evaluate(c, runs).verdict == "INCONCLUSIVE"  # 100/50 = 2: neither >= 4 nor < 1.5
    c.repeats = 3
    runs = [Run(Task(c, "bad", 1, i), value=v) for i, v in enumerate([100, 1000, 90])]
    runs += [Run(Task(c, "good", 1, i), value=v) for i, v in enumerate([10, 10, 500])]
    c.sizes = [1]
    r = evaluate(c, runs)
    assert r.series == {"bad": [100], "good": [10]} and r.verdict == "CONFIRMED"


def test_exception_checks(tmp_path):
    c = _claim(tmp_path, [Check("bad", equals="InaccessibleTensorError"), Check("good", equals="none")],
               sizes=(10,), signal="exception")
    assert evaluate(c, _runs(c, ["InaccessibleTensorError"], ["none"])).verdict == "CONFIRMED"
    assert evaluate(c, _runs(c, ["none"], ["none"])).verdict == "REFUTED"


# ----------------------------------------------------------------------------- fixtures and pages


def _shipped():
    dirs, roots = command.shipped_dirs()
    return claims_mod.discover(dirs, roots)


EXPECT = re.compile(r"#\s*expect:\s*(TFM\d{3})")


def test_shipped_claims_cover_every_rule_and_myth():
    shipped = _shipped()
    rules = {c.id.split("-")[0] for c in shipped if c.kind == "rule"}
    assert rules >= {"TFM101", "TFM102", "TFM103", "TFM104", "TFM105", "TFM106", "TFM201",
                     "TFM202", "TFM301", "TFM401", "TFM402", "TFM403", "TFM404"}
    myths = [c for c in shipped if c.kind == "myth"]
    assert len(myths) == 5 and all(c.expect == "REFUTED" for c in myths)
    for c in shipped:
        assert c.bad.is_file() and c.good.is_file(), c.id


def test_measured_fixtures_carry_the_right_markers():
    for c in _shipped():
        bad, good = c.bad.read_text(), c.good.read_text()
        assert "def workload(" in bad and "def workload(" in good
        assert not EXPECT.search(good), f"{c.good} must lint silent"
        if c.kind == "myth":
            assert not EXPECT.search(bad), f"{c.bad}: myth fixtures must lint silent"
        else:
            code = c.id.split("-")[0]
            assert code in EXPECT.findall(bad), f"{c.bad} must expect {code}"


def test_verify_without_tensorflow_says_how_to_install(monkeypatch, capsys):
    real = importlib.util.find_spec
    monkeypatch.setattr(command.importlib.util, "find_spec",
                        lambda name, *a: None if name == "tensorflow" else real(name, *a))
    assert command.run(["TFM101"]) == 2
    assert "pip install 'tf-memlint[verify]'" in capsys.readouterr().err


def test_the_parent_never_imports_tensorflow():
    import subprocess
    import sys

    code = ("import sys; from tf_memlint.verify import command, runner, verdict, report, claims; "
            "command.run(['--list']); print('tensorflow' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         check=True).stdout
    assert out.strip().splitlines()[-1] == "False"


# ----------------------------------------------------------------------------- real TensorFlow


def _verify_json(tmp_path, argv):
    out = tmp_path / "report.json"
    rc = command.run([*argv, "--format", "json", "-o", str(out), "--no-progress"])
    return rc, json.loads(out.read_text())


@needs_tf
def test_shipped_rules_and_a_myth_under_real_tensorflow(tmp_path):
    rc, report = _verify_json(tmp_path, ["TFM101", "TFM104", "naming-intermediates-in-tf-function",
                                         "--jobs", "2", "--plots", str(tmp_path / "plots")])
    verdicts = {c["id"]: c["verdict"] for c in report["claims"]}
    assert verdicts == {"TFM101": "CONFIRMED", "TFM104": "CONFIRMED",
                        "naming-intermediates-in-tf-function": "REFUTED"}, report["claims"]
    assert rc == 0 and report["ok"]
    tfm101 = next(c for c in report["claims"] if c["id"] == "TFM101")
    assert tfm101["series"]["good"][0] == tfm101["series"]["good"][-1]  # tf.range: constant graph
    assert tfm101["series"]["bad"][-1] > 10 * tfm101["series"]["bad"][0]  # unrolled
    assert report["tensorflow"]
    assert sorted(p.name for p in (tmp_path / "plots").glob("*.png")) == [
        "TFM101.png", "TFM104.png", "naming-intermediates-in-tf-function.png"]


@needs_tf
def test_a_claim_directory_written_from_scratch(tmp_path):
    rc, report = _verify_json(tmp_path, ["--claims", str(DATA / "scratch_claims")])
    [claim] = report["claims"]
    assert claim["id"] == "reduce-retracing"
    assert claim["verdict"] == "CONFIRMED", claim
    assert claim["series"]["bad"] == [3, 12] and claim["series"]["good"] == [1, 1]
    assert rc == 0


@needs_tf
def test_one_new_interpreter_per_measurement_gives_the_same_numbers(tmp_path):
    _, forked = _verify_json(tmp_path, ["--claims", str(DATA / "scratch_claims")])
    rc, fresh = _verify_json(tmp_path, ["--claims", str(DATA / "scratch_claims"), "--no-fork"])
    assert rc == 0
    assert fresh["claims"][0]["series"] == forked["claims"][0]["series"]
    assert fresh["claims"][0]["verdict"] == "CONFIRMED"


@needs_tf
def test_broken_fixtures_give_error_and_the_others_still_run(tmp_path):
    t0 = time.monotonic()
    rc, report = _verify_json(tmp_path, ["--claims", str(DATA / "error_claims"), "--jobs", "2"])
    elapsed = time.monotonic() - t0
    by_id = {c["id"]: c for c in report["claims"]}
    assert by_id["healthy"]["verdict"] == "CONFIRMED", by_id["healthy"]
    for name in ("sleeps-forever", "unbounded-allocation", "syntax-error"):
        assert by_id[name]["verdict"] == "ERROR", by_id[name]
    assert "timed out after 20 s" in by_id["sleeps-forever"]["errors"][0]
    assert "out of memory" in by_id["unbounded-allocation"]["errors"][0]
    assert "SyntaxError" in by_id["syntax-error"]["errors"][0]
    assert rc == 1  # ERROR is not the expected verdict
    assert elapsed < 120  # the sleeper was killed, not waited for


@pytest.mark.slow
@needs_tf
def test_full_verify_every_rule_confirmed_every_myth_refuted(tmp_path):
    t0 = time.monotonic()
    rc, report = _verify_json(tmp_path, ["--jobs", "2"])
    bad = [(c["id"], c["verdict"]) for c in report["claims"] if not c["as_expected"]]
    assert rc == 0 and not bad, bad
    assert time.monotonic() - t0 < 600
