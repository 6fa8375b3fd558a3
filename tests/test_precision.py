"""Precision on unseen code: rule behaviour that fixtures alone cannot show
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


PREFIXES = """\
import tensorflow as tf

@tf.function
def head(x):
    return tf.reduce_sum(x)

def run(x):
    for i in range(5):
        head(x[:i])
"""


def test_tfm107_names_the_argument_and_respects_its_threshold(lint):
    findings = lint(PREFIXES, ["TFM107"])
    assert [(d.code, d.line) for d in findings] == [("TFM107", 9)]
    assert "called with x[:i], a slice whose length changes every iteration" in findings[0].message
    assert lint(PREFIXES, ["TFM107"], min_distinct_shapes=6) == []


def test_tfm107_a_relaxing_rebinding_makes_the_name_unknown(lint):
    """A name bound once to a plain tf.function and once with reduce_retracing=True is not known
    to retrace on shapes at every call: silent, as TFM104 is silent on names bound twice."""
    source = PREFIXES.replace("def run(x):", "head = tf.function(head.python_function, reduce_retracing=True)\n\n"
                                             "def run(x):")
    assert lint(source, ["TFM107"]) == []


TFM407_NOTEBOOK = """\
import tensorflow as tf
(x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
x_test = x_test / 255.0
model = tf.keras.Sequential([tf.keras.Input((28, 28, 1)), tf.keras.layers.Conv2D(8, 3), tf.keras.layers.Dense(10)])
model(x_test)
x_test = x_test[:100]
model(x_test)
(x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
model(x_test)
"""


def test_tfm407_follows_each_rebinding_before_the_call(lint):
    """`x_test = x_test / 255.0` is the loaded split; rebound to a slice it is not; reloaded it is."""
    findings = lint(TFM407_NOTEBOOK, ["TFM407"], notebook=True)
    assert [d.line for d in findings] == [5, 9]


def test_tfm407_message_names_the_split_and_the_fix(lint):
    findings = lint(TFM407_NOTEBOOK, ["TFM407"])
    assert findings[0].message.startswith("model(x_test) runs the whole MNIST test split (10,000 samples)")
    assert "model.predict(x_test, batch_size=...)" in findings[0].message
    source = TFM407_NOTEBOOK + "model.evaluate(x_test, y_test, batch_size=len(x_test))\n"
    [*_, last] = lint(source, ["TFM407"])
    assert last.message.startswith("model.evaluate(x_test, ..., batch_size=len(x_test)) makes the whole MNIST")
    assert "use a fixed batch_size" in last.message


def test_tfm407_only_a_convolutional_network_makes_a_whole_split_worth_reporting(lint):
    """A dense network's whole-split activations are tens of MiB: silent (fixtures/TFM407/good_dense_network.py)."""
    dense = TFM407_NOTEBOOK.replace("tf.keras.layers.Conv2D(8, 3)", "tf.keras.layers.Flatten()")
    assert lint(dense, ["TFM407"]) == []
    as_function = TFM407_NOTEBOOK.replace("tf.keras.layers.Conv2D(8, 3), ", "") + "tf.nn.conv2d(x_test, k, 1, 'SAME')\n"
    # The module builds a convolution, but the model it runs the split through reaches none.
    assert lint(as_function, ["TFM407"]) == []
    built_apart = TFM407_NOTEBOOK.replace(
        "model = tf.keras.Sequential([tf.keras.Input((28, 28, 1)), tf.keras.layers.Conv2D(8, 3), tf.keras.layers.Dense(10)])",
        "model = tf.keras.Sequential()\nmodel.add(tf.keras.layers.Conv2D(8, 3))")
    assert [d.line for d in lint(built_apart, ["TFM407"])] == [6, 10]  # its layers added by .add
    opaque = TFM407_NOTEBOOK.replace(
        "model = tf.keras.Sequential([tf.keras.Input((28, 28, 1)), tf.keras.layers.Conv2D(8, 3), tf.keras.layers.Dense(10)])",
        "model = tf.keras.Sequential(load_layers())").replace(
        "import tensorflow as tf\n", "import tensorflow as tf\nfrom nets import load_layers\n") + "tf.nn.conv2d(x_test, k, 1, 'SAME')\n"
    assert [d.line for d in lint(opaque, ["TFM407"])] == [6, 10]  # unreadable: the module's convolution decides


def test_tfm407_a_comprehension_or_loop_rebinding_the_name_is_not_the_split(lint):
    source = TFM407_NOTEBOOK.split("x_test = x_test[:100]")[0] + (
        "parts = [model(x_test) for x_test in np.array_split(x_test, 10)]\n"
        "for x_test in np.array_split(x_test, 10):\n    model(x_test)\n")
    assert [d.line for d in lint("import numpy as np\n" + source, ["TFM407"])] == [6]


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


# TFM404: only where predict() builds its set-up per call (TF2 Keras) ---------------------------

PREDICT_LOOP = """\
{imports}
model = load_model("m.keras")
{extra}
for image in images:
    model.predict(image[None])
"""


def _tfm404(lint, imports, extra=""):
    source = "images = read_images()\n" + PREDICT_LOOP.format(imports=imports, extra=extra)
    return [d.code for d in lint(source, ["TFM404"])]


def test_tfm404_reports_tf_keras_and_keras3(lint):
    assert _tfm404(lint, "from tensorflow.keras.models import load_model") == ["TFM404"]
    assert _tfm404(lint, "import tensorflow as tf\nfrom keras.models import load_model",
                   "tf.keras.backend.clear_session()") == ["TFM404"]
    assert _tfm404(lint, "from keras.models import load_model\nfrom keras import ops") == ["TFM404"]
    assert _tfm404(lint, "import tensorflow as tf\nfrom keras.models import load_model",
                   "tape = tf.GradientTape()") == ["TFM404"]


def test_tfm404_silent_where_keras_reuses_one_predict_function(lint):
    """Standalone Keras with nothing dating it to TF2, and Keras in TF1 graph mode
    (fixtures/TFM404/good_graph_mode_keras.py)."""
    assert _tfm404(lint, "from keras.models import load_model") == []
    tf_keras = "from tensorflow.keras.models import load_model"
    assert _tfm404(lint, tf_keras, "model._make_predict_function()") == []
    assert _tfm404(lint, tf_keras + "\nfrom tensorflow.keras import backend as K", "K.set_session(s)") == []
    assert _tfm404(lint, tf_keras + "\nimport tensorflow as tf", "sess = tf.Session()") == []
    assert _tfm404(lint, tf_keras + "\nimport tensorflow as tf", "graph = tf.get_default_graph()") == []
    # TF2 code opening a compat.v1 session is still eager: reported
    assert _tfm404(lint, tf_keras + "\nimport tensorflow as tf", "sess = tf.compat.v1.Session()") == ["TFM404"]
    assert _tfm404(lint, tf_keras + "\nimport tensorflow as tf", "tf.compat.v1.disable_eager_execution()") == []


def test_tfm404_every_nth_step_is_silent_only_for_a_large_or_named_period(lint):
    """Sampling every 500 steps (or every `save_interval`) is not per-step work; `step % 4` still is."""
    source = ("import numpy as np\nfrom tensorflow.keras.models import load_model\nmodel = load_model('g.keras')\n"
              "interval = read_interval()\n"
              "for step in range(100000):\n    if step % {period} == 0:\n        model.predict(np.zeros((1, 8)))\n")
    assert [d.code for d in lint(source.format(period="500"), ["TFM404"])] == []
    assert [d.code for d in lint(source.format(period="interval"), ["TFM404"])] == []
    assert [d.code for d in lint(source.format(period="4"), ["TFM404"])] == ["TFM404"]


def test_tfm404_parts_of_a_batch_are_a_batch(lint):
    """`x, y = batch` in the body, or `x, y = next(generator)` of a batching source: whole batches."""
    source = ("import numpy as np\nimport tensorflow as tf\nmodel = tf.keras.models.load_model('m.keras')\n"
              "ds = tf.data.Dataset.from_tensor_slices(np.zeros((640, 8))).batch(64)\n"
              "for batch in ds:\n    x, y = batch\n    model.predict(x)\n"
              "for step in range(100):\n    x, y = next(iter(ds))\n    model.predict(x)\n"
              "for row in np.zeros((640, 8)):\n    x, y = row, 0\n    model.predict(x[None])\n")
    assert [d.line for d in lint(source, ["TFM404"])] == [13]
