"""TFM301 large-intermediate-in-map-body: a function that tf.map_fn or Dataset.map runs once per element,
in parallel, builds a tensor much larger than its input."""

from __future__ import annotations

import libcst as cst

from tf_memlint.facts.tracing import TRACED_SCOPE
from tf_memlint.gate import MAPPED, Inside
from tf_memlint.rule import Rule, register
from tf_memlint.syntax import argument, code_of

# repeats=10000 of a 100-float row is 4.19 MB per element at parallel_iterations=1 and 67 MB at
# 16 (measured): a thousandfold blow-up of an element is where the copies start to dominate.
MIN_FACTOR = 1000
# A fully literal shape (tf.zeros([1000, 1000])) is judged by its own size: 1e6 float32 = 4 MB.
MIN_ELEMENTS = 1_000_000

# building call -> (argument position, keyword) of its factor or shape, and which it is.
_BUILDERS = {
    "tensorflow.repeat": (1, "repeats", "factor"),
    "tensorflow.tile": (1, "multiples", "factor"),
    "tensorflow.broadcast_to": (1, "shape", "shape"),
    "tensorflow.ones": (0, "shape", "shape"),
    "tensorflow.zeros": (0, "shape", "shape"),
    "tensorflow.fill": (0, "dims", "shape"),
}


@register
class LargeIntermediateInMapBody(Rule):
    """A function mapped by ``tf.map_fn`` or ``Dataset.map`` that builds a much larger tensor.

    Bad::

        def row_energy(row):
            tiled = tf.repeat(row, repeats=16384)   # 16384x the row, once per parallel iteration
            return tf.reduce_sum(tiled * tiled)

        tf.map_fn(row_energy, rows, parallel_iterations=16)

    Good::

        def row_energy(row):
            return tf.reduce_sum(row * row) * 16384.0   # same value, no intermediate

        tf.map_fn(row_energy, rows, parallel_iterations=16)
    """

    code = "TFM301"
    once_confidence = "high"
    repeats_with_place = False  # the harm is a size read off the code, not a repetition
    name = "large-intermediate-in-map-body"
    summary = "function mapped by tf.map_fn / Dataset.map builds a tensor much larger than its input"
    triggers = TRACED_SCOPE  # a mapped function is a traced one
    structure = Inside(MAPPED, _BUILDERS)
    options = {
        "min_repeat_factor": (MIN_FACTOR, "smallest literal repeat/tile factor that counts as large"),
        "min_literal_elements": (
            MIN_ELEMENTS,
            "smallest element count of a fully literal shape (tf.zeros, tf.fill, tf.broadcast_to) "
            "that counts as large",
        ),
    }

    def visit_Call(self, node: cst.Call) -> None:
        context = self.context
        name = context.call_name(node)
        if name not in _BUILDERS or not context.in_mapped_function:
            return
        position, keyword, kind = _BUILDERS[name]
        given = argument(node, position, keyword)
        if given is None:
            return
        known, complete = self._product(given)
        if kind == "factor" or not complete:
            large = known >= self.settings["min_repeat_factor"]
            what = f"{known}x its input"
        else:
            large = known >= self.settings["min_literal_elements"]
            what = f"{known} elements"
        if large:
            short = name.rsplit(".", 1)[-1]
            self.report(node, f"tf.{short}(..., {code_of(given)}) in a mapped function builds {what} "
                              f"once per parallel element; compute the result without materialising it "
                              f"(or lower parallel_iterations / num_parallel_calls)")

    def _product(self, shape: cst.BaseExpression) -> tuple[int, bool]:
        """(product of the statically known entries, whether every entry is known)."""
        entries = [e.value for e in shape.elements] if isinstance(shape, (cst.List, cst.Tuple)) else [shape]
        product, complete = 1, True
        for entry in entries:
            value = self.context.int_value(entry)
            if value is None or value < 0:
                complete = False
            else:
                product *= value
        return product, complete
