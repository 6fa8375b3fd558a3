"""Shapes read off data that varies per item or per request (TFM107): a text tokenized to its own
length, an image read at its own size, an element of a list of sizes picked by the loop counter,
the input a per-request entry point is given; and callees that trace once per new shape besides
a known ``tf.function``: an object restored by ``tf.saved_model.load`` / ``hub.load``.

What the code shows here is where the shape comes from, not that the shapes differ: the texts
may all be one length, the images one size. A finding built on these facts is an inference
(graded medium), unlike TFM107's slices and sizes that the loop counter moves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from tf_memlint.facts.tracing import NUMPY_SHAPED, TF_SHAPED_FACTORIES
from tf_memlint.scopes import AT_POINT
from tf_memlint.syntax import argument, code_of, contains, dotted_name, target_names

if TYPE_CHECKING:
    from tf_memlint.context import TFContext

# Loaders whose result is a restored object: calling it (or a tf.function attribute of it)
# traces the restored function again per new input shape when it was saved without an
# input_signature (measured: 100 traces for 100 lengths; with one, 1). Its ``signatures`` are
# concrete functions: no trace at all (measured: 0), so a call through them is not one of these.
RESTORED_LOADERS = frozenset({"tensorflow.saved_model.load", "tensorflow.compat.v2.saved_model.load"})
IMPORTED_RESTORED_LOADERS = frozenset({"tensorflow_hub.load"})
RESTORED_TRIGGERS = frozenset({"tensorflow.saved_model.load", "~hub"})
# Methods of a tokenizer that turn one text into ids of the text's own length.
TOKENIZER_METHODS = frozenset({"encode", "encode_plus", "tokenize", "texts_to_sequences", "convert_tokens_to_ids",
                               "encode_batch", "batch_encode_plus", "__call__"})
# Readers of one image at the size it has on disk (as imported, then canonical names).
IMAGE_READERS = frozenset({"cv2.imread", "PIL.Image.open", "imageio.imread", "imageio.v2.imread",
                           "imageio.v3.imread", "skimage.io.imread", "matplotlib.pyplot.imread",
                           "tensorflow.io.decode_image", "tensorflow.io.decode_jpeg", "tensorflow.io.decode_png",
                           "tensorflow.image.decode_image", "tensorflow.image.decode_jpeg",
                           "tensorflow.image.decode_png", "keras.utils.load_img",
                           "keras.preprocessing.image.load_img"})
# Calls and methods whose result has the shape of their (first) argument or receiver, give or
# take an axis of one: what a one-sample batch is made with, conversions, scaling, colours.
SHAPE_KEEPING_CALLS = frozenset({
    "numpy.array", "numpy.asarray", "numpy.float32", "numpy.expand_dims", "numpy.ascontiguousarray",
    "tensorflow.constant", "tensorflow.convert_to_tensor", "tensorflow.cast", "tensorflow.expand_dims",
    "tensorflow.image.convert_image_dtype", "keras.utils.img_to_array", "keras.preprocessing.image.img_to_array",
    "cv2.cvtColor", "numpy.stack", "tensorflow.stack",
})
SHAPE_KEEPING_METHODS = frozenset({"astype", "convert", "numpy", "copy", "float", "unsqueeze"})
SHAPE_KEEPING_SUFFIXES = ("preprocess_input",)
# Keywords that pad a tokenizer's output to one length.
_FIXED_PADDING = ("max_length",)


class DataShapeFacts:
    def __init__(self, context: TFContext) -> None:
        self.context = context

    # Callees ---------------------------------------------------------------------------------
    def restored_callee(self, func: cst.BaseExpression) -> str | None:
        """The loader when calling ``func`` calls a restored function: ``m(x)`` or ``self.m(x)``
        with ``m`` bound to ``tf.saved_model.load(...)`` / ``hub.load(...)``. Not
        ``m.signatures[k](x)``, nor ``f = m.signatures[k]; f(x)``: a concrete function."""
        value = self._value(func)
        return self._loader(value) if value is not None else None

    def _value(self, expr: cst.BaseExpression) -> cst.BaseExpression | None:
        context = self.context
        if isinstance(expr, cst.Name):
            found = context.binding(expr.value, AT_POINT) or context.binding(expr.value)
            return None if found is None or found.unpacked else found.value
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            return context.value_of(expr, AT_POINT)
        return None

    def restored_loader(self, value: cst.Call) -> str | None:
        """The loader ``value`` calls, if it restores a SavedModel."""
        return self._loader(value)

    def _loader(self, value: cst.BaseExpression) -> str | None:
        if not isinstance(value, cst.Call):
            return None
        name = self.context.call_name(value)
        if name in RESTORED_LOADERS:
            return name
        imported = self.context.imported_name(value.func)
        return imported if imported in IMPORTED_RESTORED_LOADERS else None

    # Where a shape comes from ---------------------------------------------------------------
    def source(self, expr: cst.BaseExpression, _earlier: dict | None = None,
               _depth: int = 0) -> tuple[cst.Call | cst.Name, str] | None:
        """(origin, why) when ``expr`` has the shape of data read per item: a tokenizer's output
        not padded to a fixed length, an image read at its own size, or (origin a Name) a
        parameter of the enclosing function passed on as is; followed through names, one-sample
        batches, conversions and element-wise arithmetic. None where a call on the way may fix
        the shape (a resize, a pad, anything not known to keep it)."""
        earlier = dict(_earlier or {})
        if _depth > 10:
            return None
        if isinstance(expr, (cst.List, cst.Tuple)):  # model([ids, mask, types]), [ids]
            for element in expr.elements:
                found = self.source(element.value, earlier, _depth + 1)
                if found is not None:
                    return found
            return None
        if isinstance(expr, cst.Dict):
            for element in expr.elements:
                if isinstance(element, cst.DictElement):
                    found = self.source(element.value, earlier, _depth + 1)
                    if found is not None:
                        return found
            return None
        if isinstance(expr, cst.Name):
            return self._through_name(expr, earlier, _depth)
        if isinstance(expr, cst.Subscript):
            if all(self._keeps_shape_index(e.slice) for e in expr.slice):
                return self.source(expr.value, earlier, _depth + 1)  # enc["input_ids"], x[None]
            return None
        if isinstance(expr, cst.Attribute):
            if expr.attr.value in ("input_ids", "ids", "attention_mask", "token_type_ids"):
                return self.source(expr.value, earlier, _depth + 1)
            return None
        if isinstance(expr, cst.BinaryOperation) and not isinstance(expr.operator, cst.MatrixMultiply):
            return self.source(expr.left, earlier, _depth + 1) or self.source(expr.right, earlier, _depth + 1)
        if not isinstance(expr, cst.Call):
            return None
        why = self._reads_data(expr)
        if why is not None:
            return expr, why
        if self._is_map_over(expr):  # map(lambda t: tf.constant(t)[None], (ids, mask))
            return self.source(expr.args[1].value, earlier, _depth + 1)
        inner = self._kept_from(expr)
        return self.source(inner, earlier, _depth + 1) if inner is not None else None

    def _through_name(self, expr: cst.Name, earlier: dict, depth: int):
        context = self.context
        name = expr.value
        found = context.binding(name, AT_POINT)
        if found is None:
            return None
        scope = found.scope
        values = earlier.get(name)
        if values is None:
            if name in scope.params and found.value is None and not scope.assignments.get(name):
                if context.function is None or scope is not context.function.scope \
                        or self._python_value_param(context.function.node, name):
                    return None
                return expr, f"{name}, given by the caller"
            if found.value is None:
                return None
            values = scope.assignments.get(name, [])
            if found.unpacked:
                # `ids, mask = map(f, (ids, mask))`: the names on the right are the ones bound
                # before (the last unpacking of the name is the one in force here)
                index = max((i for i, v in enumerate(values) if v is None), default=None)
                if index is None:
                    return None
                earlier[name] = values[:index]
                return self.source(found.value, earlier, depth + 1)
            index = next((i for i, v in enumerate(values) if v is found.value), None)
            if index is None:
                return None
            values = values[:index + 1]
        if not values or values[-1] is None:
            return None
        value = values[-1]
        earlier[name] = values[:-1]  # `x = f(x)` reads the x bound before
        return self.source(value, earlier, depth + 1)

    @staticmethod
    def _python_value_param(function: cst.CSTNode, name: str) -> bool:
        """``agent: str``, ``k: int``: a Python value, not a tensor (TFM104/TFM110 judge those)."""
        if not isinstance(function, cst.FunctionDef):
            return False
        for param in [*function.params.params, *function.params.kwonly_params, *function.params.posonly_params]:
            if param.name.value == name and param.annotation is not None:
                return dotted_name(param.annotation.annotation) in ("str", "int", "float", "bool")
        return False

    @staticmethod
    def _keeps_shape_index(index: cst.BaseSlice) -> bool:
        """``["input_ids"]`` (a key), ``[None]``, ``[np.newaxis]``, ``[...]``: the data's own shape."""
        if isinstance(index, cst.Slice):
            return index.lower is None and index.upper is None and index.step is None  # x[:, None]
        value = index.value
        if isinstance(value, (cst.SimpleString, cst.Ellipsis)):
            return True
        if isinstance(value, cst.Name):
            return value.value == "None"
        return isinstance(value, cst.Attribute) and value.attr.value == "newaxis"

    def _kept_from(self, call: cst.Call) -> cst.BaseExpression | None:
        """What ``call`` keeps the shape of: its first argument (np.array(x), tf.cast(x, ...)),
        or its receiver (x.astype(...), img.convert("RGB")); None for any other call."""
        context = self.context
        name = context.call_name(call) or context.imported_name(call.func) or ""
        if name in SHAPE_KEEPING_CALLS or name.endswith(SHAPE_KEEPING_SUFFIXES):
            first = argument(call, 0, "value") or argument(call, 0, "x") or argument(call, 0, "input")
            if name in ("numpy.stack", "tensorflow.stack") and not (
                    isinstance(first, (cst.List, cst.Tuple)) and len(first.elements) == 1):
                return None  # a stack of many: its own batch
            return first
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in SHAPE_KEEPING_METHODS \
                and context.imported_name(call.func) is None:
            return call.func.value
        return None

    def _is_map_over(self, call: cst.Call) -> bool:
        """``map(lambda t: <shape-keeping calls on t>, (a, b, c))``."""
        if not (isinstance(call.func, cst.Name) and call.func.value == "map" and len(call.args) == 2):
            return False
        fn = call.args[0].value
        if not isinstance(fn, cst.Lambda) or len(fn.params.params) != 1:
            return False
        param = fn.params.params[0].name.value
        body = fn.body
        for _ in range(8):
            if isinstance(body, cst.Name):
                return body.value == param
            if isinstance(body, cst.Subscript) and all(self._keeps_shape_index(e.slice) for e in body.slice):
                body = body.value
            elif isinstance(body, cst.Call) and self._kept_from(body) is not None:
                body = self._kept_from(body)
            else:
                return False
        return False

    def _reads_data(self, call: cst.Call) -> str | None:
        """Why ``call`` reads data at its own shape: a tokenizer not padding to a fixed length,
        an image reader not resizing."""
        context = self.context
        name = context.call_name(call) or context.imported_name(call.func)
        if name in IMAGE_READERS:
            if argument(call, 99, "target_size") is not None:
                return None  # load_img(path, target_size=(224, 224))
            return f"an image read at its own size ({code_of(call.func)})"
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in TOKENIZER_METHODS:
            receiver = func.value
        elif isinstance(func, (cst.Name, cst.Attribute)):
            receiver = func  # tokenizer(text)
        else:
            return None
        if not self._is_tokenizer(receiver) or self._pads_to_fixed_length(call):
            return None
        return f"a text tokenized to its own length ({code_of(call.func)}(...) without padding to max_length)"

    def _is_tokenizer(self, receiver: cst.BaseExpression) -> bool:
        words = dotted_name(receiver) or ""
        if "tokenizer" in words.rsplit(".", 1)[-1].lower():
            return True
        value = self._value(receiver)
        return isinstance(value, cst.Call) and "tokenizer" in (dotted_name(value.func) or "").lower()

    @staticmethod
    def _pads_to_fixed_length(call: cst.Call) -> bool:
        """``padding="max_length"`` or ``pad_to_max_length=True``: one length for every text."""
        for arg in call.args:
            if arg.keyword is None:
                continue
            key, value = arg.keyword.value, arg.value
            if key == "padding" and isinstance(value, cst.SimpleString) and value.evaluated_value in _FIXED_PADDING:
                return True
            if key == "padding" and not isinstance(value, (cst.SimpleString, cst.Name)):
                return True  # PaddingStrategy.MAX_LENGTH, a variable: not ours to judge
            if key == "padding" and isinstance(value, cst.Name) and value.value not in ("True", "False", "None"):
                return True
            if key == "pad_to_max_length" and not (isinstance(value, cst.Name) and value.value in ("False", "None")):
                return True
        return False

    # Per item ---------------------------------------------------------------------------------
    def varies_in(self, origin: cst.Call, loop: cst.For | cst.While) -> bool:
        """``origin`` (a read of data) runs in ``loop`` on something the loop changes: the loop's
        target, or a name bound in its body (``for path in paths: cv2.imread(path)``)."""
        if not contains(loop, origin):
            return False
        bound = set(target_names(loop.target)) if isinstance(loop, cst.For) else set()
        for node in self.context.nodes_in(loop.body):
            if isinstance(node, cst.Assign):
                for target in node.targets:
                    bound.update(target_names(target.target))
            elif isinstance(node, (cst.For, cst.CompFor)):
                bound.update(target_names(node.target))
        used = [n for arg in origin.args for n in [arg.value, *self.context.nodes_in(arg.value)]
                if isinstance(n, cst.Name)]
        return any(n.value in bound for n in used)

    # Sizes picked from a list by the loop counter --------------------------------------------
    def picked_size(self, expr: cst.BaseExpression, _depth: int = 0) -> tuple[cst.For | cst.While, str] | None:
        """(loop, why) when ``expr`` is a tensor made with a dimension taken from a sequence by
        the loop counter: ``tf.random.normal([1, size[i], size[i], 3])``, ``np.zeros((sizes[k], 8))``;
        not from a literal list written in the code (a fixed set of buckets, TFM107 stays silent)."""
        context = self.context
        if _depth > 4:
            return None
        if isinstance(expr, cst.Name):
            found = context.binding(expr.value, AT_POINT)
            if found is None or found.unpacked or found.value is None or found.value is expr:
                return None
            inner = self.picked_size(found.value, _depth + 1)
            return inner if inner is not None and contains(inner[0], found.value) else None
        if not isinstance(expr, cst.Call):
            return None
        name = context.call_name(expr)
        numpy = context.numpy_name(expr.func)
        if name is not None:
            slot = TF_SHAPED_FACTORIES.get(name)
        else:
            slot = NUMPY_SHAPED.get(numpy[len("numpy."):]) if numpy is not None else None
        if slot is None:
            return None
        shape = argument(expr, *slot)
        dims = [e.value for e in shape.elements] if isinstance(shape, (cst.List, cst.Tuple)) else [shape]
        for dim in dims:
            if not (isinstance(dim, cst.Subscript) and isinstance(dim.value, cst.Name) and len(dim.slice) == 1
                    and isinstance(dim.slice[0].slice, cst.Index)):
                continue
            loop = context.tracing.varying_python_number(dim.slice[0].slice.value)
            sizes = context.value_of(dim.value, AT_POINT) or context.value_of(dim.value)
            if loop is None or isinstance(sizes, (cst.List, cst.Tuple, cst.Set)):
                continue
            return loop, f"a dimension {code_of(dim)} picked from {dim.value.value} by the loop counter"
        return None
