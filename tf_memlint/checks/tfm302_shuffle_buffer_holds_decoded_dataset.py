"""TFM302 shuffle-buffer-holds-decoded-dataset: a tf.data shuffle buffer that holds the whole decoded
dataset in memory."""

from __future__ import annotations

import libcst as cst

from tf_memlint.facts.pipelines import SHUFFLE_TRIGGERS, PipelineFacts
from tf_memlint.rule import Rule, register
from tf_memlint.syntax import argument, code_of


@register
class ShuffleBufferHoldsDecodedDataset(Rule):
    """``Dataset.shuffle(buffer_size)`` sized like the whole dataset, on decoded file content.

    Bad::

        ds = tf.data.Dataset.list_files("images/*.jpg")
        ds = ds.map(load_and_decode)          # tf.io.read_file + tf.image.decode_jpeg
        ds = ds.shuffle(len(files))           # every decoded image in the buffer

    Good::

        ds = tf.data.Dataset.list_files("images/*.jpg")
        ds = ds.shuffle(len(files))           # shuffle the file names: cheap strings
        ds = ds.map(load_and_decode).shuffle(1000)

    Fires only when the buffer is "the whole dataset" (``len(...)``, a cardinality, a TFDS
    split's ``num_examples``, an integer of at least 10,000) and the shuffled elements are known
    to be decoded: a ``map`` before the shuffle whose function (a lambda or a function of this
    module, followed through its calls) reads or decodes files (``tf.io.read_file``,
    ``tf.image.decode_*``, ``tf.io.parse_*example``, ``tf.image.resize``...), or
    ``image_dataset_from_directory(...).unbatch()``. Silent after ``cache()`` (the data is
    resident anyway), on file names, on in-memory arrays, and for small buffers.
    """

    code = "TFM302"
    # Opt-in: 4 of 7 findings worth acting on in two fresh held-out sets
    # (rules/TFM302.md): the buffer counts elements, and small decoded images fill it cheaply.
    default_enabled = False
    name = "shuffle-buffer-holds-decoded-dataset"
    summary = "Dataset.shuffle() buffer sized like the whole dataset on decoded elements"
    triggers = SHUFFLE_TRIGGERS

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "shuffle"):
            return
        size = argument(node, 0, "buffer_size")
        if size is None:
            return
        facts = self.context.facts_of(PipelineFacts)
        whole = facts.whole_dataset_size(size)
        if whole is None:
            return
        stages = facts.stages(func.value)
        if stages is None or not facts.holds_decoded(stages):
            return
        self.report(func.attr, f"shuffle({code_of(size)}) fills a buffer as large as the dataset ({whole}) with "
                          f"decoded elements: all of them in RAM at once; shuffle the file names before "
                          f"decoding and keep this buffer small (e.g. 1000)")
