"""The shared TensorFlow context: import aliases and which bodies TensorFlow traces."""

from __future__ import annotations

import libcst as cst
import pytest

from tf_memlint.context import Kind, TFContext


def traced_functions(source: str) -> dict[str, bool]:
    """{function name (or 'lambda@line'): traced?} as the context sees it during the walk."""
    module = cst.parse_module(source)
    context = TFContext(module)
    seen: dict[str, bool] = {}

    class Recorder(cst.CSTVisitor):
        def on_visit(self, node):
            context.enter(node)
            if isinstance(node, cst.FunctionDef):
                seen[node.name.value] = context.in_traced_function
            elif isinstance(node, cst.Lambda):
                seen[f"lambda{len([k for k in seen if k.startswith('lambda')])}"] = context.in_traced_function
            return True

        def on_leave(self, node):
            context.leave(node)

    module.visit(Recorder())
    return seen


TRACED_TABLE = [
    # (description, source, {function: traced?})
    ("bare decorator", "import tensorflow as tf\n@tf.function\ndef f(x): pass\n", {"f": True}),
    ("called decorator", "import tensorflow as tf\n@tf.function(jit_compile=True)\ndef f(x): pass\n", {"f": True}),
    ("alias T", "import tensorflow as T\n@T.function\ndef f(x): pass\n", {"f": True}),
    ("from import", "from tensorflow import function\n@function\ndef f(x): pass\n", {"f": True}),
    ("compat.v1 alias", "import tensorflow.compat.v1 as tf\n@tf.function\ndef f(x): pass\n", {"f": True}),
    ("plain import", "import tensorflow\n@tensorflow.function\ndef f(x): pass\n", {"f": True}),
    ("wrapped later", "import tensorflow as tf\ndef f(x): pass\ng = tf.function(f)\n", {"f": True}),
    ("keras call", "from tensorflow import keras\nclass L(keras.layers.Layer):\n    def call(self, x): pass\n"
                   "    def helper(self): pass\n", {"call": True, "helper": False}),
    ("keras 3 model", "import keras\nclass M(keras.Model):\n    def train_step(self, d): pass\n"
                      "    def test_step(self, d): pass\n    def predict_step(self, d): pass\n",
     {"train_step": True, "test_step": True, "predict_step": True}),
    ("keras subclass of subclass", "import tensorflow as tf\nclass A(tf.keras.layers.Layer): pass\n"
                                   "class B(A):\n    def call(self, x): pass\n", {"call": True}),
    ("map_fn", "import tensorflow as tf\ndef body(x): pass\n@tf.function\ndef f(xs):\n    return tf.map_fn(body, xs)\n",
     {"body": True, "f": True}),
    ("eager map_fn", "import tensorflow as tf\ndef body(x): pass\ntf.map_fn(body, xs)\n", {"body": False}),
    ("map_fn in TF1 graph", "import tensorflow as tf\ndef body(x): pass\nx = tf.placeholder(tf.float32)\n"
                            "tf.map_fn(body, x)\n", {"body": True}),
    ("vectorized_map kw", "import tensorflow as tf\ndef body(x): pass\ntf.vectorized_map(fn=body, elems=xs)\n",
     {"body": True}),
    ("scan/foldl", "import tensorflow as tf\ndef a(s, x): pass\ndef b(s, x): pass\n"
                   "tf.scan(a, xs)\ntf.foldl(b, xs)\n", {"a": True, "b": True}),
    ("while_loop", "import tensorflow as tf\ndef c(i): pass\ndef b(i): pass\ntf.while_loop(c, b, [0])\n",
     {"c": True, "b": True}),
    ("cond", "import tensorflow as tf\ndef t(): pass\ndef f(): pass\ntf.cond(p, t, f)\n", {"t": True, "f": True}),
    ("switch_case", "import tensorflow as tf\ndef a(): pass\ndef b(): pass\ntf.switch_case(i, [a, b])\n",
     {"a": True, "b": True}),
    ("lambda in map_fn", "import tensorflow as tf\ntf.compat.v1.disable_eager_execution()\n"
                         "tf.map_fn(lambda x: x, xs)\n", {"lambda0": True}),
    ("dataset.map", "import tensorflow as tf\ndef p(x): pass\nds = tf.data.Dataset.range(3)\nds = ds.map(p)\n",
     {"p": True}),
    ("dataset chain", "import tensorflow as tf\ndef p(x): pass\ndef q(x): pass\ndef r(s, x): pass\n"
                      "ds = tf.data.TFRecordDataset(f).batch(2).filter(p).interleave(q)\nds.reduce(0, r)\n",
     {"p": True, "q": True, "r": True}),
    ("not a dataset", "import tensorflow as tf\nimport pandas as pd\ndef p(x): pass\npd.Series([1]).map(p)\n",
     {"p": False}),
    ("nested def", "import tensorflow as tf\n@tf.function\ndef f(x):\n    def g(y): pass\n",
     {"f": True, "g": True}),
    ("py_function body", "import tensorflow as tf\ndef py(x): pass\n@tf.function\ndef f(x):\n"
                         "    return tf.py_function(py, [x], tf.float32)\n", {"py": False, "f": True}),
    ("numpy_function lambda", "import tensorflow as tf\n@tf.function\ndef f(x):\n"
                              "    return tf.numpy_function(lambda a: a, [x], tf.float32)\n",
     {"f": True, "lambda0": False}),
    ("eager", "import tensorflow as tf\ndef f(x): pass\nclass C:\n    def call(self, x): pass\n",
     {"f": False, "call": False}),
    ("tf internals are not user code", "from tensorflow.python.eager import def_function\n"
                                       "@def_function.function\ndef f(x): pass\n", {"f": False}),
    ("unrelated decorator", "import tensorflow as tf\nimport functools\n@functools.lru_cache\ndef f(x): pass\n",
     {"f": False}),
]


@pytest.mark.parametrize("source,expected", [t[1:] for t in TRACED_TABLE], ids=[t[0] for t in TRACED_TABLE])
def test_traced_scope_detection(source, expected):
    assert traced_functions(source) == expected


@pytest.mark.parametrize("source,name", [
    ("import tensorflow as tf\nx = tf.compat.v1.Session", "tensorflow.Session"),
    ("import tensorflow.compat.v1 as tf\nx = tf.Session", "tensorflow.Session"),
    ("from tensorflow.compat import v1\nx = v1.Session", "tensorflow.Session"),
    ("from tensorflow.keras import backend as K\nx = K.clear_session", "keras.backend.clear_session"),
    ("import keras\nx = keras.backend.clear_session", "keras.backend.clear_session"),
    ("from tensorflow import keras\nx = keras.models.Model", "keras.Model"),
    ("import tensorflow as tf\nx = tf.keras.Model", "keras.Model"),
    ("from keras.models import Sequential\nx = Sequential", "keras.Sequential"),
    ("import numpy as tf\nx = tf.function", None),
    ("from tensorflow.python.ops import array_ops\nx = array_ops.zeros", None),
    # TF's own quantization tooling: internal, not an op (a TFM202 false positive on TF itself)
    ("from tensorflow.compiler.mlir.quantization.tensorflow.python import representative_dataset as rd\n"
     "x = rd.create_feed_dict_from_input_data", None),
])
def test_canonical_names(source, name):
    module = cst.parse_module(source)
    context = TFContext(module)
    value = module.body[-1].body[0].value
    assert context.qualified_name(value) == name


@pytest.mark.parametrize("expr,kind", [
    ("1000", Kind.PY_INT), ("N", Kind.PY_INT), ("len(xs)", Kind.PY_INT), ("2 * N", Kind.PY_INT),
    ("tf.shape(x)[0]", Kind.TENSOR), ("tf.range(3)", Kind.TENSOR), ("tf.constant(1)", Kind.TENSOR),
    ("np.zeros(3)", Kind.NDARRAY), ("[1, 2]", Kind.PY_CONTAINER), ("{}", Kind.PY_CONTAINER),
    ("n", Kind.UNKNOWN), ("tf.data.Dataset.range(3)", Kind.DATASET), ("x.shape[0]", Kind.UNKNOWN),
])
def test_value_kinds(expr, kind):
    module = cst.parse_module(f"import tensorflow as tf\nimport numpy as np\nN = 10\ndef f(n, x, xs):\n    y = {expr}\n")
    context = TFContext(module)
    function = module.body[-1]
    context.enter(function)
    value = function.body.body[0].body[0].value
    assert context.value_kind(value) is kind


@pytest.mark.parametrize("iterable,count", [
    ("range(1000)", 1000), ("range(10, 110)", 100), ("range(0, 100, 10)", 10), ("range(N)", 10),
    ("[a, b, c]", 3), ("enumerate(range(7))", 7), ("np.arange(50)", 50), ("np.zeros((20, 3))", 20),
    ("range(n)", None), ("tf.range(10)", None), ("xs", None), ("range(N, 0, -1)", 10),
])
def test_trip_counts(iterable, count):
    module = cst.parse_module(f"import tensorflow as tf\nimport numpy as np\nN = 10\ndef f(n, xs):\n    y = {iterable}\n")
    context = TFContext(module)
    function = module.body[-1]
    context.enter(function)
    assert context.trip_count(function.body.body[0].body[0].value) == count


def _at(source: str, path: list[int]):
    """The context after the walk entered the nodes down ``path`` (indexes into ``body``), and
    the node reached; siblings before each step are entered and left, as the engine does."""
    from tf_memlint.walk import walk

    module = cst.parse_module(source)
    context = TFContext(module)
    node: cst.CSTNode = module
    for index in path:
        body = node.body if isinstance(node, cst.Module) else node.body.body
        for sibling in body[:index]:
            class Replay(cst.CSTVisitor):
                def on_visit(self, n):
                    context.enter(n)
                    return True

                def on_leave(self, n):
                    context.leave(n)
            walk(sibling, Replay())
        node = body[index]
        context.enter(node)
    return context, node


def test_two_resolution_modes():
    from tf_memlint.context import AT_POINT, STATIC

    source = "import tensorflow as tf\nk = 4\nk = 5\nm = 7\nprint(k, m)\n"
    context, line = _at(source, [4])
    k, m = (arg.value for arg in line.body[0].value.args)
    assert context.value_of(k, STATIC) is None  # bound twice: no single static value
    assert context.int_value(k, AT_POINT) == 5  # the binding in force here
    assert context.int_value(m) == context.int_value(m, AT_POINT) == 7
    binding = context.binding("k", AT_POINT)
    assert binding is not None and binding.scope is context.module_scope and not binding.unpacked


def test_static_binding_ignores_the_walk_position():
    """A function may use a module constant assigned after it; at that point it is not bound yet."""
    from tf_memlint.context import AT_POINT

    source = "import tensorflow as tf\ndef f():\n    return N\nN = 100\n"
    context, function = _at(source, [1])
    name = function.body.body[0].body[0].value
    assert context.int_value(name) == 100
    assert context.value_of(name, AT_POINT) is None


def test_trip_count_at_point_reads_rebound_lists():
    from tf_memlint.context import AT_POINT

    source = "import tensorflow as tf\nxs = [1, 2]\nxs = [1, 2, 3]\nfor x in xs:\n    pass\n"
    context, loop = _at(source, [3])
    assert context.trip_count(loop) is None
    assert context.trip_count(loop, AT_POINT) == 3


def _position(context: TFContext) -> tuple:
    """Everything enter()/leave() can move, by identity."""
    return (tuple(map(id, context.frames)), tuple(map(id, context.module_loops)),
            tuple(map(id, context._class_stack)), tuple(map(id, context._scope_stack)),
            tuple(sorted(context._latest)), tuple(tuple(map(id, f.loops)) for f in context.frames))


def test_enter_and_leave_act_on_the_declared_node_types_only():
    """The engine's walk calls context.enter/leave only for TFContext.ENTERED/LEFT: a type
    enter() or leave() acted on without being declared would silently stop being tracked."""
    from conftest import fixture_files
    from tf_memlint.files import read_source
    from tf_memlint.walk import Walked

    checked: set[type] = set()
    for path in fixture_files():
        module = cst.parse_module(read_source(str(path)))
        context = TFContext(module)
        open_nodes: list[cst.CSTNode] = []
        for node in context.walked.events:
            if node is None:
                node = open_nodes.pop()
                if type(node) not in TFContext.LEFT:
                    before = _position(context)
                    context.leave(node)
                    assert _position(context) == before, type(node)
                else:
                    context.leave(node)
                continue
            open_nodes.append(node)
            before = _position(context)
            context.enter(node)
            if type(node) not in TFContext.ENTERED:
                checked.add(type(node))
                assert _position(context) == before, type(node)
        assert isinstance(context.walked, Walked)
    assert {cst.Name, cst.Call, cst.Return, cst.If, cst.With}.issubset(checked)
    assert {cst.FunctionDef, cst.For, cst.Assign}.issubset(TFContext.ENTERED)
