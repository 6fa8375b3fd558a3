"""tf.data pipelines: what a dataset's elements are and how big its buffers are (TFM302).

Reached with ``context.facts_of(PipelineFacts)`` (built once per linted module, on first use),
so the core context does not need to know this module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from tf_memlint.scopes import AT_POINT
from tf_memlint.syntax import contains, dotted_name

if TYPE_CHECKING:
    from tf_memlint.context import TFContext

# Calls whose result is file content or a decoded image/audio clip: a dataset mapped through a
# function that makes one holds large elements. Parsing records alone (``parse_single_example``,
# ``decode_csv``) is not on the list: parsed feature vectors are usually small.
DECODING_PREFIXES = (
    "tensorflow.io.read_file", "tensorflow.io.decode_image", "tensorflow.io.decode_jpeg",
    "tensorflow.io.decode_png", "tensorflow.io.decode_bmp", "tensorflow.io.decode_gif",
    "tensorflow.io.decode_webp", "tensorflow.io.decode_raw", "tensorflow.image.decode_",
    "tensorflow.image.resize", "tensorflow.audio.decode_",
)
# The same, less the transforms (``tf.image.resize``): what only a pipeline that reads files calls.
READING_PREFIXES = tuple(p for p in DECODING_PREFIXES if p != "tensorflow.image.resize")
# Datasets of decoded images, one batch per element until ``unbatch()``.
DECODED_SOURCES = frozenset({
    "keras.utils.image_dataset_from_directory", "keras.preprocessing.image_dataset_from_directory",
    "keras.utils.audio_dataset_from_directory",
})
# Datasets of records read from files: serialized examples (often holding encoded images) and
# lines of text; none of them is in memory until a buffer keeps it.
FILE_RECORD_SOURCES = frozenset({"tensorflow.data.TFRecordDataset", "tensorflow.data.TextLineDataset"})
IN_MEMORY_SOURCES = frozenset({"tensorflow.data.Dataset.from_tensor_slices", "tensorflow.data.Dataset.from_tensors"})
CARDINALITY_CALLS = frozenset({"tensorflow.data.experimental.cardinality"})
# Gate triggers: a shuffle plus one of the names that make decoded elements.
SHUFFLE_TRIGGERS = frozenset(".shuffle&" + name for name in (
    "tensorflow.io", "tensorflow.image", "tensorflow.audio", "tensorflow.data", *DECODED_SOURCES))
WHOLE_DATASET_LITERAL = 10_000
# A buffer of this many elements costs hundreds of MiB whatever they hold: the buffer's own
# bookkeeping is a few hundred bytes per element (claim TFM302-million: about 580 bytes of RSS per
# small (string, int) element).
MILLION_ELEMENTS = 1_000_000
# Gate triggers of an in-memory cache (TFM303): a cache plus a name that reads or decodes files.
CACHE_TRIGGERS = frozenset(".cache&" + name for name in (
    "tensorflow.io", "tensorflow.image", "tensorflow.audio", "tensorflow.data", *DECODED_SOURCES))


class PipelineFacts:
    def __init__(self, context: TFContext) -> None:
        self.context = context
        self._decodes: dict[tuple[int, tuple[str, ...]], bool] = {}

    # The stages before a point of a pipeline ----------------------------------------------------
    def stages(self, expr: cst.BaseExpression, _depth: int = 0) -> list[tuple[str, cst.Call]] | None:
        """The method stages applied to the dataset ``expr`` (source first), following its
        method chain and the values earlier bound to the names in it (``ds = ds.map(f)``); the
        source call is reported as ``("source", call)``. None when the origin is unknown."""
        context = self.context
        found: list[tuple[str, cst.Call]] = []
        seen: set[int] = set()
        while _depth < 12:
            _depth += 1
            if isinstance(expr, cst.Call):
                func = expr.func
                if context.call_name(expr) is not None:
                    found.append(("source", expr))
                    return list(reversed(found))
                if isinstance(func, cst.Attribute):
                    found.append((func.attr.value, expr))
                    expr = func.value
                    continue
                return None
            if isinstance(expr, cst.Name):
                history = self._history(expr)
                if not history or id(history[-1]) in seen:
                    return None
                # ds = tf.data...; ds = ds.map(f); ds = ds.shuffle(n): walk back through them
                for value in reversed(history):
                    seen.add(id(value))
                expr = history[0]
                earlier: list[tuple[str, cst.Call]] = []
                for value in history[1:]:
                    earlier.extend(self._own_chain(value))
                found.extend(reversed(earlier))
                continue
            return None
        return None

    def _own_chain(self, value: cst.BaseExpression) -> list[tuple[str, cst.Call]]:
        """The stages of ``value`` down to the first Name (``ds.map(f).batch(b)`` -> map, batch)."""
        chain: list[tuple[str, cst.Call]] = []
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
            chain.append((value.func.attr.value, value))
            value = value.func.value
        return list(reversed(chain))

    def _history(self, read: cst.Name) -> list[cst.BaseExpression]:
        """The values bound to the name ``read`` in its scope up to the one it reads, when they
        form one pipeline: a first value that does not mention the name, then only values of the
        form ``name.<method>(...)``. A read inside the value being bound (``ds = ds.cache() if c
        else ds``) reads the binding before it."""
        context = self.context
        name = read.value
        found = context.binding(name, AT_POINT)
        if found is None or found.value is None or found.unpacked:
            return []
        values = found.scope.assignments.get(name) or []
        index = next((i for i, v in enumerate(values) if v is found.value), None)
        if index is None:
            return []
        if contains(found.value, read):  # `ds = ds.shuffle(n).map(f)`: the shuffle reads the ds before
            index -= 1
            if index < 0:
                return []
        history: list[cst.BaseExpression] = []
        for value in reversed(values[:index + 1]):
            if value is None:
                return []
            history.append(value)
            if not _rebuilds_from(value, name):
                break
        else:
            return []
        return list(reversed(history))

    # What the elements are -------------------------------------------------------------------------
    def decodes(self, func: cst.BaseExpression, _depth: int = 0,
                prefixes: tuple[str, ...] = DECODING_PREFIXES) -> bool:
        """``func`` (a lambda, a function of this module or ``self.method``) calls a decoder
        (``tf.io.read_file``, ``tf.image.decode_*``, ``tf.io.parse_*example``...), directly or
        through functions of this module."""
        context = self.context
        if _depth > 2:
            return False
        if isinstance(func, cst.Name):
            bound = context.value_of(func, AT_POINT)
            if isinstance(bound, cst.Call) and context.imported_name(bound.func) == "functools.partial" \
                    and bound.args:
                func = bound.args[0].value  # parse = functools.partial(_parse, size=...): its function
        named = context.qualified_name(func)
        if named is not None:
            return named.startswith(prefixes)  # ds.map(tf.io.read_file)
        if isinstance(func, cst.Lambda):
            body: cst.CSTNode = func.body
        else:
            name = func.value if isinstance(func, cst.Name) else (
                func.attr.value if isinstance(func, cst.Attribute)
                and isinstance(func.value, cst.Name) and func.value.value == "self" else None)
            if name is None:
                return False
            definition = context.functions.definition(name)
            if definition is None:
                return False
            body = definition.body
        key = (id(body), prefixes)
        if key in self._decodes:
            return self._decodes[key]
        self._decodes[key] = False
        result = False
        for node in [body, *context.nodes_in(body, into_functions=True)]:
            if not isinstance(node, cst.Call):
                continue
            called = context.call_name(node)
            if called is not None and called.startswith(prefixes):
                result = True
                break
            if called is None and self.decodes(node.func, _depth + 1, prefixes):
                result = True
                break
        self._decodes[key] = result
        return result

    def holds_decoded(self, stages: list[tuple[str, cst.Call]]) -> bool:
        """The elements after ``stages`` are decoded file content, and nothing cached them
        before (after ``cache()`` the data is resident anyway: the TFDS idiom)."""
        decoded = batched_source = False
        prefixes = DECODING_PREFIXES
        for method, call in stages:
            if method == "cache":
                return False
            if method == "source":
                source = self.context.call_name(call)
                batched_source = source in DECODED_SOURCES
                if source in IN_MEMORY_SOURCES:
                    # Arrays already in RAM (CIFAR from load_data): a resize makes no file's
                    # content resident; only reading files does.
                    prefixes = READING_PREFIXES
            elif method == "unbatch" and batched_source:
                decoded = True  # image_dataset_from_directory(...).unbatch(): one decoded image each
            elif method in ("map", "interleave", "flat_map") and call.args \
                    and self.decodes(call.args[0].value, prefixes=prefixes):
                decoded = True
        return decoded

    # Sizes ----------------------------------------------------------------------------------------
    def whole_dataset_size(self, expr: cst.BaseExpression, _depth: int = 0) -> str | None:
        """How ``expr`` says "the size of the whole dataset": ``len(x)``, a cardinality, a TFDS
        split's ``num_examples``, an integer of at least 10,000, or a name bound to one."""
        context = self.context
        if _depth > 6:
            return None
        value = context.int_value(expr, AT_POINT)
        if value is not None:
            return f"{value:,} elements" if value >= WHOLE_DATASET_LITERAL else None
        if isinstance(expr, cst.Name):
            default = self._parameter_default(expr.value)
            if default is not None:
                value = context.int_value(default)
                return (f"{value:,} elements, the default of {expr.value}"
                        if value is not None and value >= WHOLE_DATASET_LITERAL else None)
            bound = context.value_of(expr, AT_POINT)
            if bound is None or bound is expr:
                return None
            return self.whole_dataset_size(bound, _depth + 1)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply):
            return self.whole_dataset_size(expr.left, _depth + 1) or self.whole_dataset_size(expr.right, _depth + 1)
        if isinstance(expr, cst.Attribute) and expr.attr.value == "num_examples":
            return "the split's num_examples"
        if isinstance(expr, cst.Call):
            if dotted_name(expr.func) == "len" and expr.args:
                return "len(...) of the data"
            if context.call_name(expr) in CARDINALITY_CALLS:
                return "the dataset's cardinality"
            if isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "cardinality":
                return "the dataset's cardinality"
            if isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "numpy":
                return self.whole_dataset_size(expr.func.value, _depth + 1)  # ds.cardinality().numpy()
            if dotted_name(expr.func) == "int" and expr.args:
                return self.whole_dataset_size(expr.args[0].value, _depth + 1)
        return None

    def _parameter_default(self, name: str) -> cst.BaseExpression | None:
        """The default of the enclosing function's parameter ``name`` when the function never
        rebinds it: what the callers that do not pass it get."""
        function = self.context.function
        if function is None or name not in function.scope.params or name in function.scope.assignments:
            return None
        node = function.node
        if not isinstance(node, cst.FunctionDef):
            return None
        for param in (*node.params.params, *node.params.kwonly_params):
            if param.name.value == name:
                return param.default
        return None

    def holds_file_records(self, stages: list[tuple[str, cst.Call]]) -> str | None:
        """The source's name when the elements after ``stages`` are records read from files
        (``TFRecordDataset``, ``TextLineDataset``) as they were read: not mapped to something
        else (parsed features are small; decoded ones are ``holds_decoded``'s), not batched,
        filtered or cut, and nothing cached them before."""
        if not stages or stages[0][0] != "source":
            return None
        source = self.context.call_name(stages[0][1])
        if source not in FILE_RECORD_SOURCES:
            return None
        if any(method in ("cache", "map", "flat_map", "interleave", "batch", "padded_batch", "take", "filter")
               for method, _ in stages[1:]):
            return None
        return source.rsplit(".", 1)[-1]


def _rebuilds_from(value: cst.BaseExpression, name: str) -> bool:
    """``value`` is ``name.<method>(...)...``: the pipeline bound to ``name`` extended."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
        value = value.func.value
    return isinstance(value, cst.Name) and value.value == name
