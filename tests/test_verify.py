"""Tests of the runtime verifier (tf_memlint.verify).

The unit tests need no TensorFlow. The integration tests run real `tensorflow-cpu` in
subprocesses (no mocks): a couple of shipped claims, one myth, a claim directory written from
scratch, every verdict path on fixtures that must not pass, invalid claim files next to a healthy
one, broken fixtures that must give ERROR, and every shipped claim on a fixture that measures
nothing (none may come out CONFIRMED or REFUTED). The full run of every shipped claim is marked
`slow` (deselected by default; run it with `-m slow`): it takes minutes.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import time
from pathlib import Path

import pytest

from tf_memlint.verify import claims as claims_mod
from tf_memlint.verify import command
from tf_memlint.verify.claims import (BrokenClaim, Check, ClaimError, claim_section_warning, discover_all,
                                      parse_claims, replace_claim_section)
from tf_memlint.verify.runner import Run, Task
from tf_memlint.verify.verdict import evaluate, needs_more, slope

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
    (("at_least = 1.0", 'at_least = "0.9"'),
     'at_least must be a number, got "0.9" .a string.; write at_least = 0.9'),
    (("sizes = [10, 100]", "sizes = [10, 100]\nrepeats = 0"), "repeats must be at least 1, got 0"),
    (("sizes = [10, 100]", "sizes = [10, 100]\nrepeats = 2.5"), "repeats must be an integer"),
    (("sizes = [10, 100]", "sizes = [10, 100]\ntimeout_s = -1"), "timeout_s must be greater than 0, got -1"),
    (("sizes = [10, 100]", "sizes = [10, 100]\nmemory_limit_mib = \"8G\""),
     "memory_limit_mib must be an integer"),
    (("sizes = [10, 100]", "sizes = [10, 100]\nrepeats = 3\nmax_repeats = 2"),
     "max_repeats .2. must not be below repeats .3."),
    (("sizes = [10, 100]", "sizes = [10, -100]"), "sizes must be numbers >= 0"),
    (("sizes = [10, 100]", "sizes = [10, 10]"), "sizes must be distinct"),
    (("sizes = [10, 100]", 'sizes = "10, 100"'), "sizes must be a non-empty list"),
    (('bad = "bad.py"', "bad = 3"), "bad must be a string"),
    (("sizes = [10, 100]", 'sizes = [10, 100]\nid = "has space"'), "id may hold"),
    (("sizes = [10, 100]", 'sizes = [10, 100]\nexpect = "confirmed"'), "expect must be one of"),
    (("refuted_below = 0.5", "refuted_below = 2.0"), "refuted_below .2. must not exceed at_least .1."),
    (("sizes = [10, 100]", 'sizes = [10, 100]\nquote = "{bad} {nonsense}"'), "quote uses unknown field"),
    (("[[check]]\nquantity = \"bad_slope\"",
      "[[premise]]\nquantity = \"bad\"\nsignal = \"vibes\"\nat_least = 1\n\n"
      "[[check]]\nquantity = \"bad_slope\""),
     "signal must be one of"),
    (("sizes = [10, 100]", 'sizes = [10, 100]\nrequires = "tpu"'),
     "requires: unknown requirement 'tpu' .known: 'gpu'."),
    (("sizes = [10, 100]", 'sizes = [10, 100]\nrequires = ["gpu", "GPU"]'),
     "requires: unknown requirement 'GPU'"),
    (("sizes = [10, 100]", "sizes = [10, 100]\nrequires = true"),
     "requires must be a string or a non-empty list of strings"),
    (("sizes = [10, 100]", "sizes = [10, 100]\nrequires = []"),
     "requires must be a string or a non-empty list of strings"),
    (("sizes = [10, 100]", 'sizes = [10, 100]\nrequires = "gpu"'),
     "a claim that requires a GPU must set default_premises = false"),
    (("sizes = [10, 100]", 'sizes = [10, 100]\nrequires = "gpu"\ndefault_premises = false\n'
                           "memory_limit_mib = 4096"),
     "memory_limit_mib does not apply to a claim that requires a GPU"),
    (('signal = "graph_nodes"', 'signal = "alloc_peak"\nrequires = "gpu"\ndefault_premises = false'),
     "signal 'alloc_peak' cannot be measured in a claim that requires a GPU"),
])
def test_invalid_claims_are_rejected_with_a_reason(tmp_path, mutation, message):
    text = PAGE.replace(*mutation, 1)
    with pytest.raises(ClaimError, match=message):
        parse_claims(text, tmp_path / "TFM999.md", [])


def test_requires_names_what_the_machine_must_have(tmp_path):
    gpu = PAGE.replace("sizes = [10, 100]", 'sizes = [10, 100]\nrequires = "gpu"\ndefault_premises = false')
    [claim] = parse_claims(gpu, tmp_path / "TFM999.md", [])
    assert claim.requires == ("gpu",) and claim.needs_gpu and claim.premises == []
    [listed] = parse_claims(gpu.replace('requires = "gpu"', 'requires = ["gpu", "gpu"]'), tmp_path / "TFM999.md", [])
    assert listed.requires == ("gpu",)
    [plain] = parse_claims(PAGE, tmp_path / "TFM999.md", [])
    assert plain.requires == () and not plain.needs_gpu


def test_a_claim_fence_without_the_claim_info_string_warns(tmp_path):
    text = PAGE.replace("```toml claim", "```toml")
    assert parse_claims(text, tmp_path / "TFM999.md", []) == []
    warning = claim_section_warning(text, tmp_path / "TFM999.md")
    assert "```toml" in warning and "toml claim" in warning
    assert claim_section_warning(PAGE, tmp_path / "TFM999.md") is None
    assert claim_section_warning("# no claim here\n", tmp_path / "x.md") is None


def test_one_bad_claim_file_is_an_error_of_that_claim_only():
    found = discover_all([DATA / "invalid_claims"], [])
    by_id = {c.id: c for c in found.claims}
    assert not isinstance(by_id["healthy"], BrokenClaim)
    for name, message in (("at-least-string", 'at_least must be a number, got "0.9"'),
                          ("repeats-zero", "repeats must be at least 1, got 0"),
                          ("timeout-negative", "timeout_s must be greater than 0, got -1")):
        assert isinstance(by_id[name], BrokenClaim) and message in by_id[name].error
        r = evaluate(by_id[name], [])
        assert r.verdict == "ERROR" and message in r.errors[0]
    assert any("fence-without-claim.md" in w and "toml claim" in w for w in found.warnings)


def test_replace_claim_section_keeps_the_prose():
    prose = "# TFM999\n\nWhat it does.\n\n## References\n- a link\n"
    once = replace_claim_section(prose, 'statement = "x"')
    assert once.startswith(prose)
    assert "```toml claim\nstatement = \"x\"\n```" in once
    twice = replace_claim_section(once, 'statement = "y"')
    assert twice.startswith(prose) and 'statement = "y"' in twice and '"x"' not in twice
    assert twice.count("## Claim") == 1


# ----------------------------------------------------------------------------- verdicts


def _claim(tmp_path, checks, sizes=(1, 2, 3), signal="graph_nodes", premises=()):
    c = parse_claims(PAGE, tmp_path / "TFM999.md", [])[0]
    c.sizes = list(sizes)
    c.signal = signal
    c.checks = checks
    c.premises = list(premises)
    return c


WORKED = {"tf_work": 1, "alloc_peak": 4096, "traces": 1, "seconds": 0.01}


def _runs(claim, bad, good, aux=WORKED):
    runs = []
    for i, size in enumerate(claim.sizes):
        runs.append(Run(Task(claim, "bad", size, 0), value=bad[i], aux=dict(aux)))
        runs.append(Run(Task(claim, "good", size, 0), value=good[i], aux=dict(aux)))
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


def test_ratio_uses_the_worst_size_and_decides_on_the_range_of_the_repeats(tmp_path):
    c = _claim(tmp_path, [Check("ratio", at_least=4, refuted_below=1.5)], sizes=(1, 2))
    runs = _runs(c, [100, 100], [10, 50])
    assert evaluate(c, runs).verdict == "INCONCLUSIVE"  # 100/50 = 2: neither >= 4 nor < 1.5
    c.repeats, c.sizes = 3, [1]
    runs = [Run(Task(c, "bad", 1, i), value=v) for i, v in enumerate([100, 110, 90])]
    runs += [Run(Task(c, "good", 1, i), value=v) for i, v in enumerate([10, 12, 11])]
    r = evaluate(c, runs)
    assert r.series == {"bad": [100], "good": [11]} and r.verdict == "CONFIRMED"
    assert r.checks[0].low == pytest.approx(90 / 12)
    # one repeat far off: the median would pass (100/10), but not every repeat agrees
    runs = [Run(Task(c, "bad", 1, i), value=v) for i, v in enumerate([100, 1000, 90])]
    runs += [Run(Task(c, "good", 1, i), value=v) for i, v in enumerate([10, 10, 500])]
    r = evaluate(c, runs)
    assert r.series == {"bad": [100], "good": [10]} and r.verdict == "INCONCLUSIVE"
    assert needs_more(c, runs)  # another repeat could decide it
    # from five repeats on, one outlier at each end is dropped from the range
    runs = [Run(Task(c, "bad", 1, i), value=v) for i, v in enumerate([100, 1000, 90, 95, 105])]
    runs += [Run(Task(c, "good", 1, i), value=v) for i, v in enumerate([10, 10, 500, 11, 12])]
    assert evaluate(c, runs).verdict == "CONFIRMED"


def test_zero_over_zero_is_not_one_and_negative_denominators_are_no_ratio(tmp_path):
    c = _claim(tmp_path, [Check("ratio", at_most=1.1, refuted_above=2)], sizes=(1, 2))
    r = evaluate(c, _runs(c, [0, 0], [0, 0]))
    assert r.verdict == "INCONCLUSIVE" and r.checks[0].outcome == "undefined"
    assert r.checks[0].value is None and "not positive" in r.checks[0].margin
    c = _claim(tmp_path, [Check("slope_ratio", at_least=5, refuted_below=2)], sizes=(1, 2))
    # the good slope came out slightly negative from noise: the ratio would be negative (REFUTED)
    r = evaluate(c, _runs(c, [1.0, 2.0], [0.0011, 0.0010]))
    assert r.verdict == "INCONCLUSIVE" and r.checks[0].outcome == "undefined"


def test_a_failed_premise_is_inconclusive_never_refuted(tmp_path):
    premise = Check("bad", at_least=1, signal="tf_work", why="the bad variant did TensorFlow work")
    c = _claim(tmp_path, [Check("bad_slope", at_least=1.0, refuted_below=0.5)], premises=[premise])
    idle = {"tf_work": 0, "alloc_peak": 0, "traces": 0, "seconds": 1e-6}
    r = evaluate(c, _runs(c, [0, 0, 0], [0, 0, 0], aux=idle))  # the check alone would say REFUTED
    assert r.verdict == "INCONCLUSIVE" and "premise not met" in r.reason
    assert r.checks[0].outcome == "fail" and r.premises[0].outcome == "fail"
    r = evaluate(c, _runs(c, [0, 0, 0], [0, 0, 0], aux={}))  # the premise's signal is missing
    assert r.verdict == "INCONCLUSIVE" and r.premises[0].outcome == "undefined"
    assert evaluate(c, _runs(c, [0, 0, 0], [0, 0, 0])).verdict == "REFUTED"  # the work was done


def _no_gpu_here():
    from tf_memlint.verify.requirements import gpu_missing

    missing = gpu_missing()
    if missing is None:
        pytest.skip("this machine has a GPU TensorFlow can use: GPU claims are measurable here")
    return missing


def test_a_gpu_claim_is_never_decided_where_there_is_no_gpu(tmp_path):
    """Whatever runs are handed to it (here: numbers that would confirm, then refute), a claim
    that requires a GPU is INCONCLUSIVE on a machine without one, and that is as expected."""
    _no_gpu_here()
    c = _claim(tmp_path, [Check("bad_slope", at_least=1.0, refuted_below=0.5)])
    c.requires = ("gpu",)
    for bad in ([10, 20, 30], [5, 5, 5]):
        r = evaluate(c, _runs(c, bad, [5, 5, 5]))
        assert r.verdict == "INCONCLUSIVE" and r.as_expected
        assert r.reason.startswith("not measurable here: needs a GPU (none visible")
        assert r.not_measurable == r.reason and r.runs == [] and r.checks == []
        assert not needs_more(c, r.runs)
    c.requires = ()
    assert evaluate(c, _runs(c, [10, 20, 30], [5, 5, 5])).verdict == "CONFIRMED"


def test_gpu_measurements_see_the_gpu_without_an_address_space_limit(tmp_path, monkeypatch):
    from tf_memlint.verify.runner import _spec, child_env, runs_alone

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    assert child_env()["CUDA_VISIBLE_DEVICES"] == ""  # CPU claims: no GPU
    assert child_env(gpu=True)["CUDA_VISIBLE_DEVICES"] == "1"  # the user's choice is kept
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert "CUDA_VISIBLE_DEVICES" not in child_env(gpu=True)
    c = _claim(tmp_path, [Check("bad", at_most=0)], sizes=(1,), signal="returned")
    assert _spec(Task(c, "bad", 1, 0))["memory_limit_bytes"] == 8192 * 2**20 and not runs_alone(c)
    c.requires = ("gpu",)
    spec = _spec(Task(c, "bad", 1, 0))
    assert spec["gpu"] and spec["memory_limit_bytes"] == 0 and runs_alone(c)


def test_no_gpu_is_decided_without_starting_anything(monkeypatch):
    from tf_memlint.verify import requirements

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "-1")
    assert requirements.gpu_missing() == "none visible: CUDA_VISIBLE_DEVICES='-1' hides them"
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    started = []
    monkeypatch.setattr(requirements.subprocess, "run", lambda *a, **k: started.append(a))
    if not any(requirements.glob.glob(p) for p in requirements.GPU_DEVICE_NODES):
        assert requirements.gpu_missing() == "none visible: no /dev/nvidia*, /dev/kfd or /dev/dxg device"
        assert started == []


def test_nothing_measured_is_an_error(tmp_path):
    c = _claim(tmp_path, [Check("bad_slope", at_least=1.0, refuted_below=0.5)])
    assert evaluate(c, []).verdict == "ERROR"


def test_default_bands_give_every_check_an_inconclusive_zone(tmp_path):
    [claim] = parse_claims(PAGE.replace("refuted_below = 0.5\n", "").replace("refuted_above = 0.5\n", ""),
                           tmp_path / "TFM999.md", [])
    lower, upper = claim.checks
    assert (lower.at_least, lower.refuted_below) == (1.0, 0.5)
    assert (upper.at_most, upper.refuted_above) == (0.01, 0.02)
    noisy = PAGE.replace('signal = "graph_nodes"', 'signal = "rss"').replace("at_most = 0.01", "at_most = 0")
    noisy = noisy.replace("refuted_above = 0.5\n", "")
    with pytest.raises(ClaimError, match="at_most = 0 on a noisy signal needs an explicit refuted_above"):
        parse_claims(noisy, tmp_path / "TFM999.md", [])


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
                     "TFM202", "TFM301", "TFM303", "TFM304", "TFM401", "TFM402", "TFM403", "TFM404", "TFM408", "TFM409",
                     "TFM501"}
    assert [c.id for c in shipped if c.requires] == ["TFM501"]  # measurable on a GPU only
    myths = [c for c in shipped if c.kind == "myth"]
    assert len(myths) == 6 and all(c.expect == "REFUTED" for c in myths)
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

    code = ("import sys; from tf_memlint.verify import command, runner, verdict, report, claims, requirements; "
            "command.run(['--list']); "
            "[requirements.unmet(c) for c in claims.discover(*command.shipped_dirs())]; "
            "print('tensorflow' in sys.modules)")
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
    # A rule's code selects every claim of its page: TFM101 has an arithmetic body's and a model
    # call's unrolling, TFM104 a trace-count and a memory claim.
    assert verdicts == {"TFM101": "CONFIRMED", "TFM101-model-call": "CONFIRMED", "TFM104": "CONFIRMED",
                        "TFM104-memory": "CONFIRMED", "naming-intermediates-in-tf-function": "REFUTED"}, report["claims"]
    assert rc == 0 and report["ok"]
    tfm101 = next(c for c in report["claims"] if c["id"] == "TFM101")
    assert tfm101["series"]["good"][0] == tfm101["series"]["good"][-1]  # tf.range: constant graph
    assert tfm101["series"]["bad"][-1] > 10 * tfm101["series"]["bad"][0]  # unrolled
    assert report["tensorflow"]
    assert sorted(p.name for p in (tmp_path / "plots").glob("*.png")) == [
        "TFM101-model-call.png", "TFM101.png", "TFM104-memory.png", "TFM104.png",
        "naming-intermediates-in-tf-function.png"]


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
    assert "address-space limit" in by_id["unbounded-allocation"]["errors"][0]
    assert "SyntaxError" in by_id["syntax-error"]["errors"][0]
    assert rc == 1  # ERROR is not the expected verdict
    assert elapsed < 120  # the sleeper was killed, not waited for


@needs_tf
def test_the_gpu_claim_is_not_measurable_on_a_machine_without_a_gpu(tmp_path):
    """`tf-memlint verify TFM501` here: INCONCLUSIVE, the reason says why, nothing ran, exit 0."""
    missing = _no_gpu_here()
    t0 = time.monotonic()
    rc, report = _verify_json(tmp_path, ["TFM501"])
    [claim] = report["claims"]
    assert claim["verdict"] == "INCONCLUSIVE" and claim["as_expected"] and claim["expect"] == "CONFIRMED"
    assert claim["reason"] == claim["not_measurable"] == f"not measurable here: needs a GPU ({missing})"
    assert claim["requires"] == ["gpu"] and claim["runs"] == [] and claim["checks"] == []
    assert rc == 0 and report["ok"]
    assert time.monotonic() - t0 < 60  # no measurement, no TensorFlow started


SCRATCH_GPU_PAGE = """# A GPU claim written from scratch

## Claim

```toml claim
statement = "Something only a GPU can show."
signal = "returned"
sizes = [1, 2]
requires = "gpu"
default_premises = false
bad = "fixtures/bad.py"
good = "fixtures/good.py"

[[check]]
quantity = "bad"
at_most = 0
```
"""


@needs_tf
def test_a_scratch_gpu_claim_is_not_measurable_here_and_nothing_runs(tmp_path, capsys):
    missing = _no_gpu_here()
    claims_dir = tmp_path / "claims"
    (claims_dir / "fixtures").mkdir(parents=True)
    (claims_dir / "needs-a-gpu.md").write_text(SCRATCH_GPU_PAGE)
    marker = tmp_path / "ran"
    for name in ("bad", "good"):  # would leave a file behind, and fail, if it ever ran
        (claims_dir / "fixtures" / f"{name}.py").write_text(
            f"def workload(n):\n    open({str(marker)!r}, 'w').close()\n    raise SystemExit('must not run')\n")
    rc, report = _verify_json(tmp_path, ["--claims", str(claims_dir)])
    [claim] = report["claims"]
    assert claim["id"] == "needs-a-gpu" and claim["verdict"] == "INCONCLUSIVE" and claim["as_expected"]
    assert claim["reason"] == f"not measurable here: needs a GPU ({missing})" and claim["runs"] == []
    assert rc == 0 and not marker.exists()
    capsys.readouterr()
    assert command.run(["--claims", str(claims_dir), "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "expected CONFIRMED: not measurable here" in text
    assert f"why: not measurable here: needs a GPU ({missing})" in text
    assert "every verdict as expected (1 not measurable here: needs-a-gpu)" in text
    md = tmp_path / "evidence.md"
    assert command.run(["--claims", str(claims_dir), "--no-progress", "--format", "markdown", "-o", str(md)]) == 0
    page = md.read_text()
    assert f"Why: not measurable here: needs a GPU ({missing})." in page
    assert "CONFIRMED (not measurable here)" in page and "Nothing was measured on this machine" in page
    assert not marker.exists()


@needs_tf
def test_the_gpu_probe_asks_tensorflow_in_a_child():
    """The step taken where a GPU device node exists: real TensorFlow, in a child process."""
    from tf_memlint.verify.requirements import GPU_DEVICE_NODES, glob, tensorflow_gpus

    count, detail = tensorflow_gpus()
    assert isinstance(count, int) and count >= 0 and detail.startswith("TensorFlow 2."), detail
    if not any(glob.glob(p) for p in GPU_DEVICE_NODES):
        assert count == 0


NULL_FIXTURE = DATA / "null" / "null_workload.py"


@needs_tf
def test_no_shipped_claim_can_be_confirmed_or_refuted_by_a_fixture_that_measures_nothing():
    """Every shipped rule claim and myth, both variants replaced by `def workload(n): return None`:
    nothing was measured, so nothing may be CONFIRMED or REFUTED (INCONCLUSIVE or ERROR only).
    The claims keep their sizes; one repeat and no warm-up keep it fast."""
    import copy

    from tf_memlint.verify.runner import run_all

    nulls = []
    for c in _shipped():
        c = copy.copy(c)
        c.bad = c.good = NULL_FIXTURE
        c.repeats = c.max_repeats = 1
        c.warmup = None
        nulls.append(c)
    assert len(nulls) >= 19
    runs = run_all(nulls, jobs=2, progress=False, more=needs_more)
    verdicts = {c.id: evaluate(c, runs).verdict for c in nulls}
    decided = {k: v for k, v in verdicts.items() if v in ("CONFIRMED", "REFUTED")}
    assert not decided, decided
    assert {c.id for c in nulls if c.kind == "myth"} <= set(verdicts)


@needs_tf
def test_every_verdict_path_on_fixtures_that_must_not_pass(tmp_path):
    rc, report = _verify_json(tmp_path, ["--claims", str(DATA / "verdict_claims")])
    by_id = {c["id"]: c for c in report["claims"]}
    assert {k: v["verdict"] for k, v in by_id.items()} == {
        "confirmed": "CONFIRMED", "refuted-for-real": "REFUTED", "unclear-band": "INCONCLUSIVE",
        "premise-not-met": "INCONCLUSIVE", "zero-over-zero": "INCONCLUSIVE",
        "returned-none": "ERROR", "resource-exhausted": "ERROR"}
    assert rc == 1
    assert "premise not met: the bad variant allocates at least 1 GiB" in by_id["premise-not-met"]["reason"]
    zero = by_id["zero-over-zero"]["checks"][0]
    assert zero["outcome"] == "undefined" and zero["value"] is None
    assert "returned None" in by_id["returned-none"]["errors"][0]
    assert "raised TypeError" not in by_id["returned-none"]["errors"][0]
    oom = by_id["resource-exhausted"]["errors"][0]
    assert "out of memory: TensorFlow could not allocate" in oom and "raised ResourceExhausted" not in oom
    assert by_id["confirmed"]["quote"] == ("traces at 3 / 12 values: 3 / 12 with Python numbers, "
                                           "1 / 1 with tensors (1 per value)")


@needs_tf
def test_invalid_claim_files_are_errors_and_the_others_still_run(tmp_path, capsys):
    rc, report = _verify_json(tmp_path, ["--claims", str(DATA / "invalid_claims")])
    by_id = {c["id"]: c for c in report["claims"]}
    assert by_id["healthy"]["verdict"] == "CONFIRMED"
    for name, message in (("at-least-string", "write at_least = 0.9 without quotes"),
                          ("repeats-zero", "repeats must be at least 1, got 0"),
                          ("timeout-negative", "timeout_s must be greater than 0, got -1")):
        assert by_id[name]["verdict"] == "ERROR" and message in by_id[name]["errors"][0], by_id[name]
    assert rc == 1
    assert any("fence-without-claim.md" in w for w in report["warnings"])
    assert "fence-without-claim.md" in capsys.readouterr().err


@needs_tf
def test_reports_are_strict_json_and_markdown_that_works_outside_the_repository(tmp_path, monkeypatch):
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(private_tmp))
    monkeypatch.setattr("tempfile.tempdir", None)
    out = tmp_path / "elsewhere" / "report.json"
    out.parent.mkdir()
    argv = ["--claims", str(DATA / "verdict_claims"), "zero-over-zero", "confirmed", "--no-progress"]
    command.run([*argv, "--format", "json", "-o", str(out)])

    def no_constants(name):
        raise ValueError(f"{name} is not JSON")

    report = json.loads(out.read_text(), parse_constant=no_constants)
    assert report["format_version"] == 2
    assert report["command"].startswith("tf-memlint verify --claims")
    for claim in report["claims"]:
        assert isinstance(claim["wall_s"], float) and claim["wall_s"] > 0
        for check in claim["checks"]:
            assert check["at_least"] is None or isinstance(check["at_least"], (int, float))
            assert check["at_most"] is None or isinstance(check["at_most"], (int, float))
    conf = next(c for c in report["claims"] if c["id"] == "confirmed")
    assert conf["checks"][0]["at_least"] == 0.9 and conf["checks"][0]["refuted_below"] == 0.45

    md = tmp_path / "elsewhere" / "EVIDENCE.md"
    command.run([*argv, "--format", "markdown", "-o", str(md),
                 "--plots", str(tmp_path / "elsewhere" / "plots")])
    text = md.read_text()
    assert f"Written by `tf-memlint verify --claims {DATA / 'verdict_claims'} zero-over-zero confirmed " \
           f"--no-progress --format markdown -o {md}" in text
    links = re.findall(r"\]\(([^)#]+)\)", text)
    assert links
    for link in links:
        assert (md.parent / link).exists(), link
    # AutoGraph's generated modules went to each measurement's own temporary directory, now gone
    assert not list(private_tmp.glob("__autograph_generated_file*"))
    assert not list(private_tmp.glob("tfm-verify-*"))


@pytest.mark.slow
@needs_tf
def test_full_verify_every_rule_confirmed_every_myth_refuted(tmp_path):
    t0 = time.monotonic()
    rc, report = _verify_json(tmp_path, ["--jobs", "2"])
    bad = [(c["id"], c["verdict"]) for c in report["claims"] if not c["as_expected"]]
    assert rc == 0 and not bad, bad
    assert time.monotonic() - t0 < 1200


# ----------------------------------------------------------------------------- figures on pages

EVIDENCE = ROOT / "rules" / "EVIDENCE.md"
# A figure: a number with a unit of memory, time or scale, as prose would quote a measurement.
FIGURE = re.compile(r"(?<![\w.])[+~]?\d[\d,]*(?:\.\d+)?\s*(?:(?:-|to)\s*\d[\d,]*(?:\.\d+)?\s*)?"
                    r"(?:KiB|MiB|GiB|KB|MB|GB|kB|B|bytes|ms|s|seconds|x|times|%|(?:graph )?nodes|ops)(?!\w)")
# Figures that are facts, not measurements (a format's limit, a dtype's size, an option's default).
NOT_MEASURED = {
    "TFM106.md": {"8 bytes", "2 GB"},  # float64's size; protobuf's documented 2 GB limit
    "TFM301.md": {"4 MB"},  # the option's default, 1000000 float32 elements
}


def _prose(page_text: str) -> str:
    """The page without its claim block, code, generated 'Measured by' paragraphs and link targets."""
    text = page_text.split("\n## Claim", 1)[0]
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = re.sub(r"^Measured by `tf-memlint verify [^\n]*$", "", text, flags=re.M)
    text = re.sub(r"`[^`\n]*`", "", text)
    return re.sub(r"\]\([^)]*\)", "]", text)


def _evidence_quotes() -> dict:
    """{claim id: the figures quoted from it} of the latest evidence run (rules/EVIDENCE.md)."""
    quotes, current = {}, None
    for line in EVIDENCE.read_text().splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
        elif line.startswith("Quoted on the claim's page: ") and current:
            quotes[current] = line[len("Quoted on the claim's page: "):]
    return quotes


def test_every_figure_on_a_rule_page_matches_the_latest_evidence_run():
    """Each generated 'Measured by' paragraph equals the quote the evidence run printed for that
    claim (regenerate both with `tf-memlint verify --format markdown -o rules/EVIDENCE.md
    --plots rules/plots --update-pages`), every claim with a quote is quoted somewhere, and the rest
    of the page quotes no measured figure of its own (a figure may restate the claim's own inputs or
    thresholds, which its claim block names)."""
    from tf_memlint.verify.report import measured_paragraphs

    quotes = _evidence_quotes()
    evidence_text = EVIDENCE.read_text()
    tf = re.search(r"^- TensorFlow: (\d+\.\d+)", evidence_text, re.M).group(1)
    shipped = {c.id: c for c in _shipped()}
    quoted = set()
    pages = sorted((ROOT / "rules").glob("TFM*.md")) + sorted((ROOT / "rules" / "myths").glob("*.md"))
    for page in pages:
        text = page.read_text()
        for cid, paragraph in measured_paragraphs(text).items():
            assert cid in shipped, f"{page.name} quotes an unknown claim {cid}"
            assert cid in quotes, f"{page.name}: {cid} has no quote in rules/EVIDENCE.md"
            link = os.path.relpath(EVIDENCE, page.parent)
            expected = (f"Measured by `tf-memlint verify {cid}` on TensorFlow {tf} CPU "
                        f"([evidence]({link}#{cid.lower()})): {quotes[cid]}")
            assert paragraph == expected, f"{page.name}: the figures of {cid} drifted from the evidence"
            quoted.add(cid)
        if page.parent.name == "myths":
            continue
        claim_block = text.split("\n## Claim", 1)[-1]
        allowed = NOT_MEASURED.get(page.name, set())
        stray = [m.group(0) for m in FIGURE.finditer(_prose(text))
                 if m.group(0) not in allowed and m.group(0) not in claim_block]
        assert not stray, f"{page.name} quotes figures by hand (use a claim's quote): {stray}"
    assert {cid for cid, c in shipped.items() if c.quote} <= quoted


def test_tfm403_example_fixture_and_claim_are_one_program():
    page = (ROOT / "rules" / "TFM403.md").read_text()
    example = re.search(r"## Example\n.*?```python\n(.*?)```", page, re.S).group(1)
    instead = re.search(r"## Use instead\n.*?```python\n(.*?)```", page, re.S).group(1)
    [claim] = [c for c in _shipped() if c.id == "TFM403"]

    def loop(path):
        body = path.read_text().split("def workload(n: int):", 1)[1]
        lines = [ln[4:] for ln in body.splitlines()[2:] if ln.strip() and not ln.strip().startswith("return")]
        return "\n".join(re.sub(r"\s*# expect: TFM403", "", ln) for ln in lines) + "\n"

    assert loop(claim.bad) == example
    assert loop(claim.good) == instead


def test_costs_of_some_claims_replace_only_their_rules():
    """`verify TFM202 --costs FILE` replaces TFM202's unit cost and keeps every other rule's, each
    replaced entry saying which run measured it."""
    from tf_memlint.verify.report import merged_costs

    table = {"command": "tf-memlint verify --costs f", "date": "d0", "tensorflow": "2.21.0",
             "rules": {"TFM202": {"claim": "TFM202", "unit": "ops", "value": 4.0},
                       "TFM404": {"claim": "TFM404", "unit": "seconds", "value": 0.1}}}
    partial = {"command": "tf-memlint verify TFM202-memory --costs f", "date": "d1", "tensorflow": "2.21.0",
               "rules": {"TFM202": {"claim": "TFM202-memory", "unit": "bytes", "value": 5e4}}}
    merged = merged_costs(table, partial)
    assert merged["command"] == table["command"] and merged["rules"]["TFM404"] == table["rules"]["TFM404"]
    assert merged["rules"]["TFM202"]["unit"] == "bytes" and merged["rules"]["TFM202"]["date"] == "d1"
    assert merged["rules"]["TFM202"]["command"] == partial["command"]
    assert table["rules"]["TFM202"]["unit"] == "ops"  # the table read is not changed in place
