"""The gate: could any enabled rule fire in this module? Decided cheaply, before LibCST.

A rule declares its *triggers* (``Rule.triggers``): what a module must contain for the rule to be
able to fire. The engine builds a LibCST tree only for modules where a trigger of some enabled
rule occurs, so triggers must over-approximate the rule: a trigger missing loses findings
silently; a superfluous one only costs a parse. Rules build their triggers from the same
constants their fact modules test against (``facts.sessions.SESSION_CLASSES``,
``facts.keras.MODEL_BUILD_TRIGGERS``, ``context.TRACED_SCOPE``...), so a spelling taught to a
fact module reaches the gate too; nothing here restates a rule's predicate. Trigger syntax:

    "tensorflow.function"  a canonical TF/Keras name (names.canonical): matches every spelling of
                           it and of any name under it (tf.compat.v1.Session, from tensorflow import)
    ".predict"             an attribute with that name on any receiver (model.predict, sess.run)
    "~train_step"          a name, attribute name or imported name containing that text (my_train_step)
    "a&b"                  all of these at once (".append&.apply_gradients")
    "*"                    always: the rule can fire in any module that imports TensorFlow/Keras

A rule that declares none (``triggers = None``) runs on every module importing TensorFlow.

The tests are, cheapest first: ``may_import_tf`` and ``may_have_trigger`` on the bytes, then
``could_fire`` on the stdlib ``ast`` tree (free under flake8, which hands it to the plugin).
"""

from __future__ import annotations

import ast
import dataclasses
import re
from typing import TYPE_CHECKING, Any, Iterable

from tf_memlint.names import PRIVATE_SUBPACKAGES, canonical
from tf_memlint.rule import all_rules

if TYPE_CHECKING:
    from tf_memlint.rule import Rule

ALWAYS = "*"


def rule_triggers(rule: type[Rule]) -> frozenset[str]:
    """The triggers the gate uses for ``rule``: its own, else always."""
    declared = getattr(rule, "triggers", None)
    return frozenset({ALWAYS}) if declared is None else frozenset(declared)


_COMPOUND = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor,
             ast.While, ast.With, ast.AsyncWith, ast.Try) + tuple(
    getattr(ast, name) for name in ("TryStar", "Match") if hasattr(ast, name))


class ModuleFacts:
    """What the gate reads from a stdlib ast tree: import aliases, attribute names, TF names."""

    __slots__ = ("aliases", "tree", "_attrs", "_attribute_nodes", "_identifiers")

    def __init__(self, tree: ast.AST) -> None:
        self.tree = tree
        self.aliases: dict[str, str] = {}
        self._attrs: set[str] | None = None
        self._identifiers: set[str] = set()
        self._attribute_nodes: list[ast.Attribute] = []
        self._collect_imports(getattr(tree, "body", ()))

    def _collect_imports(self, body: list[ast.stmt]) -> None:
        """Import statements at any depth, the same alias table ``scopes.collect``
        builds. Imports are statements, so only statement lists are walked (cheap)."""
        aliases = self.aliases
        stack = [body]
        while stack:
            for node in stack.pop():
                kind = type(node)
                if kind is ast.Import:
                    for alias in node.names:
                        if alias.asname:
                            aliases[alias.asname] = alias.name
                        else:
                            top = alias.name.split(".")[0]
                            aliases[top] = top
                elif kind is ast.ImportFrom:
                    if node.level or not node.module:
                        continue
                    for alias in node.names:
                        if alias.name != "*":
                            aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
                elif isinstance(node, _COMPOUND):
                    for block in (getattr(node, "body", None), getattr(node, "orelse", None),
                                  getattr(node, "finalbody", None)):
                        if block:
                            stack.append(block)
                    for sub in getattr(node, "handlers", None) or getattr(node, "cases", None) or ():
                        stack.append(sub.body)

    def imports_tf(self) -> bool:
        """Whether a public TF/Keras module is imported (else the context resolves nothing)."""
        return any(canonical(module) is not None for module in self.aliases.values())

    def _walk(self) -> None:
        attrs: set[str] = set()
        identifiers = self._identifiers
        nodes = self._attribute_nodes
        attribute, name = ast.Attribute, ast.Name
        for node in ast.walk(self.tree):
            kind = type(node)
            if kind is attribute:
                attrs.add(node.attr)
                nodes.append(node)
            elif kind is name:
                identifiers.add(node.id)
        identifiers |= attrs
        for module in self.aliases.values():  # what the imports bind, under any local name
            identifiers.update(module.split("."))
        self._attrs = attrs

    @property
    def identifiers(self) -> set[str]:
        """Every name and attribute name used, and every name an import binds under another
        name (``from multiprocessing import Pool as P`` gives ``Pool``): for "~substring" triggers."""
        if self._attrs is None:
            self._walk()
        return self._identifiers

    @property
    def attributes(self) -> set[str]:
        """Every attribute name used anywhere (``x.predict`` gives ``predict``)."""
        if self._attrs is None:
            self._walk()
        return self._attrs  # type: ignore[return-value]

    def names(self, lasts: set[str]) -> set[str]:
        """Canonical TF/Keras names the module refers to: every import alias, and every
        ``a.b.c`` chain ending in one of ``lasts``, resolved as ``TFContext.qualified_name``
        resolves it (head through the import aliases, then ``names.canonical``)."""
        found = {c for c in map(canonical, self.aliases.values()) if c is not None}
        if self._attrs is None:
            self._walk()
        for node in self._attribute_nodes:
            if node.attr not in lasts:
                continue
            parts = [node.attr]
            expr = node.value
            while type(expr) is ast.Attribute:
                parts.append(expr.attr)
                expr = expr.value
            if type(expr) is not ast.Name:
                continue
            module = self.aliases.get(expr.id)
            if module is None:
                continue
            parts.append(module)
            name = canonical(".".join(reversed(parts)))
            if name is not None:
                found.add(name)
        return found


def gate_triggers(codes: Iterable[str] | None = None) -> frozenset[str]:
    """The union of the triggers of ``codes`` (default: every rule; unknown codes: none)."""
    registry = all_rules()
    triggers: set[str] = set()
    for code in (registry if codes is None else codes):
        if code in registry:
            triggers |= rule_triggers(registry[code])
    return frozenset(triggers)


_TRIGGER_CACHE: dict[tuple[str, ...], "_Triggers"] = {}


@dataclasses.dataclass(frozen=True)
class _Triggers:
    always: bool
    attributes: frozenset[str]  # ".attr" triggers, without the dot
    names: tuple[str, ...]  # canonical-name and "~substring" triggers
    lasts: frozenset[str]  # the last part of every name atom (single or in a conjunction)
    conjunctions: tuple[tuple[str, ...], ...]  # "a&b" triggers, split
    text: Any  # bytes regex search for any trigger word, or None


def _split_triggers(codes: Iterable[str] | None) -> _Triggers:
    key = tuple(codes) if codes is not None else ("<all>",)
    cached = _TRIGGER_CACHE.get(key)
    if cached is None:
        triggers = gate_triggers(codes)
        single = [t for t in triggers if "&" not in t and t != ALWAYS]
        conjunctions = tuple(tuple(t.split("&")) for t in triggers if "&" in t)
        atoms = single + [atom for conj in conjunctions for atom in conj]
        names = tuple(t for t in single if t[0] != ".")  # canonical names and "~substring"s
        lasts = frozenset(t.rsplit(".", 1)[-1] for t in atoms if t[0] not in ".~")
        # Every trigger leaves a word in the text: its attribute name, the last part of its name
        # (canonical() rewrites only prefixes), its substring. A text without any cannot fire.
        words = sorted({t.lstrip(".~").rsplit(".", 1)[-1] for t in atoms}, key=len, reverse=True)
        text = re.compile(b"|".join(re.escape(w.encode()) for w in words)).search if words else None
        cached = _Triggers(ALWAYS in triggers, frozenset(t[1:] for t in single if t.startswith(".")),
                           names, lasts, conjunctions, text)
        _TRIGGER_CACHE[key] = cached
    return cached


def may_have_trigger(raw: bytes, codes: Iterable[str] | None = None) -> bool:
    """A text test, sound for ``could_fire``: False when no trigger word occurs at all."""
    triggers = _split_triggers(codes)
    return triggers.always or (triggers.text is not None and triggers.text(raw) is not None)


def could_fire(tree: ast.AST | ModuleFacts, codes: Iterable[str] | None = None) -> bool:
    """False only when no enabled rule can fire in the module: a sound over-approximation.

    That is when the module imports no public TensorFlow/Keras module (then ``TFContext``
    resolves no name and no rule fires), or when it contains no trigger of any enabled rule.
    """
    return gate_reason(tree, codes) is not None


def gate_reason(tree: ast.AST | ModuleFacts, codes: Iterable[str] | None = None) -> str | None:
    """Why the gate lets the module through (the trigger found), or None when it stops it."""
    facts = tree if isinstance(tree, ModuleFacts) else ModuleFacts(tree)
    if not facts.imports_tf():
        return None
    triggers = _split_triggers(codes)
    if triggers.always:
        return ALWAYS
    found = triggers.attributes & facts.attributes
    if found:
        return "." + min(found)
    names: set[str] | None = None

    def matches(atom: str) -> bool:
        nonlocal names
        if atom.startswith("."):
            return atom[1:] in facts.attributes
        if atom.startswith("~"):
            return any(atom[1:] in word for word in facts.identifiers)
        if names is None:
            names = facts.names(set(triggers.lasts))
        return any(name == atom or name.startswith(atom + ".") for name in names)

    for trigger in triggers.names:
        if matches(trigger):
            return trigger
    for conjunction in triggers.conjunctions:
        if all(matches(atom) for atom in conjunction):
            return "&".join(conjunction)
    return None


_HEAD = re.compile(rb"(?<![\w.])(tensorflow_datasets|tensorflow|tf_keras|keras)(?!\w)")
_PRIVATE_NEXT = {top.encode(): tuple(sub.encode() for sub in subs) for top, subs in PRIVATE_SUBPACKAGES.items()}
_SPACE = b" \t\f\r\n\\"


def may_import_tf(raw: bytes) -> bool:
    """A text test, sound for ``ModuleFacts.imports_tf``: False only when no import statement can
    bind a public TF/Keras module, so the command skips ``ast.parse`` for TensorFlow's own files.

    Only a module head (tensorflow, keras, tf_keras, tensorflow_datasets) right after ``import``,
    ``from`` or a comma (``import os, tensorflow``) can start such a binding; the names listed
    after ``from M import`` cannot (``M.name`` is public only if ``M`` is). Of those, ``from
    <head>.<private> import ...`` binds only private names. ``import tensorflow.python.x`` binds
    ``tensorflow`` itself and counts. Mentions in strings, comments and URLs do not.
    """
    for match in _HEAD.finditer(raw):
        start, end = match.span()
        window = raw[max(0, start - 64):start]  # bounded: never quadratic
        before = window.rstrip(_SPACE)
        if not before:
            if start > 64:
                return True  # a run of whitespace longer than the window: cannot tell
            before = b""
        if before.endswith(b","):
            return True
        keyword = _keyword_before(before)
        if keyword == b"import":
            return True
        if keyword == b"from":
            private = _PRIVATE_NEXT.get(match.group(1))
            rest = raw[end:end + 64].lstrip(_SPACE)
            if not (private and rest.startswith(b".") and rest[1:].lstrip(_SPACE).startswith(private)):
                return True
    return False


def _keyword_before(before: bytes) -> bytes | None:
    for keyword in (b"import", b"from"):
        if before.endswith(keyword) and (
                len(before) == len(keyword) or not _is_word(before[-len(keyword) - 1])):
            return keyword
    return None


def _is_word(byte: int) -> bool:
    return byte == 95 or 48 <= byte <= 57 or 65 <= byte <= 90 or 97 <= byte <= 122 or byte >= 128
