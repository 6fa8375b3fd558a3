"""The integer defaults of a script's command-line options: ``parser.add_argument("--rounds",
type=int, default=3)`` (argparse; ``dest=`` or the first long option names it, dashes read as
underscores) and ``flags.DEFINE_integer("steps", 1000, ...)`` (absl / ``tf.app.flags``). A loop
bounded by ``range(args.rounds)`` runs that many times unless the user passes another value: the
count a run gets by default. Built once per module on first use: ``context.facts_of(OptionDefaults)``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from tf_memlint.syntax import int_literal

if TYPE_CHECKING:
    from tf_memlint.context import TFContext


class OptionDefaults:
    def __init__(self, context: TFContext) -> None:
        defaults: dict[str, int | None] = {}
        for call in context.nodes_in(context.module, into_functions=True):
            if type(call) is not cst.Call or not isinstance(call.func, (cst.Attribute, cst.Name)):
                continue
            method = call.func.attr.value if isinstance(call.func, cst.Attribute) else call.func.value
            found = _argparse_default(call) if method == "add_argument" else \
                _flag_default(call) if method == "DEFINE_integer" else None
            if found is not None:
                name, value = found
                # An option defined twice with different defaults (two parsers of one file) says nothing.
                defaults[name] = value if defaults.get(name, value) == value else None
        self.defaults = {name: value for name, value in defaults.items() if value is not None}

    def default_of(self, bound: cst.BaseExpression) -> tuple[str, int] | None:
        """(option, default) for ``args.rounds``, ``self.args.rounds``, ``FLAGS.steps``,
        ``args["rounds"]``, ``int(args.rounds)``."""
        if isinstance(bound, cst.Call) and isinstance(bound.func, cst.Name) and bound.func.value == "int" \
                and len(bound.args) == 1:
            bound = bound.args[0].value
        name = None
        if isinstance(bound, cst.Attribute):
            name = bound.attr.value
        elif isinstance(bound, cst.Subscript) and len(bound.slice) == 1 \
                and isinstance(bound.slice[0].slice, cst.Index) \
                and isinstance(bound.slice[0].slice.value, cst.SimpleString):
            name = bound.slice[0].slice.value.evaluated_value
        if not isinstance(name, str) or name not in self.defaults:
            return None
        return name, self.defaults[name]


def _argparse_default(call: cst.Call) -> tuple[str, int] | None:
    default = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "default"), None)
    value = int_literal(default) if default is not None else None
    if value is None:
        return None
    dest = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "dest"), None)
    if isinstance(dest, cst.SimpleString):
        return str(dest.evaluated_value), value
    options = [a.value.evaluated_value for a in call.args
               if a.keyword is None and isinstance(a.value, cst.SimpleString)]
    options = [o for o in options if isinstance(o, str)]
    named = next((o for o in options if o.startswith("--")), None) or next(iter(options), None)
    if named is None:
        return None
    return named.lstrip("-").replace("-", "_"), value


def _flag_default(call: cst.Call) -> tuple[str, int] | None:
    positional = [a.value for a in call.args if a.keyword is None]
    keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    name = keywords.get("name", positional[0] if positional else None)
    default = keywords.get("default", positional[1] if len(positional) > 1 else None)
    value = int_literal(default) if default is not None else None
    if not isinstance(name, cst.SimpleString) or value is None:
        return None
    return str(name.evaluated_value), value
