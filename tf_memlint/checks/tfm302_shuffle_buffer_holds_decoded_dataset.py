"""TFM302 shuffle-buffer-holds-decoded-dataset: a tf.data shuffle buffer that holds the whole decoded
dataset in memory."""

from __future__ import annotations

import libcst as cst

from tf_memlint.evidence import ONCE, UNKNOWN, Repetition
from tf_memlint.facts.pipelines import MILLION_ELEMENTS, SHUFFLE_TRIGGERS, WHOLE_DATASET_LITERAL, PipelineFacts
from tf_memlint.gate import ANYWHERE, READS_FILES, Inside
from tf_memlint.grading import unit_costs
from tf_memlint.scopes import AT_POINT
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
    once_confidence = "high"
    repeats_with_place = False  # the harm is a size read off the code, not a repetition
    name = "shuffle-buffer-holds-decoded-dataset"
    summary = "Dataset.shuffle() buffer sized like the whole dataset on decoded elements"
    triggers = SHUFFLE_TRIGGERS
    # a buffer that may be "the whole dataset" (whole_dataset_size: a large literal, len(...), a
    # cardinality, num_examples, a name bound to one) and, below a million elements, decoded file
    # content or file records (READS_FILES)
    structure = Inside(ANYWHERE, {f".shuffle(buffer_size>={MILLION_ELEMENTS})"}) | (
        Inside(ANYWHERE, {f".shuffle(buffer_size>={WHOLE_DATASET_LITERAL})"}) & Inside(ANYWHERE, {READS_FILES}))

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
        count = self.context.int_value(size, AT_POINT)
        if count is not None and count >= MILLION_ELEMENTS and not _cached(func.value) and not (
                stages is not None and (facts.holds_decoded(stages) or facts.holds_file_records(stages)
                                        or any(method == "cache" for method, _ in stages))):
            message = (f"shuffle({code_of(size)}) keeps up to {count:,} elements in memory at once: "
                       f"hundreds of bytes each even for a scalar, plus the elements themselves; "
                       f"shuffle file names or indices, and keep this buffer small")
            per_element = unit_costs().get(self.code)
            if per_element is None or per_element["unit"] != "bytes":
                self.report(func.attr, message,
                            repetition=Repetition(UNKNOWN, basis="elements of unknown size", known=False))
                return
            # The buffer's own bookkeeping, measured per element whatever the element holds: a
            # floor on what a buffer of this many elements keeps once it is full.
            held = count * per_element["value"]
            self.report(func.attr, message, held_bytes=held, repetition=Repetition(
                ONCE, basis=f"at least ~{held / (1 << 20):,.0f} MiB once full ({per_element['quoted']} per "
                            f"{per_element['per']} before the elements themselves)"))
            return
        if stages is None:
            return
        if not facts.holds_decoded(stages):
            records = facts.holds_file_records(stages)
            if records is not None:  # raw records: their size is not in the code
                message = (f"shuffle({code_of(size)}) fills a buffer as large as the dataset ({whole}) with records "
                           f"read by {records}: the whole file content in RAM at once; shuffle the file names "
                           f"(interleave the shards) and keep this buffer small")
                if count is not None and count < MILLION_ELEMENTS:
                    # A round literal says nothing of the records' size or number (10,000 rows of
                    # eight floats, a book's housing example): a buffer sized from the data does,
                    # and a million elements cost hundreds of MiB whatever they hold.
                    self.report(func.attr, message, once_confidence="low", repetition=Repetition(
                        ONCE, basis=f"a literal buffer of {records} records of unknown size"))
                else:
                    self.report(func.attr, message, repetition=Repetition(
                        UNKNOWN, basis=f"{records} records of unknown size", known=False))
            return
        self.report(func.attr, f"shuffle({code_of(size)}) fills a buffer as large as the dataset ({whole}) with "
                          f"decoded elements: all of them in RAM at once; shuffle the file names before "
                          f"decoding and keep this buffer small (e.g. 1000)")


def _cached(dataset: cst.BaseExpression) -> bool:
    """``ds.cache().shuffle(n)``: cached in the chain written before the shuffle, wherever ``ds``
    comes from (the data is resident anyway; the buffer adds at most one copy)."""
    while isinstance(dataset, cst.Call) and isinstance(dataset.func, cst.Attribute):
        if dataset.func.attr.value == "cache":
            return True
        dataset = dataset.func.value
    return False
