"""TFM303 dataset-cached-in-memory: ``Dataset.cache()`` without a filename on data read from files."""

from __future__ import annotations

import libcst as cst

from tf_memlint.evidence import ONCE, Repetition
from tf_memlint.facts.pipelines import CACHE_TRIGGERS, DECODED_SOURCES, READING_PREFIXES, PipelineFacts
from tf_memlint.gate import ANYWHERE, READS_FILES, Inside
from tf_memlint.rule import Rule, register
from tf_memlint.syntax import argument, code_of

# Sources of records stored in shards: the formats of datasets too large for a folder of files.
SHARDED_SOURCES = frozenset({"tensorflow.data.TFRecordDataset"})


@register
class DatasetCachedInMemory(Rule):
    """``cache()`` with no filename after the stages that read or decode files.

    Bad::

        ds = tf.data.TFRecordDataset(shards)
        ds = ds.map(parse_and_decode)         # tf.io.decode_jpeg / decode_raw
        ds = ds.cache()                       # every decoded element kept in RAM

    Good::

        ds = tf.data.TFRecordDataset(shards)
        ds = ds.map(parse_and_decode)
        ds = ds.cache("/scratch/train.cache")  # the same cache, on disk

    An in-memory cache keeps every element it has seen for as long as the dataset lives:
    resident memory grows with the dataset, not with the batch. Reported when the cached
    elements are file content (a ``map`` whose function reads files or decodes images, audio or
    raw bytes, followed through ``functools.partial`` and functions of this module, or
    ``image_dataset_from_directory``). Silent after ``take(n)``, for ``cache(filename)``, on
    records that are only parsed, and on in-memory sources (``from_tensor_slices(arrays)``,
    a TFDS split: resident or small by design).
    """

    code = "TFM303"
    # The size is not in the code: the images tutorials cache 3,670 decoded flowers on purpose
    # (all 7 findings on the development corpus were such tutorials), and the same lines hold
    # an ImageNet-sized set. Low, and high when the files are TFRecord shards: a format chosen
    # for data too large for a directory of files (both such findings read so far were true).
    once_confidence = "low"
    repeats_with_place = False  # the harm is the dataset's size, not how often this line runs
    name = "dataset-cached-in-memory"
    summary = "Dataset.cache() without a filename on decoded file content keeps the whole dataset in RAM"
    triggers = CACHE_TRIGGERS
    # the cached elements are decoded only after a source of DECODED_SOURCES or a map whose
    # function calls a READING_PREFIXES name (PipelineFacts.decodes): names the module must spell
    structure = Inside(ANYWHERE, {READS_FILES})

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "cache"):
            return
        filename = argument(node, 0, "filename")
        if filename is not None and not (isinstance(filename, cst.SimpleString) and filename.evaluated_value == ""):
            return  # a file cache: on disk, not in memory
        facts = self.context.facts_of(PipelineFacts)
        stages = facts.stages(func.value)
        if stages is None:
            return
        stages = [(method, call) for method, call in stages if call is not node]  # `ds = ds.cache()`
        methods = [method for method, _call in stages]
        if "cache" in methods or "take" in methods:
            return  # cached already, or bounded by take(n)
        source = self.context.call_name(stages[0][1]) if methods[0] == "source" else None
        decoded = source in DECODED_SOURCES or any(
            method in ("map", "interleave", "flat_map") and call.args
            and facts.decodes(call.args[0].value, prefixes=READING_PREFIXES) for method, call in stages)
        if decoded:
            sharded = source in SHARDED_SOURCES
            shown = code_of(func.value)
            self.report(func.attr, f"{shown if len(shown) < 30 else 'the dataset'}.cache() keeps every element "
                                   f"read from files in RAM for as long as the dataset lives: memory grows with "
                                   f"the dataset, not the batch; cache to a file (cache(path)) unless the whole "
                                   f"set is known to fit",
                        once_confidence="high" if sharded else None,
                        repetition=Repetition(ONCE, basis=f"{source.rsplit('.', 1)[-1]} shards: a format for data "
                                                          f"too large for a folder of files") if sharded else None)
