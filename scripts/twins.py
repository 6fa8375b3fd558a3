#!/usr/bin/env python
"""Do the stdlib-ast twins agree with the LibCST facts? The gate and the project tables read the
stdlib tree for speed; the rules read LibCST. Both resolve names through the same import
aliases and canonical names, and the project tables ask the same definitions as the function
summaries (facts/functions.py: effect kinds, ``UNDONE_BY``, ``is_cache_decorator``).

    python scripts/twins.py fixtures/ /work/corpus/dev    # "names differ: 0", "the gate misses 0" expected

Prints, for the files given:

* names: every call of every module (ASCII sources, matched by their span), the canonical name
  ``TFContext.call_name`` gives it against ``ModuleFacts.qualified`` (the gate's and project.py's);
* counted loops: every ``for``/``while`` that ``TracingFacts.loop_kind`` counts (a Python loop of
  known count) must be one the gate's ``_may_be_counted`` passes (COUNTED_LOOP);
* whole-dataset buffers: every ``.shuffle(size)`` whose size ``PipelineFacts.whole_dataset_size``
  reads as the whole dataset, or whose literal reaches a million, must be one the gate's
  ``_may_reach`` passes at that bound (TFM302's ``.shuffle(buffer_size>=N)``);
* effects (informational): for the top-level functions and methods, the effects project.py
  computes for the module alone against the LibCST summaries. These differ by design where the
  twin is coarser (summaries follow local helpers, parameters and graph mode more closely);
  ``--effects`` lists each difference.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import Counter
from pathlib import Path


def call_names(raw: bytes) -> list[tuple[int, str | None, str | None]] | None:
    """(line, LibCST name, stdlib name) of every call of the module, or None when it cannot be
    compared (not ASCII, not parsable)."""
    import libcst as cst

    both = _both_trees(raw)
    if both is None:
        return None
    tree, index, _, context, spans = both
    twins = {_span(n): n for n in ast.walk(tree) if isinstance(n, ast.Call)}
    found = []
    for node, span in spans.items():
        twin = twins.get(span) if isinstance(node, cst.Call) else None
        if twin is not None:
            found.append((span[0], context.call_name(node), index.facts.qualified(twin.func)))
    return found


def _both_trees(raw: bytes):
    """(stdlib tree, its gate index, LibCST module, its context, LibCST node -> span), or None."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    from tf_memlint.context import TFContext
    from tf_memlint.gate import ModuleFacts

    if not raw.isascii():
        return None
    try:
        tree = ast.parse(raw)
        module = cst.parse_module(raw)
    except (SyntaxError, ValueError, RecursionError, cst.ParserSyntaxError):
        return None
    facts = ModuleFacts(tree)
    if facts._index is None:  # built by the walk a gate question runs first
        facts._walk()
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    spans = {node: (p.start.line, p.start.column, p.end.line, p.end.column) for node, p in positions.items()}
    return tree, facts._index, module, TFContext(module), spans


def _span(node: ast.AST) -> tuple:
    return node.lineno, node.col_offset, node.end_lineno, node.end_col_offset


def counted_loops(raw: bytes) -> list[tuple[int, str, bool]] | None:
    """(line, what loop_kind says, whether the gate may count it) for every loop of the module."""
    import libcst as cst

    both = _both_trees(raw)
    if both is None:
        return None
    tree, index, _, context, spans = both
    twins = {_span(n): n for n in ast.walk(tree) if isinstance(n, (ast.For, ast.While))}
    found = []
    for node, span in spans.items():
        twin = twins.get(span) if isinstance(node, (cst.For, cst.While)) else None
        if twin is not None:
            found.append((span[0], context.tracing.loop_kind(node)[0], index._may_be_counted(twin)))
    return found


def shuffle_buffers(raw: bytes) -> list[tuple[int, bool, bool]] | None:
    """(line, whether TFM302's facts size the buffer (the whole dataset, or a million elements),
    whether the gate may) for every ``.shuffle(...)`` call with an argument."""
    import libcst as cst

    from tf_memlint.facts.pipelines import MILLION_ELEMENTS, WHOLE_DATASET_LITERAL, PipelineFacts

    both = _both_trees(raw)
    if both is None:
        return None
    tree, index, _, context, spans = both
    twins = {_span(n): n for n in ast.walk(tree) if isinstance(n, ast.Call)}
    pipelines = context.facts_of(PipelineFacts)
    found = []
    for node, span in spans.items():
        if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
                and node.func.attr.value == "shuffle" and node.args):
            continue
        twin = twins.get(span)
        given = twin and [*twin.args, *(k.value for k in twin.keywords)]
        if not given:
            continue
        size = node.args[0].value
        literal = context.int_value(size)
        sized = pipelines.whole_dataset_size(size) is not None
        may = index._may_reach(given[0], WHOLE_DATASET_LITERAL)
        if literal is not None and literal >= MILLION_ELEMENTS:
            sized, may = True, index._may_reach(given[0], MILLION_ELEMENTS)
        found.append((span[0], sized, may))
    return found


def effects(path: str, raw: bytes) -> dict[str, tuple[set[str], set[str]]] | None:
    """{function: (LibCST summary effects, project.py effects)} for the module alone."""
    import libcst as cst

    from tf_memlint import project
    from tf_memlint.context import TFContext
    from tf_memlint.facts.functions import FIT, TF_FUNCTION

    try:
        ast.parse(raw)  # project.summarize parses it again, as the command does
        module = cst.parse_module(raw)
    except (SyntaxError, ValueError, RecursionError, cst.ParserSyntaxError):
        return None
    graph_mode = project.text_facts(raw)["graph_words"]
    twin = project._Unit(path, project.summarize(raw, provider=True, graph_mode=graph_mode), provider=True)
    project._tables({twin.key: twin}, {path: raw}, set(), {path: twin.key})
    context = TFContext(module)
    defs: dict[str, cst.FunctionDef] = {}
    for node in module.body:
        if isinstance(node, cst.FunctionDef):
            defs[node.name.value] = node
        elif isinstance(node, cst.ClassDef):
            for item in node.body.body:
                if isinstance(item, cst.FunctionDef):
                    defs.setdefault(f"{node.name.value}.{item.name.value}", item)
                    if item.name.value == "__init__":
                        defs.setdefault(node.name.value, item)
    untracked = {FIT, TF_FUNCTION}  # not in the project tables
    return {name: (set(context.functions.summary(d).effects) - untracked, set(twin.effects.get(name, {})))
            for name, d in defs.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--effects", action="store_true", help="list each difference of effects")
    args = parser.parse_args(argv)

    from tf_memlint.files import discover
    from tf_memlint.names import MENTIONS_TF

    names = Counter()
    kinds: Counter = Counter()
    gate: Counter = Counter()
    for path, error in discover(args.paths, exclude=[]):
        if error is not None or not path.endswith(".py"):
            continue
        raw = Path(path).read_bytes()
        if not MENTIONS_TF(raw):
            continue
        for line, mine, theirs in call_names(raw) or ():
            names["agree" if mine == theirs else "differ"] += 1
            if mine != theirs:
                print(f"{path}:{line}: name {mine} (LibCST) vs {theirs} (stdlib)")
        for line, kind, may in counted_loops(raw) or ():
            if kind == "python":
                gate["counted"] += 1
                if not may:
                    gate["loops missed"] += 1
                    print(f"{path}:{line}: a loop loop_kind counts that the gate does not")
        for line, sized, may in shuffle_buffers(raw) or ():
            if sized:
                gate["sized"] += 1
                if not may:
                    gate["buffers missed"] += 1
                    print(f"{path}:{line}: a buffer TFM302 sizes that the gate does not")
        for function, (mine, theirs) in (effects(path, raw) or {}).items():
            kinds["agree" if mine == theirs else "differ"] += 1
            if mine != theirs:
                kinds[(tuple(sorted(mine - theirs)), tuple(sorted(theirs - mine)))] += 1
                if args.effects:
                    print(f"{path}:{function}: effects {sorted(mine)} (LibCST) vs {sorted(theirs)} (project.py)")
    print(f"names: {names['agree']} calls agree, names differ: {names['differ']}")
    print(f"counted loops: {gate['counted']}, the gate misses {gate['loops missed']}; "
          f"sized buffers: {gate['sized']}, the gate misses {gate['buffers missed']}")
    print(f"effects: {kinds.pop('agree', 0)} functions agree, {kinds.pop('differ', 0)} differ")
    for (only_libcst, only_project), count in kinds.most_common():
        print(f"  {count:5d}  only LibCST {list(only_libcst)}, only project.py {list(only_project)}")
    return 1 if names["differ"] or gate["loops missed"] or gate["buffers missed"] else 0


if __name__ == "__main__":
    sys.exit(main())
