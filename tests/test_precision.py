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


# TFM501: worker processes that use TensorFlow on a shared GPU ------------------------------------

WORKER = """\
import tensorflow as tf
{imports}

def work(seed):
    model = tf.keras.Sequential([tf.keras.layers.Dense(4)])
    return float(model(tf.ones((1, 3)))[0, 0])

{body}
"""


def _tfm501(lint, imports, body):
    return [d.line for d in lint(WORKER.format(imports=imports, body=body), ["TFM501"])]


def test_tfm501_processes_run_one_after_the_other_are_silent(lint):
    sequential = ("a = Process(target=work, args=(0,))\na.start()\na.join()\n"
                  "b = Process(target=work, args=(1,))\nb.start()\nb.join()\n")
    assert _tfm501(lint, "from multiprocessing import Process", sequential) == []
    overlapping = ("a = Process(target=work, args=(0,))\nb = Process(target=work, args=(1,))\n"
                   "a.start()\nb.start()\na.join()\nb.join()\n")
    assert _tfm501(lint, "from multiprocessing import Process", overlapping) == [8, 9]


def test_tfm501_a_fixed_device_list_does_not_share_a_gpu_but_one_per_worker_does(lint):
    body = "with P(4) as pool:\n    pool.map(work, range(8))\n"
    imports = "import os\nfrom multiprocessing import Pool as P"
    pinned = _tfm501(lint, imports + '\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"', body)
    assert pinned == [11]  # every worker on GPU 0: still shared (and `Pool as P` is recognised)
    hidden = _tfm501(lint, imports + '\nos.environ["CUDA_VISIBLE_DEVICES"] = ""', body)
    assert hidden == []  # no GPU at all


def test_tfm501_the_message_says_what_uses_tensorflow_and_why_several(lint):
    source = WORKER.format(imports="import multiprocessing",
                           body="with multiprocessing.Pool() as pool:\n    pool.map(work, range(8))\n")
    [finding] = lint(source, ["TFM501"])
    assert "pool.map(work, ...) runs work() in worker processes, which uses TensorFlow " \
           "(tf.keras.Sequential()), in a pool of several workers" in finding.message
    assert "set_memory_growth(gpu, True)" in finding.message


def test_tfm501_a_parent_that_used_tensorflow_first_makes_one_worker_too_many(lint):
    body = ("def main():\n    print(work(0))\n    p = Process(target=work, args=(1,))\n"
            "    p.start()\n    p.join()\n\n\ndef later():\n    p = Process(target=work, args=(1,))\n"
            "    p.start()\n    p.join()\n    print(work(0))\n")
    assert _tfm501(lint, "from multiprocessing import Process", body) == [10]  # main(), not later()
