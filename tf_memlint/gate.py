"""The gate: could any enabled rule fire in this module? Decided cheaply, before LibCST.

A rule declares its *triggers* (``Rule.triggers``): what a module must contain for the rule to be
able to fire. The engine builds a LibCST tree only for modules where a trigger of some enabled
rule occurs, so triggers must over-approximate the rule: a trigger missing loses findings
silently; a superfluous one only costs a parse. Rules build their triggers from the same
constants their fact modules test against (``facts.sessions.SESSION_CLASSES``,
``facts.keras.MODEL_BUILD_TRIGGERS``, ``facts.tracing.TRACED_SCOPE``...), so a spelling taught to a
fact module reaches the gate too; nothing here restates a rule's predicate. Trigger syntax:

    "tensorflow.function"  a canonical TF/Keras name (names.canonical): matches every spelling of
                           it and of any name under it (tf.compat.v1.Session, from tensorflow import)
    ".predict"             an attribute with that name on any receiver (model.predict, sess.run)
    "~train_step"          a name, attribute name or imported name containing that text (my_train_step)
    "a&b"                  all of these at once (".append&.apply_gradients")
    "*"                    always: the rule can fire in any module that imports TensorFlow/Keras

A rule that declares none (``triggers = None``) runs on every module importing TensorFlow.

Beside its triggers a rule may declare a *structure* (``Rule.structure``): where in the module a
node must be for the rule to be able to fire, as ``Inside(place, nodes)`` conditions (``a | b``:
either may hold, ``a & b``: both must), or ``Together(place, (nodes, nodes...))``: a node of each
group in one and the same loop or repeated def; or ``InCalledDef(nodes, named)``: a node in the
straight code of a def that may be called again and again, whose name ``named`` accepts (see
``InCalledDef``). A trigger of TFM101 (``tf.function``, a Keras base class) is in almost every
TensorFlow-heavy file; a Python loop inside a function TensorFlow may trace is not. The places are
over-approximations, on the stdlib ast, of what the fact modules decide on the LibCST tree, built
from the same constants (see ``_Index``):

    TRACED    in a def or lambda TensorFlow may trace (facts/tracing.py ``is_traced_def``), or
              nested in one
    MAPPED    in a function tf.map_fn / Dataset.map may run once per element (``is_mapped``)
    LOOP      in a ``for``/``while`` of the same function (``context.open_loops``)
    TRAINING_LOOP  in such a loop that may take optimisation steps (keras.loop_is_training: a
              training method, ``strategy.run``, a call of a def of the module)
    REPEATED  LOOP, a def that may run once per event (facts/events.py ``repetition``), or a def
              a call there may run, followed through calls (the reach path of a rule)
    ANYWHERE  anywhere in the module
    OUTSIDE_WITH  a call anywhere but as the context expression of a ``with`` (which closes
              what it opens)
    IN_DEF_OR_LOOP  in a def (whose owner, the function or its class, may be called or built
              again and again), a ``for``/``while`` or a comprehension: anywhere but the
              straight-line code of the module or a class body, which runs once
    NOTEBOOK  anywhere, in a notebook's code cells (the command tells the gate); nowhere else
    MODEL_METHOD  in a method of a class that may derive from a Keras model base
              (KerasFacts.model_classes): its own methods run on the model

and the nodes: ``"For"``, ``"While"``, ``"Global"``, ``"Nonlocal"`` (statements of that kind),
``".append"`` (a call of that method), a canonical name (a call of it or of a name under it, as
triggers match, or of a class of the module deriving from it: ``Net()`` for ``keras.Model``), a
canonical name with a keyword given a literal ``True`` (``"tensorflow.GradientTape(persistent=True)"``,
a call of that name with that argument), a method with a bound on an argument
(``".shuffle(buffer_size>=10000)"``: a call of that method whose argument of that name, else its
first positional one, may be a size of at least the bound as ``PipelineFacts.whole_dataset_size``
reads one: ``_may_reach``), an effect of the function summaries (``facts.functions.MODEL``, ``OPS``...: in the command, a call
of a function of another module of the project with that effect, as its table names it,
project.py; a rule that follows calls passes wherever its structure holds with those calls,
whatever the module imports or names), ``ITEM_WRITE``
(``x[k] = v``, ``x[k] += v``), ``TF_FUNCTION_CALL`` (a call with arguments of a name bound to a
tf.function, or to an object restored by ``tf.saved_model.load`` / ``hub.load``: TFM104 and TFM107
judge what is passed), ``NUMPY_ARRAY`` (a call of a
NumPy function that builds an array), ``NUMPY_NAME`` (TRACED only: a name that may be bound to
one, used in a function that does not bind it), ``OPS_IN_FETCH`` (a session run whose fetches,
read as ``sessions.fetches_of`` reads them, hold a call other than an initializer, an operator or
a subscript: what ``SessionFacts.ops_in_fetch`` may report), ``GRAPH_OP`` (a call of a TF name
that adds graph ops, ``sessions.op_creating_name``: ``SessionFacts.creates_graph_ops`` for a
resolved name; a def of the module that adds them is found where its place follows calls),
``COUNTED_LOOP`` (a ``for``/``while`` whose count ``TracingFacts.loop_kind`` may read off the
code, or a ``for`` over ``range(...)``); no nodes: the place exists at all.

The tests are, cheapest first: ``may_import_tf`` and ``may_have_trigger`` on the bytes, then
``could_fire`` on the stdlib ``ast`` tree (free under flake8, which hands it to the plugin):
some enabled rule has a trigger in the module and its structure there.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from typing import TYPE_CHECKING, Any, Callable, Iterable

from tf_memlint.evidence import reruns_per_interaction
from tf_memlint.facts.arrays import NUMPY_ARRAY_FACTORIES
from tf_memlint.facts.callers import ENTRY_POINTS
from tf_memlint.facts.data_shapes import IMPORTED_RESTORED_LOADERS, RESTORED_LOADERS
from tf_memlint.facts.functions import EFFECT_KINDS
from tf_memlint.facts.events import (BATCH_HOOKS, ENVIRONMENT_BASE_SUFFIXES, ENVIRONMENT_STEP_METHODS, EPOCH_HOOKS,
                                     HTTP_METHODS, ROUTE_DECORATORS, SEARCH_RUNNERS, handed_objective)
from tf_memlint.facts.keras import (DISTRIBUTED_RUN, KERAS_BASE_CLASSES, KERAS_MODEL_BASES, MINIMIZE,
                                   TRAIN_STEP_WORD, TRAINING_STEP_METHODS)
from tf_memlint.facts.pipelines import CARDINALITY_CALLS, DECODED_SOURCES, DECODING_PREFIXES, FILE_RECORD_SOURCES
from tf_memlint.facts.sessions import (FEED_RUN_METHODS, KERAS_BACKEND, KERAS_EVALUATOR_METHODS, OP_NAMESPACE,
                                      SESSION_CLASSES, SESSION_FACTORIES, SESSION_NAME, SESSION_RUN_METHODS,
                                      FEED_KEYWORDS, LIST_FILLING_METHODS, MANAGED_SESSION, is_initializer, op_creating_name)
from tf_memlint.facts.tracing import (DATASET_MAP_METHODS, DATASET_TRACING_METHODS, KERAS_TRACED_METHODS, MAP_FN,
                                     MUTATING_METHODS, TF_FUNCTION, TRACING_CALLS)
from tf_memlint.names import PRIVATE_SUBPACKAGES, canonical
from tf_memlint.rule import all_rules
from tf_memlint.syntax import (COUNT_KEEPING_CALLS, TQDM_RANGES, ast_children, ast_dotted_name, ast_nodes,
                               ast_own_nodes)

if TYPE_CHECKING:
    from tf_memlint.rule import Rule

ALWAYS = "*"
_UNKNOWN = object()


def rule_triggers(rule: type[Rule]) -> frozenset[str]:
    """The triggers the gate uses for ``rule``: its own, else always."""
    declared = getattr(rule, "triggers", None)
    return frozenset({ALWAYS}) if declared is None else frozenset(declared)


_COMPOUND = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor,
             ast.While, ast.With, ast.AsyncWith, ast.Try) + tuple(
    getattr(ast, name) for name in ("TryStar", "Match") if hasattr(ast, name))


class ModuleFacts:
    """What the gate reads from a stdlib ast tree: import aliases, attribute names, TF names, and
    where things are (``holds``)."""

    __slots__ = ("aliases", "tree", "project", "notebook", "every_node", "_attrs", "_attribute_nodes", "_identifiers",
                 "_identifier_text",
                 "_index", "_qualified_attributes", "_names", "_occurs", "_qualified")

    def __init__(self, tree: ast.AST, project: dict[str, Any] | None = None, notebook: bool = False) -> None:
        self.tree = tree
        # The command's project table for this file (project.py): the calls, as written, of
        # functions of other modules of the project, and what each does (an effect node matches them).
        self.project = project
        self.notebook = notebook  # the code cells of a notebook (a kernel lives on: TFContext.notebook)
        self.aliases: dict[str, str] = {}
        self._attrs: set[str] | None = None
        self._identifiers: set[str] = set()
        self._identifier_text: str | None = None
        self._attribute_nodes: list[ast.Attribute] = []
        self.every_node: list[ast.AST] = []  # the tree's nodes, walked once (_walk)
        self._index: _Index | None = None
        # Asked once per enabled rule (codes_that_can_fire): kept across the rules' questions.
        self._qualified_attributes: dict[str, list] | None = None  # attribute name -> nodes, then names
        self._names: dict[frozenset[str] | tuple[frozenset[str], str], set[str]] = {}
        self._occurs: dict[tuple[frozenset[str], str], bool] = {}  # (lasts, trigger) -> occurs
        self._qualified: dict[int, str | None] = {}  # id of a node of ``tree`` -> qualified()
        self._collect_imports(getattr(tree, "body", ()))

    def _collect_imports(self, body: list[ast.stmt]) -> None:
        """Import statements at any depth, the same alias table ``scopes.collect``
        builds: in source order, so that of two imports of one name (``try:``/``except
        ImportError:``) the later wins, as there. Imports are statements, so only statement
        lists are walked (cheap)."""
        aliases = self.aliases
        stack = [iter(body)]
        while stack:
            node = next(stack[-1], None)
            if node is None:
                stack.pop()
                continue
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
                parts = getattr(node, "handlers", None) or getattr(node, "cases", None) or ()
                blocks = [getattr(node, "body", None), *(part.body for part in parts),
                          getattr(node, "orelse", None), getattr(node, "finalbody", None)]
                stack.extend(iter(block) for block in reversed(blocks) if block)

    def imports_tf(self) -> bool:
        """Whether a public TF/Keras module is imported (else the context resolves nothing)."""
        return any(canonical(module) is not None or module.split(".")[0] in MODEL_PACKAGES
                   for module in self.aliases.values())

    def _walk(self) -> None:
        attrs: set[str] = set()
        identifiers = self._identifiers
        nodes = self._attribute_nodes
        index = self._index = _Index(self)
        buckets = index.buckets
        attribute, name = ast.Attribute, ast.Name
        self.every_node = ast_nodes(self.tree)
        for node in self.every_node:
            kind = type(node)
            if kind is attribute:
                attrs.add(node.attr)
                nodes.append(node)
            elif kind is name:
                identifiers.add(node.id)
            else:
                bucket = buckets.get(kind)
                if bucket is not None:
                    bucket.append(node)
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
    def identifier_text(self) -> str:
        """``identifiers`` joined by newlines (no identifier holds one): a text containing ``x``
        exactly when some identifier does, searched in C."""
        if self._identifier_text is None:
            self._identifier_text = "\n".join(self.identifiers)
        return self._identifier_text

    @property
    def attributes(self) -> set[str]:
        """Every attribute name used anywhere (``x.predict`` gives ``predict``)."""
        if self._attrs is None:
            self._walk()
        return self._attrs  # type: ignore[return-value]

    def imported(self, expr: ast.AST) -> str | None:
        """The dotted name of a ``a.b.c`` chain through the import aliases, as imported
        (``TFContext.imported_name``)."""
        dotted = ast_dotted_name(expr)
        if dotted is None:
            return None
        head, dot, rest = dotted.partition(".")
        module = self.aliases.get(head)
        return None if module is None else module + dot + rest

    def qualified(self, expr: ast.AST) -> str | None:
        """The canonical TF/Keras name of a ``a.b.c`` chain, as ``TFContext.qualified_name``.
        Kept per node: each rule's gate asks again of the same calls."""
        known = self._qualified.get(id(expr), _UNKNOWN)
        if known is not _UNKNOWN:
            return known  # type: ignore[return-value]
        imported = self.imported(expr)
        found = self._qualified[id(expr)] = None if imported is None else canonical(imported)
        return found

    def names(self, lasts: set[str]) -> set[str]:
        """Canonical TF/Keras names the module refers to: every import alias, and every
        ``a.b.c`` chain ending in one of ``lasts``, resolved as ``TFContext.qualified_name``
        resolves it (head through the import aliases, then ``names.canonical``)."""
        key = frozenset(lasts)
        cached = self._names.get(key)
        if cached is not None:
            return set(cached)
        found = {c for c in map(canonical, self.aliases.values()) if c is not None}
        for last in key:
            found.update(self._qualified_ending_in(last))
        self._names[key] = found
        return set(found)

    def names_and_prefixes(self, lasts: frozenset[str]) -> set[str]:
        """``names(lasts)`` with every dotted prefix of each (``a.b`` and ``a`` for ``a.b.c``):
        a trigger matches a name or a name under it exactly when it is in this set."""
        key = (lasts, "")
        found = self._names.get(key)  # type: ignore[call-overload]
        if found is None:
            found = set()
            for name in self.names(lasts):
                found.add(name)
                while "." in name:
                    name = name.rpartition(".")[0]
                    found.add(name)
            self._names[key] = found  # type: ignore[index]
        return found

    def _qualified_ending_in(self, last: str) -> list[str]:
        """The canonical names of the ``a.b.c`` chains whose attribute is ``last``, each chain
        resolved once whichever rules ask."""
        if self._attrs is None:
            self._walk()
        by_attribute = self._qualified_attributes
        if by_attribute is None:
            by_attribute = self._qualified_attributes = {}
            for node in self._attribute_nodes:
                by_attribute.setdefault(node.attr, []).append(node)
        nodes = by_attribute.get(last)
        if not nodes:
            return []
        if type(nodes[0]) is not str:  # resolved on first use
            nodes = by_attribute[last] = [name for name in map(self.qualified, nodes) if name is not None]
        return nodes

    def holds(self, inside: Inside | Together | InCalledDef | BoundAndUsed) -> bool:
        """Whether a node of ``inside.nodes`` is in ``inside.place`` (see the module docstring);
        for ``Together``, a node of each group in one and the same place; for ``InCalledDef``, in
        the straight code of such a def."""
        if self._attrs is None:
            self._walk()
        return self._index.holds(inside)  # type: ignore[union-attr]


# Structure (see the module docstring) ---------------------------------------------------------
TRACED, MAPPED, LOOP, TRAINING_LOOP, REPEATED, ANYWHERE, OUTSIDE_WITH = (
    "traced", "mapped", "loop", "training loop", "repeated", "anywhere", "outside a with item")
IN_DEF_OR_LOOP, NOTEBOOK = "in a def, a loop or a comprehension", "in a notebook"
# Calls only: under a loop or a comprehension, or in a def or class whose name a call in a def or
# a loop calls (``f()``, ``x.f()``, ``Net()``): the places where something a def or an object
# keeps may be made again (TFM201's owner, made or called more than once: ``_repeated``).
OWNER_CALLED = "in a loop, or in a def or class called from a def or a loop"
# Calls only: in a def named as an entry point (``__call__``, callers.ENTRY_POINTS: made to be
# called once per input), or in a def such a def calls, followed as REPEATED follows calls
# (CallerFacts.repetition_of_def: the entry point of a class, above the call sites it follows).
ENTRY_CALLED = "in an entry point or a def it runs"
# Calls only: in the module's straight code, when a framework reruns the script on every
# interaction (evidence.reruns_per_interaction: Streamlit).
RERUN_SCRIPT = "in the top-level code of a script rerun per interaction"
MODEL_METHOD = "in a method of a Keras model class"
ITEM_WRITE = "x[k] = v"
TF_FUNCTION_CALL = "a call of a tf.function with arguments"
NUMPY_ARRAY = "a NumPy array factory call"
NUMPY_NAME = "a name bound to a NumPy array"
OPS_IN_FETCH = "a session run whose fetches may build an op"
GRAPH_OP = "a call of a TF name that adds graph ops"
# A ``for`` or ``while`` whose count TracingFacts.loop_kind may read off the code: a ``for`` over
# what ``context.trip_count`` may count, or over a ``range(...)`` of any bound; a ``while`` on
# ``counter < bound`` or ``<=``. Not ``for x in xs`` in a module that makes no NumPy array, not
# ``for layer in self.layers``, not ``for i in tf.range(n)``: their count is never known.
COUNTED_LOOP = "a loop whose count may be read off the code"
# In a def or lambda (the frame TFM103 asks of), a mutating method called on a bare name
# (``seen.append(x)``) or an item written on one (``state[k] = v``, ``state[k] += v``), the name
# neither a parameter of that function nor assigned in it (``Scope.binds``): a container from
# outside. TRACED only.
OUTER_MUTATION = "a container from outside its function mutated"
TF_FUNCTION_MADE = "a tf.function created in a def or a loop"
# The module names a TF function that reads or decodes files (pipelines.DECODING_PREFIXES), a
# dataset of decoded images (DECODED_SOURCES) or of file records (FILE_RECORD_SOURCES): without
# one, no dataset of the module is known to hold file content (PipelineFacts.holds_decoded,
# holds_file_records). Module-wide: ANYWHERE only.
READS_FILES = "a name that reads or decodes files"
# The module may run a TF1 session (SessionFacts.is_session_run): a name spelled like a session
# (``sess``, ``self.session``, ``get_session()``), a session class or factory named, a
# ``managed_session()``, an ``.eval()`` or Keras evaluator, or a ``.run(feed_dict=...)``. Without
# one, no call of the module runs a session. Module-wide: ANYWHERE only.
MAY_RUN_SESSION = "a session, or a name spelled like one"
# ``self.<attr> = <call>`` in a def or a loop, the call's canonical name after the prefix (as
# ``TFContext.call_name`` gives it): a TF1 summary writer kept on the object (TFM409).
SELF_BOUND = "self.attr = "
SCALAR_TF_FUNCTION = "a tf.function def with a parameter declared a Python str or float"
# Packages that load TensorFlow models without the module naming TensorFlow itself: a module
# importing only these can still load a model per call (TFM408).
MODEL_PACKAGES = frozenset({"tensorflow_hub", "keras_ocr"})
# The nodes only a call or a def can pass: their places are searched among those alone.
_CALL_OR_DEF_NODES = frozenset({TF_FUNCTION_MADE, SCALAR_TF_FUNCTION})
_SPECIAL = frozenset({ITEM_WRITE, TF_FUNCTION_CALL, NUMPY_ARRAY, NUMPY_NAME, OPS_IN_FETCH, GRAPH_OP,
                      READS_FILES, MAY_RUN_SESSION, COUNTED_LOOP, OUTER_MUTATION}) | _CALL_OR_DEF_NODES
# The effects of the function summaries (facts/functions.py), as nodes: a call of a function of
# another module of the project that has that effect (the command's table, project.py).
EFFECTS = EFFECT_KINDS
_KINDS = {"For": (ast.For, ast.AsyncFor), "While": (ast.While,), "Global": (ast.Global,),
          "Nonlocal": (ast.Nonlocal,)}
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_DEF_LOOP_OR_COMPREHENSION = (*_DEFS, ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp,
                              ast.GeneratorExp)
_READS_FILES_ONLY = frozenset({READS_FILES})
_MAY_RUN_SESSION_ONLY = frozenset({MAY_RUN_SESSION})
_OUTER_MUTATION_ONLY = frozenset({OUTER_MUTATION})
_SESSION_WORDS = frozenset({name.rpartition(".")[2] for name in SESSION_CLASSES | SESSION_FACTORIES}
                           | KERAS_EVALUATOR_METHODS | {MANAGED_SESSION})
_OWNERS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})
_LOOPS_AND_COMPREHENSIONS = frozenset({ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp,
                                       ast.GeneratorExp})
_NON_CALL_NODES = frozenset({*_KINDS, ITEM_WRITE, *_CALL_OR_DEF_NODES, READS_FILES, MAY_RUN_SESSION,
                             COUNTED_LOOP, OUTER_MUTATION})  # the nodes a matcher passes that are not calls


def _closure(nodes: list, admits: Callable[[Any, set[str]], bool]) -> set[str]:
    """The names of ``nodes`` (defs or classes) that ``admits(node, found)`` accepts, where
    ``found`` holds the names admitted so far, taken again until no more are: the fixed point of
    a fact that spreads through the module (a def that calls a training def, a class deriving
    from a model class)."""
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        for node in nodes:
            if node.name not in found and admits(node, found):
                found.add(node.name)
                changed = True
    return found


def _calls_only(nodes: frozenset[str]) -> bool:
    """Only a call can pass the node test of ``nodes`` (``_Index._new_matcher``; NUMPY_NAME is
    decided apart, ``_captures``); no nodes: any node."""
    return bool(nodes) and nodes.isdisjoint(_NON_CALL_NODES)


class _Structure:
    """``a | b``: either may hold; ``a & b``: both must."""

    def __or__(self, other: _Structure) -> _Structure:
        return AnyOf((self, other))

    def __and__(self, other: _Structure) -> _Structure:
        return AllOf((self, other))


@dataclasses.dataclass(frozen=True)
class Inside(_Structure):
    """A rule's structure: a node of ``nodes`` in ``place``; no nodes: the place exists at all.
    A tuple of places: a node in all of them at once (calls only: ``(IN_DEF_OR_LOOP,
    OUTSIDE_WITH)``, a call in a def that is not a ``with`` item)."""

    place: str | tuple[str, ...]
    nodes: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        object.__setattr__(self, "nodes", frozenset(self.nodes))
        if type(self.place) is tuple and not _calls_only(self.nodes):
            raise ValueError("Inside: places held at once need nodes that are calls")

    def holds(self, facts: ModuleFacts) -> bool:
        return facts.holds(self)

    def __str__(self) -> str:
        place = " and ".join(self.place) if type(self.place) is tuple else self.place
        return f"{' | '.join(sorted(self.nodes)) or 'code'} {place}"


@dataclasses.dataclass(frozen=True)
class Together(_Structure):
    """A node of each of ``groups`` in one and the same ``place`` (LOOP or REPEATED; calls
    followed as that place follows them): one loop that runs a session and adds ops, where
    ``Inside(place, a) & Inside(place, b)`` also lets through a module where one loop runs the
    session and another builds the graph."""

    place: str
    groups: tuple[frozenset[str], ...]

    def __post_init__(self) -> None:
        if self.place not in (LOOP, REPEATED):
            raise ValueError(f"Together: no single {self.place!r} place to hold the groups together")
        object.__setattr__(self, "groups", tuple(frozenset(group) for group in self.groups))

    def holds(self, facts: ModuleFacts) -> bool:
        return facts.holds(self)

    def __str__(self) -> str:
        return " and ".join(" | ".join(sorted(group)) for group in self.groups) + f", together {self.place}"


@dataclasses.dataclass(frozen=True)
class InCalledDef(_Structure):
    """A node of ``nodes`` in the straight code of a def whose name ``named`` accepts and that may
    be called again and again (CallerFacts.repetition_of_def, and the command's method index):
    a method of a class (another module of the project may call it per input), a def named as
    an entry point (facts/callers.py ``ENTRY_POINTS``, ``__call__``), or a def the REPEATED
    place runs. Straight code: not in a nested def or lambda (their own), nor in the body of one
    of the def's loops (``context.loops_running``: what runs per iteration is a loop's)."""

    nodes: frozenset[str]
    named: Callable[[str], bool]

    def __post_init__(self) -> None:
        object.__setattr__(self, "nodes", frozenset(self.nodes))

    def holds(self, facts: ModuleFacts) -> bool:
        return facts.holds(self)

    def __str__(self) -> str:
        return f"{' | '.join(sorted(self.nodes))} in a def that may be called again and again"


@dataclasses.dataclass(frozen=True)
class BoundAndUsed(_Structure):
    """A def with a parameter other than ``self`` and ``cls``, whose name ``named`` accepts, that
    binds a call of ``nodes`` to a name (``model = load_model(...)``) and calls that name, or a
    method of it ``used`` accepts, with arguments (``model(x)``, ``model.predict(x)``): a def that
    makes its own object and uses it on what it is given, whoever calls it."""

    nodes: frozenset[str]
    named: Callable[[str], bool]
    used: Callable[[str], bool]

    def __post_init__(self) -> None:
        object.__setattr__(self, "nodes", frozenset(self.nodes))

    def holds(self, facts: ModuleFacts) -> bool:
        return facts.holds(self)

    def __str__(self) -> str:
        return f"{' | '.join(sorted(self.nodes))} bound and used in a def with parameters"


@dataclasses.dataclass(frozen=True)
class AnyOf(_Structure):
    parts: tuple[_Structure, ...]

    def holds(self, facts: ModuleFacts) -> bool:
        return any(part.holds(facts) for part in self.parts)  # type: ignore[attr-defined]

    def __str__(self) -> str:
        return "(" + " or ".join(map(str, self.parts)) + ")"


@dataclasses.dataclass(frozen=True)
class AllOf(_Structure):
    parts: tuple[_Structure, ...]

    def holds(self, facts: ModuleFacts) -> bool:
        return all(part.holds(facts) for part in self.parts)  # type: ignore[attr-defined]

    def __str__(self) -> str:
        return "(" + " and ".join(map(str, self.parts)) + ")"


def rule_structure(rule: type[Rule]) -> _Structure | None:
    """The rule's structure, or None: wherever its triggers occur."""
    return getattr(rule, "structure", None)


class _Index:
    """The nodes the places are made of, bucketed by ``ModuleFacts._walk``, and the places.

    Each place over-approximates a fact module's decision, from its constants: a place that
    misses code where a rule can fire would lose findings; one too large only costs a parse."""

    def __init__(self, facts: ModuleFacts) -> None:
        self.facts = facts
        self.calls: list[ast.Call] = []
        self.defs: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        self.classes: list[ast.ClassDef] = []
        self.loops: list[ast.stmt] = []
        self.assigns: list[ast.AST] = []
        self.withs: list[ast.AST] = []
        self.comprehensions: list[ast.AST] = []
        self.buckets: dict[type, list] = {
            ast.With: self.withs, ast.AsyncWith: self.withs,
            ast.Call: self.calls, ast.FunctionDef: self.defs, ast.AsyncFunctionDef: self.defs,
            ast.ClassDef: self.classes, ast.For: self.loops,
            ast.AsyncFor: self.loops, ast.While: self.loops, ast.Assign: self.assigns,
            ast.AnnAssign: self.assigns, ast.AugAssign: self.assigns, ast.NamedExpr: self.assigns,
            ast.ListComp: self.comprehensions, ast.SetComp: self.comprehensions,
            ast.DictComp: self.comprehensions, ast.GeneratorExp: self.comprehensions}
        self._holds: dict[Inside | Together, bool] = {}
        self._tf_function_names: set[str] | None = None
        self._trainers: set[str] | None = None
        self._numpy_bound: set[str] | None = None
        self._values: dict[str, list[ast.expr]] | None = None
        self._with_items: set[int] | None = None
        self._calls_by: tuple[dict[str, list[ast.Call]], dict[str, list[ast.Call]]] | None = None
        self._callee_table: dict[str, list[ast.AST]] | None = None
        self._repeated: list[ast.AST] | None = None
        self._matchers: dict[frozenset[str], Any] = {}
        self._regions: dict[Any, list[ast.AST]] = {}
        self._region_calls: dict[Any, set[int]] = {}
        self._passing: dict[frozenset[str], list[ast.Call]] = {}  # node test -> the calls that pass it
        self._candidates: dict[frozenset[str], Callable[[], list[ast.AST]]] = {}  # node test -> its calls' finder
        self._straight: set[int] | None = None
        self._outer_defs: set[int] | None = None  # ids of the defs of the straight code (_straight_module_code)
        self._owner_called_ids: set[int] | None = None  # ids of the calls in the OWNER_CALLED place
        self._place_roots: dict[str, list[ast.AST]] = {}
        self._filled: set[str] | None = None  # _filled_lists

    def holds(self, inside: Inside | Together | InCalledDef) -> bool:
        found = self._holds.get(inside)
        if found is None and type(inside) is Together:
            found = self._holds[inside] = self._together(inside)
        if found is None and type(inside) is InCalledDef:
            found = self._holds[inside] = self._in_called_def(inside)
        if found is None and type(inside) is BoundAndUsed:
            found = self._holds[inside] = self._bound_and_used(inside)
        if found is None:
            place = inside.place
            if all(node.startswith(SELF_BOUND) for node in inside.nodes) and inside.nodes:
                if place != IN_DEF_OR_LOOP:
                    raise ValueError(f"{SELF_BOUND!r} nodes: IN_DEF_OR_LOOP only")
                found = self._self_bound({node[len(SELF_BOUND):] for node in inside.nodes})
            elif inside.nodes == _READS_FILES_ONLY:
                if place != ANYWHERE:
                    raise ValueError(f"{READS_FILES!r} is a fact of the whole module: ANYWHERE only")
                found = self._reads_files()
            elif inside.nodes == _MAY_RUN_SESSION_ONLY:
                if place != ANYWHERE:
                    raise ValueError(f"{MAY_RUN_SESSION!r} is a fact of the whole module: ANYWHERE only")
                found = self._may_run_session()
            elif inside.nodes == _OUTER_MUTATION_ONLY:
                if place != TRACED:
                    raise ValueError(f"{OUTER_MUTATION!r}: TRACED only")
                found = self._mutates_outer(self._roots(TRACED))
            elif _calls_only(inside.nodes):
                found = self._call_in_place(inside.nodes, place)
            elif inside.nodes <= _CALL_OR_DEF_NODES and place in (ANYWHERE, IN_DEF_OR_LOOP):
                candidates = self.calls + self.defs
                if place == IN_DEF_OR_LOOP:
                    straight = self._straight_module_code()
                    candidates = [node for node in candidates if id(node) not in straight]
                found = any(map(self._matcher(inside.nodes), candidates))
            else:
                match = self._matcher(inside.nodes)
                region = self._region
                if place == ANYWHERE or place == NOTEBOOK:
                    found = (place == ANYWHERE or self.facts.notebook) and any(map(match, self.facts.every_node))
                elif place == LOOP:
                    found = any(map(match, region(LOOP, lambda: self.loops)))
                elif place == IN_DEF_OR_LOOP:
                    found = any(map(match, self._in_def_or_loop()))
                elif place == MODEL_METHOD:
                    found = any(map(match, region(MODEL_METHOD, self._model_methods)))
                elif place == TRAINING_LOOP:
                    found = any(map(match, region(TRAINING_LOOP, self._training_loops)))
                elif place == REPEATED:
                    found = any(map(match, region(REPEATED, self._repeated_roots, follow_calls=True)))
                elif place == OUTSIDE_WITH:
                    found = False  # calls only
                else:
                    found = any(map(match, region(place, lambda: self._roots(place), True)))
            if not found and NUMPY_NAME in inside.nodes and place in (TRACED, MAPPED):
                roots = self._roots(place)
                found = bool(roots) and bool(self._numpy_names()) and self._captures(roots, self._numpy_names())
            self._holds[inside] = found
        return found

    def _call_in_place(self, nodes: frozenset[str], place: str) -> bool:
        """For a node test only a call passes: the module's calls that pass it, found first (most
        modules have none, and then no place is searched), then whether one is in ``place``."""
        passing = self._passing.get(nodes)
        if passing is None:
            match = self._matcher(nodes)
            passing = self._passing[nodes] = [call for call in self._candidates[nodes]() if match(call)]
        if not passing:
            return False
        if type(place) is not tuple:
            return self._holds_call_in(place, passing)
        return any(all(self._holds_call_in(one, [call]) for one in place) for call in passing)

    def _holds_call_in(self, place: str, calls: list[ast.AST]) -> bool:
        """One of ``calls`` is in ``place``."""
        if place == ANYWHERE:
            return True
        if place == NOTEBOOK:
            return self.facts.notebook
        if place == OUTSIDE_WITH:
            if self._with_items is None:
                self._with_items = {id(item.context_expr) for node in self.withs for item in node.items}  # type: ignore[attr-defined]
            return any(id(call) not in self._with_items for call in calls)
        if place == IN_DEF_OR_LOOP:
            straight = self._straight_module_code()
            return any(id(call) not in straight for call in calls)
        if place == OWNER_CALLED:
            return self._owner_called(calls)
        if place == RERUN_SCRIPT:
            if not reruns_per_interaction(self.facts.aliases):
                return False
            straight = self._straight_module_code()
            return any(id(call) in straight for call in calls)
        ids = self._call_ids
        if place == LOOP:
            region = ids(LOOP, lambda: self.loops)
        elif place == MODEL_METHOD:
            region = ids(MODEL_METHOD, self._model_methods)
        elif place == TRAINING_LOOP:
            region = ids(TRAINING_LOOP, self._training_loops)
        elif place == REPEATED:
            region = ids(REPEATED, self._repeated_roots, follow_calls=True)
        elif place == ENTRY_CALLED:
            region = ids(ENTRY_CALLED, lambda: [d for d in self.defs if d.name == "__call__"
                                                or d.name.lstrip("_") in ENTRY_POINTS], follow_calls=True)
        else:
            region = ids(place, lambda: self._roots(place), True)
        return any(id(call) in region for call in calls)

    def _together(self, together: Together) -> bool:
        """Some root of the place (a loop; or a def that runs per event) holds a node of every
        group, searched as ``holds`` searches that place."""
        if not all(self.holds(Inside(together.place, group)) for group in together.groups):
            return False  # each group must at least be somewhere in the place
        repeated = together.place == REPEATED
        roots = self.loops + self._repeated_defs() if repeated else self.loops

        def in_root(group: frozenset[str], root: ast.AST) -> bool:
            key = (id(root), repeated)
            if _calls_only(group):  # the calls that pass, found by holds above
                region = self._call_ids(key, lambda: [root], follow_calls=repeated)
                return any(id(call) in region for call in self._passing[group])
            return any(map(self._matcher(group), self._region(key, lambda: [root], follow_calls=repeated)))
        return any(all(in_root(group, root) for group in together.groups) for root in roots)

    def _in_called_def(self, structure: InCalledDef) -> bool:
        match = self._matcher(structure.nodes)
        named = structure.named
        candidates = [d for d in self.defs if named(d.name)]
        if not candidates:
            return False
        methods = {id(d) for cls in self.classes for d in cls.body if isinstance(d, _DEFS)}
        repeated: set[int] | None = None
        for definition in candidates:
            name = definition.name
            if not (id(definition) in methods or name == "__call__" or name.lstrip("_") in ENTRY_POINTS):
                if repeated is None:
                    repeated = {id(n) for n in self._repeated_region() if isinstance(n, _DEFS)}
                if id(definition) not in repeated:
                    continue
            if any(map(match, _straight_nodes(definition))):
                return True
        return False

    def _bound_and_used(self, structure: BoundAndUsed) -> bool:
        match = self._matcher(structure.nodes)
        for definition in self.defs:
            arguments = definition.args
            if not structure.named(definition.name) or not {
                    a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                                    arguments.vararg, arguments.kwarg] if a is not None} - {"self", "cls"}:
                continue
            nodes = ast_nodes(definition)
            bound = {node.targets[0].id for node in nodes  # type: ignore[attr-defined]
                     if type(node) is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name
                     and type(node.value) is ast.Call and match(node.value)}
            if bound and any(
                    type(node) is ast.Call and node.args and (  # type: ignore[attr-defined]
                        (type(node.func) is ast.Name and node.func.id in bound)  # type: ignore[attr-defined]
                        or (type(node.func) is ast.Attribute and type(node.func.value) is ast.Name  # type: ignore[attr-defined]
                            and node.func.value.id in bound and structure.used(node.func.attr)))  # type: ignore[attr-defined]
                    for node in nodes):
                return True
        return False

    def _repeated_roots(self) -> list[ast.AST]:
        return self.loops + self._repeated_defs()

    def _repeated_region(self) -> list[ast.AST]:
        """The REPEATED place: its loops and event defs, and the defs their calls may run."""
        return self._region(REPEATED, self._repeated_roots, follow_calls=True)

    def _region(self, key: Any, roots, into_functions: bool = False, follow_calls: bool = False) -> list[ast.AST]:
        """The nodes of a place, found once (``_reach``) for every node test asked of it;
        ``roots()`` gives the place's roots."""
        found = self._regions.get(key)
        if found is None:
            found = self._regions[key] = self._reach(roots(), into_functions, follow_calls)
        return found

    def _call_ids(self, key: Any, roots, into_functions: bool = False, follow_calls: bool = False) -> set[int]:
        """The calls of a place (``_region``), as ids, for a node test only a call can pass."""
        found = self._region_calls.get(key)
        if found is None:
            found = self._region_calls[key] = {id(node) for node in self._region(key, roots, into_functions, follow_calls)
                                               if type(node) is ast.Call}
        return found

    def _straight_module_code(self) -> set[int]:
        """The ids of the nodes of the module's straight code: outside every def, loop and
        comprehension (module level, class bodies). IN_DEF_OR_LOOP is every other node."""
        if self._straight is None:
            straight = self._straight = set()
            outer = self._outer_defs = set()
            stack: list[ast.AST] = [self.facts.tree]
            while stack:
                node = stack.pop()
                straight.add(id(node))
                for child in ast_children(node):
                    if not isinstance(child, _DEF_LOOP_OR_COMPREHENSION):
                        stack.append(child)
                    elif isinstance(child, _DEFS):
                        outer.add(id(child))
        return self._straight

    def _owner_called(self, calls: list[ast.AST]) -> bool:
        """OWNER_CALLED for one of ``calls``: the module's calls in that place, found in one walk."""
        if self._owner_called_ids is None:
            straight = self._straight_module_code()
            called = {func.id if type(func) is ast.Name else func.attr for func in
                      (call.func for call in self.calls if id(call) not in straight)  # type: ignore[attr-defined]
                      if type(func) is ast.Name or type(func) is ast.Attribute}
            found = self._owner_called_ids = set()
            stack: list[tuple[ast.AST, bool, tuple[str, ...]]] = [(self.facts.tree, False, ())]
            while stack:
                node, looped, owners = stack.pop()
                kind = type(node)
                if kind is ast.Call and (looped or not called.isdisjoint(owners)):
                    found.add(id(node))
                if kind in _OWNERS:
                    owners = (*owners, node.name)  # type: ignore[attr-defined]
                elif kind in _LOOPS_AND_COMPREHENSIONS:
                    looped = True
                stack.extend((child, looped, owners) for child in ast_children(node))
        return any(id(call) in self._owner_called_ids for call in calls)

    def _self_bound(self, names: set[str]) -> bool:
        """A call of one of ``names`` assigned to ``self.<attr>`` in a def or a loop, not in the
        own code of an ``__init__`` (built once per object; a loop there is a loop's)."""
        straight = self._straight_module_code()
        qualified = self.facts.qualified
        initial = {id(node) for d in self.defs if d.name == "__init__" for node in ast_own_nodes(d)}
        for node in self.assigns:
            if type(node) is ast.Assign and id(node) not in straight and id(node) not in initial \
                    and type(node.value) is ast.Call \
                    and any(type(t) is ast.Attribute and type(t.value) is ast.Name and t.value.id == "self"
                            for t in node.targets) and qualified(node.value.func) in names:
                return True
        return False

    def _reads_files(self) -> bool:
        """READS_FILES: an import or an ``a.b.c`` chain of the module resolves to such a name."""
        facts = self.facts
        if facts._attrs is None:
            facts._walk()
        names = {canonical(module) for module in facts.aliases.values()}
        names.update(map(facts.qualified, facts._attribute_nodes))
        names.discard(None)
        return any(name.startswith(DECODING_PREFIXES) or name in DECODED_SOURCES or name in FILE_RECORD_SOURCES
                   for name in names)  # type: ignore[union-attr]

    def _may_run_session(self) -> bool:
        """MAY_RUN_SESSION, from what ``SessionFacts.is_session`` and ``is_session_run`` accept: any
        identifier (import names too) spelled like a session or naming a session class, factory or
        Keras evaluator; an ``.eval`` (``t.eval()``, ``K.eval``, or ``eval`` imported from a
        module); a ``.run`` given ``feed_dict=`` or ``session=``."""
        facts = self.facts
        identifiers = facts.identifiers
        if not _SESSION_WORDS.isdisjoint(identifiers) or any(map(SESSION_NAME, identifiers)):
            return True
        if "eval" in facts.attributes or any(module.endswith(".eval") for module in facts.aliases.values()):
            return True
        by_callee, _ = self._call_index()
        return any(keyword.arg in FEED_KEYWORDS for call in by_callee.get("run", ()) for keyword in call.keywords)

    def _in_def_or_loop_def(self, node: ast.AST) -> bool:
        """``node``, a def, is nested in a def or a loop (or a comprehension): not one of the defs
        of the module's or a class body's straight code."""
        self._straight_module_code()
        return id(node) not in self._outer_defs  # type: ignore[operator]

    def _in_def_or_loop(self) -> list[ast.AST]:
        found = self._regions.get(IN_DEF_OR_LOOP)
        if found is None:
            straight = self._straight_module_code()
            found = self._regions[IN_DEF_OR_LOOP] = [node for node in self.facts.every_node if id(node) not in straight]
        return found

    def _model_methods(self) -> list[ast.AST]:
        models = self._subclasses(lambda base: self.facts.qualified(base) in KERAS_MODEL_BASES)
        return [d for cls in self.classes if cls.name in models for d in cls.body if isinstance(d, _DEFS)]

    def _training_loops(self) -> list[ast.AST]:
        training = self._training_call
        return [loop for loop in self.loops if any(map(training, self._region((id(loop), False), lambda: [loop])))]

    def _roots(self, place: str) -> list[ast.AST]:
        """The roots of TRACED or MAPPED, found once."""
        found = self._place_roots.get(place)
        if found is None:
            found = self._place_roots[place] = self._traced_roots() if place == TRACED else self._mapped_roots()
        return found

    def _matcher(self, nodes: frozenset[str]):
        """The test of a node for ``nodes``, built once per set of nodes."""
        match = self._matchers.get(nodes)
        if match is None:
            match = self._matchers[nodes] = self._new_matcher(nodes)
        return match

    def _new_matcher(self, nodes: frozenset[str]):
        if not nodes:
            return lambda node: True
        kinds = tuple(cls for n in nodes for cls in _KINDS.get(n, ()))
        methods = {n[1:] for n in nodes if n.startswith(".") and "(" not in n}
        names = {n for n in nodes if n[0] not in ".~" and "(" not in n and n not in _KINDS and n not in _SPECIAL
                 and n not in EFFECTS}
        flagged = [(name, keyword) for name, keyword in (_keyword_true(n) for n in nodes) if name]
        sized = [found.groups() for found in map(_AT_LEAST.fullmatch, nodes) if found]
        # "~hub" as the triggers read it: a callee whose written or qualified name contains the text
        texts = tuple(n[1:] for n in nodes if n[0] == "~")
        item_write = ITEM_WRITE in nodes
        numpy = NUMPY_ARRAY in nodes
        fetch_ops = OPS_IN_FETCH in nodes
        graph_op = GRAPH_OP in nodes
        counted = COUNTED_LOOP in nodes
        made = TF_FUNCTION_MADE in nodes
        scalar_def = SCALAR_TF_FUNCTION in nodes
        bound = self.tf_function_names() if TF_FUNCTION_CALL in nodes else set()
        qualified = self.facts.qualified
        effects = nodes & EFFECTS
        project = self.facts.project or {}
        written = {key for key, entry in project.items()
                   if not key.startswith("__") and not effects.isdisjoint(entry)} if effects else set()
        # agent.act() on an instance of a project class (the table writes Agent.act): any receiver
        written_methods = {key.rpartition(".")[2] for key in written if "." in key}

        def named(func: ast.AST, among: set[str] = names) -> bool:
            """A call of one of ``among`` or of a name under it (as triggers match)."""
            name = qualified(func)
            while name:
                if name in among:
                    return True
                name = name.rpartition(".")[0]
            return False

        # Constructing a class of the module that derives from a named class constructs that class.
        derived = self._subclasses(named) if names else set()

        def match(node: ast.AST) -> bool:
            kind = type(node)
            if kind is ast.Call:
                func = node.func  # type: ignore[attr-defined]
                callee = func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else None
                if callee in methods and type(func) is ast.Attribute:
                    return True
                if callee in bound and (node.args or node.keywords):  # f(x), self.f(x)
                    return True
                if fetch_ops and self._builds_in_fetch(node):
                    return True
                if graph_op and op_creating_name(qualified(func) or ""):
                    return True
                if made and _creates_tf_function(node, qualified):
                    return True
                if flagged and any(named(func, {name}) and _gives_true(node, keyword) for name, keyword in flagged):
                    return True
                if sized and type(func) is ast.Attribute and any(
                        callee == method and self._may_reach(_argument(node, keyword), int(bound))
                        for method, keyword, bound in sized) and self.facts.imported(func.value) not in _RANDOM_MODULES:
                    return True
                if texts and any(text in spelled for spelled in (ast_dotted_name(func) or "", qualified(func) or "")
                                 for text in texts):
                    return True
                if written and (ast_dotted_name(func) in written or (type(func) is ast.Attribute and callee in written_methods)):
                    return True
                return (bool(names) and (named(func) or (type(func) is ast.Name and callee in derived))) \
                    or (numpy and self._numpy_array(func))
            if counted and (kind is ast.For or kind is ast.AsyncFor or kind is ast.While) \
                    and self._may_be_counted(node):  # type: ignore[arg-type]
                return True
            if (made or scalar_def) and (kind is ast.FunctionDef or kind is ast.AsyncFunctionDef):
                if made and self._decorated(node) and self._in_def_or_loop_def(node):  # type: ignore[arg-type]
                    return True
                if scalar_def and self._decorated(node) and _declares_python_scalar(node):  # type: ignore[arg-type]
                    return True
            if item_write:
                if kind is ast.Assign:
                    if any(type(t) is ast.Subscript for t in node.targets):  # type: ignore[attr-defined]
                        return True
                elif kind is ast.AugAssign or kind is ast.AnnAssign:
                    if type(node.target) is ast.Subscript:  # type: ignore[attr-defined]
                        return True
            return bool(kinds) and isinstance(node, kinds)

        def candidates() -> list[ast.AST]:
            """The calls ``match`` may pass, from the module's call index (then tested); every
            call where a text, an effect or NumPy is asked."""
            if texts or written or numpy:
                return self.calls
            by_callee, by_prefix = self._call_index()
            found: list[ast.AST] = []
            for callee in methods | {method for method, _, _ in sized} | (_RUN_METHODS if fetch_ops else set()) \
                    | bound | derived:
                found.extend(by_callee.get(callee, ()))
            for name in names | {name for name, _ in flagged} | ({OP_NAMESPACE, KERAS_BACKEND.rstrip('.')} if graph_op else set()):
                found.extend(by_prefix.get(name, ()))
            return found
        self._candidates[nodes] = candidates
        return match

    def _call_index(self) -> tuple[dict[str, list[ast.Call]], dict[str, list[ast.Call]]]:
        """The module's calls by callee (``f`` of ``f()`` and ``x.f()``) and by every dotted prefix
        of their resolved name (``qualified``): what a node test's calls are found from."""
        if self._calls_by is None:
            by_callee: dict[str, list[ast.Call]] = {}
            by_prefix: dict[str, list[ast.Call]] = {}
            qualified = self.facts.qualified
            for call in self.calls:
                func = call.func
                kind = type(func)
                if kind is ast.Attribute:
                    by_callee.setdefault(func.attr, []).append(call)  # type: ignore[attr-defined]
                elif kind is ast.Name:
                    by_callee.setdefault(func.id, []).append(call)  # type: ignore[attr-defined]
                name = qualified(func)
                while name:
                    by_prefix.setdefault(name, []).append(call)
                    name = name.rpartition(".")[0]
            self._calls_by = (by_callee, by_prefix)
        return self._calls_by

    def _reach(self, roots: list, into_functions: bool = False, follow_calls: bool = False) -> list[ast.AST]:
        """The nodes under ``roots`` (each once); nested defs and lambdas only with
        ``into_functions`` (they run at another time); with ``follow_calls``, the defs a call
        under the roots may run too (``FunctionFacts.resolve``: a def of that name, the
        ``__init__`` of a class of that name; a method of that name for ``x.name()``)."""
        found: list[ast.AST] = []
        seen: set[int] = set()
        stack = list(roots)
        followed: set[int] = set()
        callees = self._callees() if follow_calls else None
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            found.append(node)
            if callees is not None and type(node) is ast.Call:
                func = node.func  # type: ignore[attr-defined]
                name = func.id if type(func) is ast.Name else func.attr if type(func) is ast.Attribute else None
                for callee in callees.get(name, ()):
                    if id(callee) not in followed:
                        followed.add(id(callee))
                        stack.append(callee)
            for child in ast_children(node):
                if into_functions or not isinstance(child, _FUNCTIONS):
                    stack.append(child)
        return found

    def _numpy_array(self, func: ast.AST) -> bool:
        """``np.zeros``, ``numpy.random.rand``, ``zeros`` from numpy: a NumPy function that
        builds an array (``TFContext.is_numpy_call``)."""
        last = func.attr if type(func) is ast.Attribute else None  # type: ignore[attr-defined]
        while type(func) is ast.Attribute:
            func = func.value  # type: ignore[attr-defined]
        module = self.facts.aliases.get(func.id) if type(func) is ast.Name else None  # type: ignore[attr-defined]
        if module is None or not (module == "numpy" or module.startswith("numpy.")):
            return False
        return (last or module.rsplit(".", 1)[-1]) in NUMPY_ARRAY_FACTORIES

    def _may_reach(self, value: ast.expr | None, bound: int, _depth: int = 0) -> bool:
        """``value`` may be a size of at least ``bound`` as PipelineFacts.whole_dataset_size reads
        one (with context.int_value): an integer literal that large; arithmetic; ``len(...)``, a
        cardinality, a split's ``num_examples``; ``int(...)`` or ``.numpy()`` of one; a name one of
        whose values in the module (``_values_of``) may be. Not a missing argument, a small
        literal, ``self.buffer_size``, ``config["buffer"]``, a name bound to none of these."""
        if value is None:
            return False
        if _depth > 8:
            return True
        kind = type(value)
        if kind is ast.Constant:
            return type(value.value) is int and value.value >= bound  # type: ignore[attr-defined]
        if kind is ast.UnaryOp:
            operand = value.operand  # type: ignore[attr-defined]
            return type(value.op) is ast.USub and type(operand) is ast.Constant \
                and type(operand.value) is int and -operand.value >= bound  # type: ignore[attr-defined]
        if kind is ast.BinOp:
            return True
        if kind is ast.Attribute:
            return value.attr == "num_examples"  # type: ignore[attr-defined]
        if kind is ast.Name:
            return any(self._may_reach(v, bound, _depth + 1) for v in self._values_of(value.id))  # type: ignore[attr-defined]
        if kind is not ast.Call:
            return False
        func = value.func  # type: ignore[attr-defined]
        given = [*value.args, *(k.value for k in value.keywords)]  # type: ignore[attr-defined]
        if type(func) is ast.Name and func.id in ("len", "int"):
            return bool(given) and (func.id == "len" or self._may_reach(
                given[0].value if type(given[0]) is ast.Starred else given[0], bound, _depth + 1))
        if type(func) is ast.Attribute and func.attr == "numpy":
            return self._may_reach(func.value, bound, _depth + 1)
        return (type(func) is ast.Attribute and func.attr == "cardinality") \
            or self.facts.qualified(func) in CARDINALITY_CALLS

    def _values_of(self, name: str) -> list[ast.expr]:
        """Every value the module binds ``name`` to, whatever the scope (what value_of, int_value
        and a parameter's default may give for it): an assignment's value (and, for a tuple or
        list, its items), an augmented assignment's operand, a parameter's default."""
        if self._values is None:
            values: dict[str, list[ast.expr]] = {}
            for node in self.assigns:
                value = getattr(node, "value", None)
                if value is None:
                    continue
                targets = node.targets if type(node) is ast.Assign else [node.target]  # type: ignore[attr-defined]
                found = [value, *(value.elts if type(value) in (ast.Tuple, ast.List) else ())]  # type: ignore[attr-defined]
                for target in targets:
                    for n in ast_nodes(target):
                        if type(n) is ast.Name:
                            values.setdefault(n.id, []).extend(found)  # type: ignore[attr-defined]
            for function in self.defs + [n for n in self.facts.every_node if type(n) is ast.Lambda]:
                arguments = function.args
                positional = [*arguments.posonlyargs, *arguments.args]
                pairs = [*zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults),
                         *zip(arguments.kwonlyargs, arguments.kw_defaults)]
                for parameter, default in pairs:
                    if default is not None:
                        values.setdefault(parameter.arg, []).append(default)
            self._values = values
        return self._values.get(name, [])

    def _may_be_counted(self, loop: ast.For | ast.AsyncFor | ast.While) -> bool:
        """COUNTED_LOOP: what TracingFacts.loop_kind may call a Python loop of known count, or a
        ``for`` over ``range(...)`` (the rules' unknown bound from a caller): a ``while`` whose test
        is one ``<`` or ``<=`` with a name on the left (``is_python_int_counter`` takes names
        only); a ``for`` whose iterable ``_countable`` accepts."""
        if type(loop) is ast.While:
            test = loop.test
            return type(test) is ast.Compare and len(test.ops) == 1 and type(test.ops[0]) in (ast.Lt, ast.LtE) \
                and type(test.left) is ast.Name
        return self._countable(loop.iter)

    def _countable(self, iterable: ast.expr) -> bool:
        """What ``context.trip_count`` (STATIC) may count: a list or tuple display; a name, whose
        value it counts only when that is a NumPy array call of the module; ``range(...)``,
        tqdm's ``trange(...)``, a NumPy array call; ``enumerate``, ``reversed``, ``list`` or
        ``tuple`` of one of these."""
        kind = type(iterable)
        if kind is ast.List or kind is ast.Tuple:
            return True
        if kind is ast.Name:
            return self.holds(Inside(ANYWHERE, frozenset({NUMPY_ARRAY})))
        if kind is not ast.Call:
            return False
        func = iterable.func  # type: ignore[attr-defined]
        if type(func) is ast.Name and func.id in COUNT_KEEPING_CALLS:
            return any(self._countable(a.value if type(a) is ast.Starred else a)
                       for a in [*iterable.args, *(k.value for k in iterable.keywords)])  # type: ignore[attr-defined]
        return (type(func) is ast.Name and func.id == "range") or self.facts.imported(func) in TQDM_RANGES \
            or self._numpy_array(func)

    def _builds_in_fetch(self, call: ast.Call) -> bool:
        """A session run (``sess.run``, ``t.eval()``...) with, anywhere in its fetches, a call
        other than an initializer, an operator or a subscript: what SessionFacts.ops_in_fetch may
        find there (it looks only through containers; it reports no initializer); or a list a
        function fills with such (ops_filled_into_fetch)."""
        filled = self._filled_lists()
        return any(self._may_build(fetch) or any(type(node) is ast.Name and node.id in filled  # type: ignore[attr-defined]
                                                 for node in ast_nodes(fetch))
                   for fetch in _fetches(call))

    def _may_build(self, expr: ast.AST) -> bool:
        qualified = self.facts.qualified
        for node in ast_nodes(expr):
            kind = type(node)
            if kind is ast.Call:
                if not is_initializer(qualified(node.func)):  # type: ignore[attr-defined]
                    return True
            elif kind is ast.BinOp or kind is ast.UnaryOp or kind is ast.Subscript:
                return True
        return False

    def _filled_lists(self) -> set[str]:
        """The names some ``x.append(...)`` / ``x.extend(...)`` fills with what may build ops."""
        if self._filled is None:
            by_callee, _ = self._call_index()
            self._filled = {call.func.value.id for method in LIST_FILLING_METHODS for call in by_callee.get(method, ())
                            if call.args and type(call.func) is ast.Attribute and type(call.func.value) is ast.Name
                            and self._may_build(call.args[0])}
        return self._filled

    def _captures(self, roots: list, names: set[str]) -> bool:
        """A function under ``roots`` (nested ones too) uses a name of ``names`` that it does not
        bind itself (TFM106's capture: ``context.binding`` finds it in an outer scope). Bound:
        a parameter, an assignment, loop, with or comprehension target (``scopes.collect``), not
        declared global. Every other identifier LibCST holds as a Name counts as a use."""
        seen: set[int] = set()
        for function in (n for root in roots for n in ast_nodes(root) if isinstance(n, _FUNCTIONS)):
            if id(function) in seen:
                continue
            seen.add(id(function))
            arguments = function.args
            bound = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                                     arguments.vararg, arguments.kwarg] if a is not None}
            bound.update(n.id for n in ast_own_nodes(function, ast.ClassDef)
                         if type(n) is ast.Name and type(n.ctx) is ast.Store)  # type: ignore[attr-defined]
            used = ast_own_nodes(function)
            bound.difference_update(name for n in used if type(n) is ast.Global for name in n.names)  # type: ignore[attr-defined]
            outer = names - bound
            if outer and any(not outer.isdisjoint(_identifiers(n)) for n in used if type(n) in _IDENTIFIER_KINDS):
                return True
        return False

    def _mutates_outer(self, roots: list) -> bool:
        """OUTER_MUTATION in a function under ``roots`` (nested ones too). A frame's own nodes,
        as the walk sees them with that frame current: its decorators and defaults, the bodies of
        classes in it, not nested defs and lambdas. Bound (a subset of what ``scopes.collect``
        binds there): its parameters, and every name stored in it outside a nested class."""
        seen: set[int] = set()
        for function in (n for root in roots for n in ast_nodes(root) if isinstance(n, _FUNCTIONS)):
            if id(function) in seen:
                continue
            seen.add(id(function))
            mutated: set[str] = set()
            for node in ast_own_nodes(function):
                kind = type(node)
                if kind is ast.Call:
                    func = node.func  # type: ignore[attr-defined]
                    if type(func) is ast.Attribute and func.attr in MUTATING_METHODS and type(func.value) is ast.Name:
                        mutated.add(func.value.id)
                elif kind is ast.Assign or kind is ast.AugAssign:
                    targets = node.targets if kind is ast.Assign else [node.target]  # type: ignore[attr-defined]
                    mutated.update(t.value.id for t in targets if type(t) is ast.Subscript and type(t.value) is ast.Name)
            if not mutated:
                continue
            arguments = function.args
            bound = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                                     arguments.vararg, arguments.kwarg] if a is not None}
            bound.update(n.id for n in ast_own_nodes(function, ast.ClassDef)
                         if type(n) is ast.Name and type(n.ctx) is ast.Store)  # type: ignore[attr-defined]
            if not mutated <= bound:
                return True
        return False

    def _numpy_names(self) -> set[str]:
        """Names an assignment may bind to a NumPy array (ArrayFacts.is_ndarray follows a name
        to its value): a value holding a NumPy array call, or such a name. Found once."""
        if self._numpy_bound is not None:
            return self._numpy_bound
        found: set[str] = set()
        self._numpy_bound = found
        if not self.holds(Inside(ANYWHERE, frozenset({NUMPY_ARRAY}))):
            return found  # no NumPy array is made in the module: no name holds one
        candidates = []
        for node in self.assigns:
            value = getattr(node, "value", None)
            if value is not None and type(node) is not ast.NamedExpr:
                targets = node.targets if type(node) is ast.Assign else [node.target]  # type: ignore[attr-defined]
                candidates.append(([n.id for t in targets for n in ast_nodes(t) if type(n) is ast.Name],
                                   ast_nodes(value)))
        numpy = self._matcher(frozenset({NUMPY_ARRAY}))
        changed = True
        while changed:
            changed = False
            for names, parts in candidates:
                if not found.issuperset(names) and any(
                        numpy(n) or (type(n) is ast.Name and n.id in found) for n in parts):  # type: ignore[attr-defined]
                    found.update(names)
                    changed = True
        return found

    def _training_call(self, node: ast.AST, trainers: set[str] | None = None) -> bool:
        """A call that may take an optimisation step (KerasFacts.is_training_call): a training
        method, a ``train_step``, a call of a def of the module that takes one, or
        ``strategy.run`` given such a def (``trainers``: their names, ``_training_defs``)."""
        if type(node) is not ast.Call:
            return False
        if trainers is None:
            trainers = self._training_defs()
        func = node.func  # type: ignore[attr-defined]
        if type(func) is ast.Attribute:
            method = func.attr
            if method in TRAINING_STEP_METHODS or method == MINIMIZE or TRAIN_STEP_WORD in method:
                return True
            if method != DISTRIBUTED_RUN:
                return False
            given = [*node.args, *(k.value for k in node.keywords)]  # type: ignore[attr-defined]
            return any(type(value) is ast.Name and value.id in trainers  # the rule reads the first one
                       for value in (v.value if type(v) is ast.Starred else v for v in given))
        return type(func) is ast.Name and (TRAIN_STEP_WORD in func.id or func.id in trainers)

    def _training_defs(self) -> set[str]:
        """Names of the module's defs that take an optimisation step, themselves or through the
        defs they call (KerasFacts._is_training_function follows two levels; this, every level)."""
        if self._trainers is None:
            calls = {id(d): [n for n in ast_nodes(d) if type(n) is ast.Call] for d in self.defs}
            self._trainers = _closure(self.defs, lambda definition, trainers: any(
                self._training_call(call, trainers) for call in calls[id(definition)]))
        return self._trainers

    def _decorated(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """``@tf.function`` / ``@tf.function(...)`` (tracing.tf_function_decorator)."""
        return any(self.facts.qualified(d.func if type(d) is ast.Call else d) == TF_FUNCTION
                   for d in node.decorator_list)

    def tf_function_names(self) -> set[str]:
        """Names a tf.function may be called by (tracing.tf_function_target): decorated defs,
        and the targets of ``g = tf.function(f)`` / ``g = tf.function(...)(f)``; also of
        ``m = tf.saved_model.load(...)`` / ``hub.load(...)`` (data_shapes.restored_callee), whose
        calls trace a restored function (``self.m = ...`` gives ``m``)."""
        if self._tf_function_names is None:
            names = {d.name for d in self.defs if self._decorated(d)}
            qualified = self.facts.qualified
            aliases = self.facts.aliases
            for node in self.assigns:
                value = node.value  # type: ignore[attr-defined]
                if type(value) is not ast.Call:
                    continue
                targets = node.targets if type(node) is ast.Assign else [node.target]  # type: ignore[attr-defined]
                if qualified(value.func) == TF_FUNCTION or (
                        type(value.func) is ast.Call and qualified(value.func.func) == TF_FUNCTION):
                    names.update(n.id for t in targets for n in ast_nodes(t) if type(n) is ast.Name)
                elif _restores(value.func, qualified, aliases):
                    names.update(t.id if type(t) is ast.Name else t.attr for t in targets
                                 if type(t) is ast.Name or type(t) is ast.Attribute)
            self._tf_function_names = names
        return self._tf_function_names

    def _traced_roots(self) -> list[ast.AST]:
        """Defs and lambdas TensorFlow may trace (tracing.is_traced_def / is_traced_lambda): the
        decorated ones, those passed to a tracing call or a Dataset method that traces (on any
        receiver), Keras-traced methods of a class that may derive from a Keras base class."""
        names: set[str] = set()
        roots: list[ast.AST] = []
        qualified = self.facts.qualified
        for call in self.calls:
            func = call.func
            if (type(func) is ast.Attribute and func.attr in DATASET_TRACING_METHODS) \
                    or qualified(func) in TRACING_CALLS:
                for value in _function_arguments(call):
                    if type(value) is ast.Lambda:
                        roots.append(value)
                    elif type(value) is ast.Name:
                        names.add(value.id)
                    elif type(value) is ast.Attribute:
                        names.add(value.attr)
        roots.extend(d for d in self.defs if d.name in names or self._decorated(d))
        layers = self._subclasses(lambda base: qualified(base) in KERAS_BASE_CLASSES)  # KerasFacts.layer_classes
        for cls in self.classes:
            if cls.name in layers:
                roots.extend(n for n in ast_nodes(cls) if isinstance(n, _DEFS) and n.name in KERAS_TRACED_METHODS)
        return roots

    def _subclasses(self, base_matches) -> set[str]:
        """Classes deriving from a class ``base_matches`` accepts, directly or through a class of
        the module (context.subclasses_of: the same fixed point)."""
        return _closure(self.classes, lambda cls, found: any(
            (type(base) is ast.Name and base.id in found) or base_matches(base) for base in cls.bases))

    def _mapped_roots(self) -> list[ast.AST]:
        """Functions tf.map_fn or a ``.map`` may run per element (tracing.is_mapped): lambdas and
        names in their arguments (a lambda's callees too)."""
        names: set[str] = set()
        roots: list[ast.AST] = []
        for call in self.calls:
            func = call.func
            if (type(func) is ast.Attribute and func.attr in DATASET_MAP_METHODS) \
                    or self.facts.qualified(func) == MAP_FN:
                for arg in [*call.args, *(k.value for k in call.keywords)]:
                    for node in ast_nodes(arg):
                        if type(node) is ast.Lambda:
                            roots.append(node)
                        elif type(node) is ast.Name:
                            names.add(node.id)
                        elif type(node) is ast.Attribute:
                            names.add(node.attr)
        return roots + [d for d in self.defs if d.name in names]

    def _repeated_defs(self) -> list[ast.AST]:
        """Defs that may run once per event (events.repetition): a route decorator, an HTTP,
        batch or epoch hook name, a ``request`` parameter, a method of a gRPC servicer, a def
        handed to a search runner (SEARCH_RUNNERS: a search's objective), an environment's step."""
        if self._repeated is not None:
            return self._repeated
        hooks = HTTP_METHODS | BATCH_HOOKS | EPOCH_HOOKS
        objectives = set()
        for call in self.calls:
            runner = call.func.attr if type(call.func) is ast.Attribute else getattr(call.func, "id", None)
            if runner in SEARCH_RUNNERS:
                handed = [arg for position, arg in enumerate(call.args) if handed_objective(runner, position, None)]
                handed += [k.value for k in call.keywords if k.arg and handed_objective(runner, None, k.arg)]
                objectives.update(arg.id if type(arg) is ast.Name else arg.attr for arg in handed
                                  if type(arg) is ast.Name or type(arg) is ast.Attribute)
        found: list[ast.AST] = []
        self._repeated = found
        for node in self.defs:
            arguments = node.args
            if node.name in hooks or node.name in objectives or any(
                    type(d) is ast.Call and type(d.func) is ast.Attribute and d.func.attr in ROUTE_DECORATORS
                    for d in node.decorator_list) or any(
                    a.arg == "request" for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]):
                found.append(node)
        step_methods = set(ENVIRONMENT_STEP_METHODS.values())
        for cls in self.classes:
            bases = [b.attr if type(b) is ast.Attribute else getattr(b, "id", "") for b in cls.bases]
            if any(b.endswith("Servicer") for b in bases):
                found.extend(n for n in cls.body if isinstance(n, _DEFS))
            elif any(b.endswith(ENVIRONMENT_BASE_SUFFIXES) for b in bases):  # events.is_environment_step
                found.extend(n for n in cls.body if isinstance(n, _DEFS) and n.name in step_methods)
        return found

    def _callees(self) -> dict[str, list[ast.AST]]:
        """Name -> the defs a call of that name (``f()``, ``x.f()``) may run: defs of that name,
        the ``__init__`` of classes of that name."""
        if self._callee_table is not None:
            return self._callee_table
        callees: dict[str, list[ast.AST]] = {}
        self._callee_table = callees
        for node in self.defs:
            callees.setdefault(node.name, []).append(node)
        for cls in self.classes:
            callees.setdefault(cls.name, []).extend(
                n for n in cls.body if isinstance(n, _DEFS) and n.name == "__init__")
        return callees



def _restores(func: ast.AST, qualified, aliases: dict[str, str]) -> bool:
    """``tf.saved_model.load`` / ``hub.load`` (data_shapes.RESTORED_LOADERS, IMPORTED_RESTORED_LOADERS)."""
    if qualified(func) in RESTORED_LOADERS:
        return True
    dotted = ast_dotted_name(func) or ""
    head, _, rest = dotted.partition(".")
    module = aliases.get(head)
    return module is not None and (f"{module}.{rest}" if rest else module) in IMPORTED_RESTORED_LOADERS


_RUN_METHODS = SESSION_RUN_METHODS | FEED_RUN_METHODS


def _fetches(run: ast.Call) -> list[ast.expr]:
    """What a session run call evaluates, as sessions.fetches_of reads it on the LibCST tree:
    ``sess.run(fetches, ...)`` (``fetches=``), ``sess.partial_run(handle, fetches)``, the
    receiver of ``t.eval(...)`` / ``op.run(...)``; nothing for another call."""
    func = run.func
    if type(func) is not ast.Attribute or func.attr not in _RUN_METHODS:
        return []
    method = func.attr
    if method == "eval" or (method == "run" and not run.args
                            and all(k.arg in ("feed_dict", "session") for k in run.keywords)):
        return [func.value]
    keyword = next((k.value for k in run.keywords if k.arg == "fetches"), None)
    if keyword is not None:
        return [keyword]
    positional = [a for a in run.args if type(a) is not ast.Starred]
    index = 1 if method == "partial_run" else 0
    return [positional[index]] if len(positional) > index else []


_BODIES_ELSEWHERE = (*_FUNCTIONS, ast.For, ast.AsyncFor, ast.While)


def _straight_nodes(definition: ast.FunctionDef | ast.AsyncFunctionDef):
    """The nodes that run in a def's own frame outside the bodies of its loops (their headers and
    ``else`` included): not the bodies of nested defs and lambdas (their decorators and defaults
    run here)."""
    stack: list[ast.AST] = list(definition.body)
    while stack:
        node = stack.pop()
        yield node
        children = ast.iter_child_nodes(node)
        if isinstance(node, _BODIES_ELSEWHERE):
            body = node.body  # type: ignore[attr-defined]
            skipped = {id(statement) for statement in body} if type(body) is list else {id(body)}
            children = (child for child in children if id(child) not in skipped)
        stack.extend(children)


_KEYWORD_TRUE = re.compile(r"([\w.]+)\((\w+)=True\)")


def _keyword_true(node: str) -> tuple[str, str] | tuple[None, None]:
    """``("tensorflow.GradientTape", "persistent")`` for ``"tensorflow.GradientTape(persistent=True)"``."""
    found = _KEYWORD_TRUE.fullmatch(node)
    return (found[1], found[2]) if found else (None, None)


_AT_LEAST = re.compile(r"\.(\w+)\((\w+)>=(\d+)\)")
# random.shuffle(x), np.random.shuffle(x): a list or an array shuffled in place, never a dataset.
_RANDOM_MODULES = frozenset({"random", "numpy.random"})


def _argument(call: ast.Call, keyword: str) -> ast.expr | None:
    """The argument named ``keyword``, else the first positional one, as syntax.argument(call, 0,
    keyword) reads it on the LibCST tree: None after a ``*args`` or a ``**kwargs``."""
    for given in call.keywords:
        if given.arg == keyword:
            return given.value
    if any(type(arg) is ast.Starred for arg in call.args) or any(given.arg is None for given in call.keywords):
        return None
    return call.args[0] if call.args else None


def _creates_tf_function(call: ast.Call, qualified) -> bool:
    """``tf.function(f, ...)`` or ``tf.function(...)(f)`` (tracing.is_tf_function_call), read
    loosely: any argument may be the function; not ``tf.function(jit_compile=True)`` alone, a
    decorator's call."""
    func = call.func
    if type(func) is ast.Call:
        return qualified(func.func) == TF_FUNCTION
    return qualified(func) == TF_FUNCTION and (bool(call.args) or any(k.arg in (None, "func") for k in call.keywords))


def _declares_python_scalar(definition: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A parameter annotated ``str`` or ``float``, or a default that is a string (bytes, an
    f-string) or float literal, signed or not (TFM110's ``_scalar_kind``, for any parameter)."""
    arguments = definition.args
    for parameter in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
        annotation = parameter.annotation
        if type(annotation) is ast.Name and annotation.id in ("str", "float"):
            return True
    for default in [*arguments.defaults, *arguments.kw_defaults]:
        if type(default) is ast.UnaryOp and type(default.op) in (ast.USub, ast.UAdd):
            default = default.operand
        if type(default) is ast.JoinedStr or (
                type(default) is ast.Constant and type(default.value) in (str, bytes, float)):
            return True
    return False


def _gives_true(call: ast.Call, keyword: str) -> bool:
    return any(k.arg == keyword and type(k.value) is ast.Constant and k.value.value is True for k in call.keywords)


_IDENTIFIER_FIELDS = ("id", "name", "names", "asname", "rest")
# The node kinds _identifiers reads anything from (the others hold no identifier field).
_IDENTIFIER_KINDS = frozenset(kind for kind in vars(ast).values() if isinstance(kind, type)
                              and issubclass(kind, ast.AST) and set(kind._fields) & set(_IDENTIFIER_FIELDS))


def _identifiers(node: ast.AST):
    """The identifiers of ``node`` LibCST holds as ``Name`` nodes and a rule may resolve (``x``,
    ``global x``, the name of a def or class, ``except E as x``, an import; not a parameter:
    bound where it is)."""
    for field in _IDENTIFIER_FIELDS:
        value = getattr(node, field, None)
        if type(value) is str:
            yield from value.split(".")
        elif type(value) is list:
            yield from (part for v in value if type(v) is str for part in v.split("."))


def _function_arguments(call: ast.Call):
    """The function arguments of a tracing call, as TracingFacts._function_arguments reads them:
    each argument, the elements of a list or tuple, the values of a dict."""
    for value in [*call.args, *(k.value for k in call.keywords)]:
        if type(value) is ast.Starred:
            value = value.value
        if type(value) in (ast.List, ast.Tuple):
            yield from (e.value if type(e) is ast.Starred else e for e in value.elts)
        elif type(value) is ast.Dict:
            yield from value.values
        else:
            yield value


def gate_triggers(codes: Iterable[str] | None = None) -> frozenset[str]:
    """The union of the triggers of ``codes`` (default: every rule; unknown codes: none)."""
    registry = all_rules()
    triggers: set[str] = set()
    for code in (registry if codes is None else codes):
        if code in registry:
            triggers |= rule_triggers(registry[code])
    return frozenset(triggers)


_TRIGGER_CACHE: dict[tuple[str, ...], "_Gate"] = {}


@dataclasses.dataclass(frozen=True)
class _Gate:
    # (triggers, structure) of the enabled rules, each pair once, those without structure first;
    # a rule's triggers cheapest first (attributes, then names, then conjunctions)
    checks: tuple[tuple[tuple[str, ...], _Structure | None], ...]
    lasts: frozenset[str]  # the last part of every name atom (single or in a conjunction)
    text: Any  # bytes regex search for any trigger word, or None
    always: bool  # some enabled rule triggers on every module


def _split_triggers(codes: Iterable[str] | None) -> _Gate:
    key = tuple(codes) if codes is not None else ("<all>",)
    cached = _TRIGGER_CACHE.get(key)
    if cached is None:
        registry = all_rules()
        wanted = [registry[c] for c in (registry if codes is None else codes) if c in registry]
        checks = {(tuple(sorted(rule_triggers(rule), key=lambda t: ("&" in t, t[0] != ".", t))),
                   rule_structure(rule)) for rule in wanted}
        triggers = gate_triggers(codes)
        atoms = [atom for t in triggers if t != ALWAYS for atom in t.split("&")]
        lasts = frozenset(t.rsplit(".", 1)[-1] for t in atoms if t[0] not in ".~")
        # Every trigger leaves a word in the text: its attribute name, the last part of its name
        # (canonical() rewrites only prefixes), its substring. A text without any cannot fire.
        words = sorted({t.lstrip(".~").rsplit(".", 1)[-1] for t in atoms}, key=len, reverse=True)
        text = re.compile(b"|".join(re.escape(w.encode()) for w in words)).search if words else None
        cached = _Gate(tuple(sorted(checks, key=lambda c: (c[1] is not None, repr(c)))), lasts, text,
                       ALWAYS in triggers)
        _TRIGGER_CACHE[key] = cached
    return cached


def may_have_trigger(raw: bytes, codes: Iterable[str] | None = None) -> bool:
    """A text test, sound for ``could_fire``: False when no trigger word occurs at all."""
    triggers = _split_triggers(codes)
    return triggers.always or (triggers.text is not None and triggers.text(raw) is not None)


def could_fire(tree: ast.AST | ModuleFacts, codes: Iterable[str] | None = None) -> bool:
    """False only when no enabled rule can fire in the module: a sound over-approximation.

    That is when the module imports no public TensorFlow/Keras module (then ``TFContext``
    resolves no name and no rule fires), or when no enabled rule has both a trigger in it and
    its structure there.
    """
    return gate_reason(tree, codes) is not None


def codes_that_can_fire(facts: ModuleFacts, codes: list[str]) -> list[str]:
    """The ``codes`` whose own gate passes in the module: each rule's gate is sound on its own
    (scripts/gate_soundness.py checks it rule by rule), so only these can report."""
    return [code for code in codes if could_fire(facts, [code])] if len(codes) > 1 else list(codes)


def gate_reason(tree: ast.AST | ModuleFacts, codes: Iterable[str] | None = None) -> str | None:
    """Why the gate lets the module through (the trigger found, and the structure), or None
    when it stops it."""
    facts = tree if isinstance(tree, ModuleFacts) else ModuleFacts(tree)
    if facts.project:
        reason = _project_reason(facts, codes)
        if reason is not None:
            return reason
    if not facts.imports_tf():
        return None
    gate = _split_triggers(codes)
    # A name trigger is matched against the names ending in the enabled rules' last parts; the
    # answers are kept on the facts for the next rule asked with the same last parts.
    found = facts._occurs
    lasts = gate.lasts
    named: set[str] | None = None  # every name referred to, and every dotted prefix of one

    def matches(atom: str) -> bool:
        nonlocal named
        if atom.startswith("."):
            return atom[1:] in facts.attributes
        if atom.startswith("~"):
            return atom[1:] in facts.identifier_text
        if named is None:
            named = facts.names_and_prefixes(lasts)
        return atom in named  # a name is the atom's, or one under it

    def occurs(trigger: str) -> bool:
        hit = found.get((lasts, trigger))
        if hit is None:
            hit = found[(lasts, trigger)] = trigger == ALWAYS or all(matches(atom) for atom in trigger.split("&"))
        return hit

    for triggers, structure in gate.checks:
        trigger = next((t for t in triggers if occurs(t)), None)
        if trigger is None:
            continue
        if structure is None:
            return trigger
        if structure.holds(facts):  # type: ignore[attr-defined]
            return f"{trigger}, {structure}"
    return None


def _project_reason(facts: ModuleFacts, codes: Iterable[str] | None) -> str | None:
    """In the command, a rule that follows calls into the project's other modules can fire where
    its structure holds with the calls of their functions (``ModuleFacts.project``: an effect
    node matches them), whatever this module imports or names."""
    registry = all_rules()
    for code in (registry if codes is None else codes):
        rule = registry.get(code)
        if rule is None or not rule.reaches_across_modules:
            continue
        structure = rule_structure(rule)
        if structure is None:
            return f"{code} follows calls into the project"
        if structure.holds(facts):  # type: ignore[attr-defined]
            return f"{structure}, with the project's functions"
    return None


_HEAD = re.compile(rb"(?<![\w.])(tensorflow_datasets|tensorflow_hub|tensorflow|tf_keras|keras_ocr|keras)(?!\w)")
_PRIVATE_NEXT = {top.encode(): tuple(sub.encode() for sub in subs) for top, subs in PRIVATE_SUBPACKAGES.items()}
_SPACE = b" \t\f\r\n\\"


def may_import_tf(raw: bytes) -> bool:
    """A text test, sound for ``ModuleFacts.imports_tf``: False only when no import statement can
    bind a public TF/Keras module, so the command skips ``ast.parse`` for TensorFlow's own files.

    Only a module head (tensorflow, keras, tf_keras, tensorflow_datasets, or a model package of
    ``MODEL_PACKAGES``) right after ``import``,
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
