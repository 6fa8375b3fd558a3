"""What TensorFlow and Keras names are: import aliases and canonical qualified names.

Every spelling of a public TensorFlow or Keras API is reduced to one canonical dotted name, so
rules compare against a single string: ``tf.compat.v1.Session``, ``tensorflow.Session`` and
``from tensorflow.compat import v1; v1.Session`` all become ``tensorflow.Session``;
``tf.keras.Model`` and ``keras.models.Model`` both become ``keras.Model``.

Only *public* modules count. Files that import TensorFlow internals (``tensorflow.python``,
``keras.src``) are TensorFlow's own implementation, not user code, and resolve to nothing.
"""

from __future__ import annotations

import re

# TensorFlow's and Keras's own implementation packages: not the public API users import.
PRIVATE_SUBPACKAGES = {
    "tensorflow": ("python", "core", "lite", "compiler", "tsl", "tools", "dtensor", "include"),
    "keras": ("src",),
}
_PRIVATE_PREFIXES = tuple(f"{top}.{sub}" for top, subs in PRIVATE_SUBPACKAGES.items() for sub in subs)

# Longest prefix first: rewrites applied to a dotted name until it stops changing.
_CANONICAL_PREFIXES = (
    ("tensorflow.compat.v1.", "tensorflow."),
    ("tensorflow.compat.v2.", "tensorflow."),
    ("tensorflow.keras.", "keras."),
    ("tf_keras.", "keras."),
    ("keras.models.Model", "keras.Model"),
    ("keras.models.Sequential", "keras.Sequential"),
    ("keras.engine.training.Model", "keras.Model"),
    ("keras.engine.base_layer.Layer", "keras.layers.Layer"),
    ("keras.layers.Layer", "keras.layers.Layer"),
    ("tensorflow.Module", "tensorflow.Module"),
)
_CANONICAL_EXACT = {
    "tensorflow.compat.v1": "tensorflow",
    "tensorflow.compat.v2": "tensorflow",
    "tensorflow.keras": "keras",
    "tf_keras": "keras",
}
# Private spellings user code does import: the switches that turn eager off, taken from the
# modules that define them (`from tensorflow.python.framework.ops import disable_eager_execution`).
_PUBLIC_FROM_PRIVATE = {
    "tensorflow.python.framework.ops.disable_eager_execution": "tensorflow.disable_eager_execution",
    "tensorflow.python.compat.v2_compat.disable_v2_behavior": "tensorflow.disable_v2_behavior",
}

# Cheap text test for the fast path: a file whose text never names one of these modules cannot
# import TensorFlow or Keras, so it cannot have findings.
MENTIONS_TF = re.compile(rb"tensorflow|keras").search


def canonical(dotted: str) -> str | None:
    """The canonical public name for ``dotted``, or None when it is not a public TF/Keras name."""
    if dotted.startswith(_PRIVATE_PREFIXES):
        return _PUBLIC_FROM_PRIVATE.get(dotted)
    if not (dotted == "tensorflow" or dotted.startswith("tensorflow.")
            or dotted == "keras" or dotted.startswith("keras.")
            or dotted == "tf_keras" or dotted.startswith("tf_keras.")
            or dotted == "tensorflow_datasets" or dotted.startswith("tensorflow_datasets.")):
        return None
    if dotted in _CANONICAL_EXACT:
        return _CANONICAL_EXACT[dotted]
    for prefix, replacement in _CANONICAL_PREFIXES:
        if dotted.startswith(prefix):
            dotted = replacement + dotted[len(prefix):]
    return dotted

