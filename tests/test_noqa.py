"""`# noqa` in the command behaves as flake8's does, including on multi-line statements."""

from __future__ import annotations

import pytest

SOURCE = """\
import tensorflow as tf

@tf.function
def f(x):
    for i in range(1000):{comment}
        x = x + 1.0
    return x
"""


@pytest.mark.parametrize("comment,silenced", [
    ("", False),
    ("  # noqa", True),
    ("  # noqa: TFM101", True),
    ("  # NOQA:TFM101", True),
    ("  # noqa: TFM1", True),
    ("  # noqa: TFM102", False),
    ("  # noqa: E501,TFM101", True),
    ("  # noqa:E501 TFM101", True),
    ("  # not a noqa", False),
])
def test_noqa_forms(lint, comment, silenced):
    findings = lint(SOURCE.format(comment=comment))
    assert (findings == []) is silenced


def test_noqa_on_any_line_of_a_multiline_statement(lint):
    source = """\
import tensorflow as tf

@tf.function
def f(x):
    for i in range(
        1000,  # noqa: TFM101
    ):
        x = x + 1.0
    for i in range(
        1000,
    ):
        x = x + 1.0
    return x
"""
    assert [d.line for d in lint(source)] == [9]
