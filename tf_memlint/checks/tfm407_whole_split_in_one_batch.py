"""TFM407 whole-split-in-one-batch: a whole dataset split run through a model as one batch."""

from __future__ import annotations

import libcst as cst

from tf_memlint.context import AT_POINT
from tf_memlint.facts.splits import CONVOLUTION_TRIGGERS, SPLIT_TRIGGERS, Split
from tf_memlint.rule import Rule, register
from tf_memlint.syntax import argument, code_of

# Keras methods that run their input as one batch, and the batching method to use instead.
_ONE_BATCH_METHODS = {"predict_on_batch": "predict", "test_on_batch": "evaluate", "train_on_batch": "fit"}
# Keras methods that batch their input, and the position of their batch_size argument.
_BATCH_SIZE_POSITION = {"predict": 1, "evaluate": 2, "fit": 2}
_HARM = "peak memory grows with the split, not with a batch"


@register
class WholeSplitInOneBatch(Rule):
    """A whole train/test split run through a model as one batch.

    Bad::

        (x_train, y_train), (x_test, y_test) = keras.datasets.mnist.load_data()
        ...
        probs = model(x_test / 255.0)                                 # 10,000 images at once
        model.evaluate(x_test, y_test, batch_size=len(x_test))
        sess.run(accuracy, feed_dict={x: mnist.test.images, y_: mnist.test.labels})

    Good::

        probs = model.predict(x_test / 255.0, batch_size=256)
        model.evaluate(x_test, y_test)                                # batches of 32

    Fires only when the array is known to hold a whole split (``context.splits``): unpacked from
    ``keras.datasets.<mnist|fashion_mnist|cifar10|cifar100|imdb|reuters>.load_data()`` or read
    from ``input_data.read_data_sets(...)`` as ``mnist.test.images``, directly or through
    sample-preserving steps (``/ 255.0``, ``.astype``, ``.reshape(-1, ...)``...). The forms:
    calling a known Keras model on it, ``predict_on_batch``/``test_on_batch``/``train_on_batch``
    on it, ``predict``/``evaluate``/``fit`` on it with ``batch_size`` equal to a whole split
    (``len(x_test)``, ``x_test.shape[0]``, or a number at least the split's size), and a TF1
    ``feed_dict`` holding it. Silent for slices, single samples, datasets, unknown arrays and
    the default ``batch_size``.
    """

    code = "TFM407"
    once_confidence = "high"
    repeats_with_place = False  # the harm is a size read off the code, not a repetition
    name = "whole-split-in-one-batch"
    summary = "a whole train/test split run through a model as one batch: peak memory grows with the split"
    # a split loader and a convolutional network in the same module
    triggers = frozenset(f"{split}&{conv}" for split in SPLIT_TRIGGERS for conv in CONVOLUTION_TRIGGERS)

    def visit_Call(self, node: cst.Call) -> None:
        context = self.context
        if not context.splits.convolutional:
            return  # a dense network's whole-split activations are tens of MiB: harmless
        func = node.func
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in _ONE_BATCH_METHODS:
                self._one_batch_method(node, func, method)
                return
            if method in _BATCH_SIZE_POSITION:
                self._batch_size(node, func, method)
                return
            if context.sessions.is_session_run(node):
                self._feed_dict(node, func)
                return
        if context.keras.is_model(func):
            x = argument(node, 0, "inputs")
            split = None if x is None else context.splits.whole_split(x)
            if split is not None and not _dense(context, func):
                model, data = code_of(func), code_of(x)
                self.report(node, f"{model}({data}) runs {split} as one batch: {_HARM}; use "
                                  f"{model}.predict({data}, batch_size=...) or loop over a batched "
                                  f"tf.data.Dataset")

    def _one_batch_method(self, node: cst.Call, func: cst.Attribute, method: str) -> None:
        if self.context.keras.overrides(func.value, method):
            return
        x = argument(node, 0, "x")
        split = None if x is None else self.context.splits.whole_split(x)
        if split is None or _dense(self.context, func.value):
            return
        model, data, instead = code_of(func.value), code_of(x), _ONE_BATCH_METHODS[method]
        self.report(node, f"{model}.{method}({data}) runs {split} as one batch: {_HARM}; use "
                          f"{model}.{instead}({data}, ..., batch_size=...) instead")

    def _batch_size(self, node: cst.Call, func: cst.Attribute, method: str) -> None:
        context = self.context
        if context.keras.overrides(func.value, method):
            return
        x, batch_size = argument(node, 0, "x"), argument(node, _BATCH_SIZE_POSITION[method], "batch_size")
        if x is None or batch_size is None:
            return
        split = context.splits.whole_split(x)
        if split is None or not _whole_split_sized(context, batch_size, split) or _dense(context, func.value):
            return
        model, data = code_of(func.value), code_of(x)
        more = "" if method == "predict" else ", ..."
        self.report(node, f"{model}.{method}({data}{more}, batch_size={code_of(batch_size)}) makes {split} "
                          f"one batch: {_HARM}; use a fixed batch_size (the default is 32)")

    def _feed_dict(self, node: cst.Call, func: cst.Attribute) -> None:
        context = self.context
        on_session = func.attr.value == "run" and context.sessions.is_session(func.value)
        feed = argument(node, 1, "feed_dict") if on_session else _keyword(node, "feed_dict")
        if feed is None:
            return
        if isinstance(feed, cst.Name):
            feed = context.value_of(feed, AT_POINT)
        if not isinstance(feed, cst.Dict):
            return
        fetched = argument(node, 0, "fetches") if on_session else func.value
        if fetched is not None and _dense(context, fetched):
            return
        for element in feed.elements:
            if not isinstance(element, cst.DictElement):
                continue
            split = context.splits.whole_split(element.value)
            if split is not None:
                self.report(node, f"{code_of(func)}() feeds {code_of(element.value)}, {split}, as one batch: "
                                  f"{_HARM}; run it over batches (slices or next_batch) and average")
                return


def _dense(context, computed: cst.BaseExpression) -> bool:
    """What is run (a model, a fetched tensor) is read back to layers and ops none of which is a
    convolution: a dense network beside a CNN in the same module (a linear softmax before the
    deep MNIST model, a distilled student), whose whole-split activations are tens of MiB."""
    return context.splits.reaches_convolution(computed) is False


def _whole_split_sized(context, batch_size: cst.BaseExpression, split: Split) -> bool:
    """``batch_size`` is the size of a whole split: ``len(x_test)``, ``x_test.shape[0]``, or a
    number at least ``split``'s samples."""
    value = context.int_value(batch_size, AT_POINT)
    if value is not None:
        return value >= split.samples
    return context.splits.split_sized(batch_size) is not None


def _keyword(call: cst.Call, keyword: str) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    return None
