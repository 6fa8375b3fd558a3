"""Issue 9 (precision on unseen code): rule behaviour that fixtures alone cannot show
(notebook mode, messages)."""

from __future__ import annotations

NOTEBOOK_TWO_SESSIONS = """\
import tensorflow.compat.v1 as tf
a = tf.constant(3.0)
sess = tf.Session()
print(sess.run(a))
other = tf.Session()
print(other.run(a * 2))
"""

NOTEBOOK_REBOUND = """\
import tensorflow.compat.v1 as tf
a = tf.constant(3.0)
sess = tf.Session()
print(sess.run(a))
sess = tf.Session()
print(sess.run(a * 2))
"""


def test_tfm201_notebook_session_superseded_under_another_name(lint):
    findings = lint(NOTEBOOK_TWO_SESSIONS, ["TFM201"], notebook=True)
    assert [(d.code, d.line) for d in findings] == [("TFM201", 3)]
    assert "the kernel keeps both" in findings[0].message


def test_tfm201_script_or_rebound_notebook_session_is_silent(lint):
    assert lint(NOTEBOOK_TWO_SESSIONS, ["TFM201"]) == []
    assert lint(NOTEBOOK_REBOUND, ["TFM201"], notebook=True) == []


def test_tfm201_single_notebook_session_is_silent(lint):
    source = "import tensorflow.compat.v1 as tf\nsess = tf.InteractiveSession()\nprint(tf.constant(1).eval())\n"
    assert lint(source, ["TFM201"], notebook=True) == []
