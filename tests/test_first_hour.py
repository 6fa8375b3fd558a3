"""What a new user meets first: explain by name, --help grouped by rule, verify's legend."""

from __future__ import annotations

import pytest

from tf_memlint.cli import _parser, main
from tf_memlint.rule import all_rules


@pytest.mark.parametrize("spelling", ["predict-in-loop", "PREDICT_IN_LOOP", "TFM404", "tfm404"])
def test_explain_accepts_a_code_or_a_name(capsys, spelling):
    assert main(["explain", spelling]) == 0
    assert capsys.readouterr().out.startswith("# TFM404: predict-in-loop\n")


def test_explain_unknown(capsys):
    assert main(["explain", "predict-in-loops"]) == 2
    assert "unknown rule 'predict-in-loops'" in capsys.readouterr().err


def test_help_groups_rule_options_under_their_rules():
    help_text = _parser().format_help()
    for code, rule in all_rules().items():
        for option in rule.options:
            flag = "--" + option.replace("_", "-")
            heading = help_text.rfind("\n\n", 0, help_text.index(flag))
            group = help_text[heading:help_text.index(flag)]
            assert f"{code} ({rule.name})" in group, (flag, group)


def test_verify_text_explains_itself(tmp_path):
    """The text report names each claim's fixtures, the TensorFlow that measured them, and says
    what a premise and "cleared by" are, with one way of writing units."""
    pytest.importorskip("tf_memlint.verify.verdict")
    from test_verify import WORKED, _claim, _runs
    from tf_memlint.verify.report import render_text
    from tf_memlint.verify.verdict import Check, evaluate

    claim = _claim(tmp_path, [Check("bad_slope", at_least=1.0, refuted_below=0.5)])
    runs = _runs(claim, [10, 20, 30], [5, 5, 5], aux=WORKED)
    for run in runs:
        run.tf_version = "2.99.0"
    text = render_text([evaluate(claim, runs)], elapsed=12.0, jobs=2)
    assert f"fixtures: bad {claim.bad.as_posix()}" in text or f"fixtures: bad {claim.bad.name}" in text
    assert "on TensorFlow 2.99.0" in text
    assert "A premise checks that the measurement means something" in text
    assert '"cleared by D (xR)" means it passed by D' in text
    assert f"check bad_slope >= 1: 10 per unit of {claim.size_name} -> pass" in text
    assert " 0 s " in text or " 0 s\n" in text  # times are written "N s", as elsewhere
