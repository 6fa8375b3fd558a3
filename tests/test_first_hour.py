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
