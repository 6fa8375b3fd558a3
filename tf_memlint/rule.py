"""The shape of a rule: a small LibCST-style visitor with its code, message and examples beside it.

A rule defines ``visit_<Node>`` / ``leave_<Node>`` methods like a ``libcst.CSTVisitor``. The engine
batches every enabled rule into one traversal, so a rule never walks the tree itself; it asks the
shared context (``self.context``: names, scopes, walk position, bindings, kinds, trip counts) and
its fact modules (``self.context.sessions.is_session(expr)``, ``self.context.keras.is_model(x)``...,
see ``tf_memlint.facts``), and calls ``self.report(node, message)``.

Hook order, for every node of the module in source order (``engine._BatchedWalk``; the context
is entered and left only for the node types it tracks, ``TFContext.ENTERED`` / ``LEFT``):

1. ``context.enter(node)``: the context moves to the node first. Inside ``visit_FunctionDef`` the
   def's own frame is already pushed (``context.function`` is the def, ``context.frames[-2]`` the
   function around it); inside ``visit_For`` / ``visit_While`` the loop is already in
   ``context.open_loops``; an ``Assign`` / ``AugAssign`` / ``WithItem`` / ``For`` has already
   recorded its binding, so ``context.value_of(name, AT_POINT)`` in its visitor sees that value.
2. every rule's ``visit_<Node>(node)``, in the order of their codes; then the node's children;
3. every rule's ``leave_<Node>(node)``, in the same order;
4. ``context.leave(node)``: the frame, class or loop is popped last, so ``leave_FunctionDef``
   still sees its own frame.

``leave_Module`` runs after the whole module: the place for findings that need every call seen.
A rule declares its gate ``triggers`` and ``structure`` (see gate.py) from the constants of the
facts it uses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import libcst as cst

from tf_memlint.evidence import ONCE_HERE, Evidence, Repetition, evidence_at

if TYPE_CHECKING:
    from tf_memlint.context import TFContext


@dataclass(frozen=True, order=True)
class Diagnostic:
    line: int  # 1-based
    col: int  # 0-based, as flake8 expects from a plugin (it prints col + 1)
    code: str
    message: str  # without the code
    # The grade (grading.py), which says how sure and how costly the finding is; not part of
    # its identity, so the same finding graded differently is still one finding.
    confidence: str = field(default="high", compare=False)
    cost: "str | None" = field(default=None, compare=False)
    evidence: "str | None" = field(default=None, compare=False)

    def __str__(self) -> str:
        return f"{self.code} {self.message}"


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]  # one line, for `tf-memlint rules`
    default_enabled: ClassVar[bool] = True
    # Options a user may set in [tool.tf-memlint] / flake8: name -> (default, help).
    options: ClassVar[dict[str, tuple[Any, str]]] = {}
    # What a module must contain for this rule to be able to fire (syntax: gate.py). The engine
    # builds a LibCST tree only for modules where some enabled rule's triggers occur, so this
    # must over-approximate: build it from the constants of the facts the rule relies on.
    # None: the rule runs on every module that imports TensorFlow (always safe, slower).
    triggers: ClassVar["frozenset[str] | None"] = None
    # Where in the module the rule can fire, beside its triggers (gate.py): ``Inside(place,
    # nodes)`` or a tuple of them, any of which may hold; it must over-approximate too (a loop in
    # a traced function for TFM101). None: wherever the triggers occur.
    structure: ClassVar[Any] = None
    # The rule follows calls into other modules of the linted project (its reach path asks the
    # function summaries): the command builds the project's tables (project.py) only when an
    # enabled rule says so, since building them means reading every file given.
    reaches_across_modules: ClassVar[bool] = False
    # The confidence of a finding whose place does not repeat (grading.py): the rule's own
    # precondition is then the only evidence. "high" for a rule whose harm is read off the code
    # where it stands (a size, an unrolled bound), "low" for one whose harm is repetition.
    once_confidence: ClassVar[str] = "low"
    # False when the harm does not grow with how often the place runs (a constant's size): the
    # finding is then graded as if its place ran once.
    repeats_with_place: ClassVar[bool] = True
    # True when the harm is time per call only (a predict's set-up): a loop that waits for a person
    # each pass (input(), waitKey(0)) hides it, where memory kept per pass would still pile up.
    harm_is_latency: ClassVar[bool] = False

    def __init__(self, context: TFContext, settings: dict[str, Any]) -> None:
        self.context = context
        self.settings = {name: settings.get(name, default) for name, (default, _) in self.options.items()}
        self.findings: list[tuple[cst.CSTNode, str, Evidence]] = []

    def report(self, node: cst.CSTNode, message: str, repetition: Repetition | None = None,
               once_confidence: str | None = None, held_bytes: float | None = None) -> None:
        """Report ``node``. The evidence is read from the walk position now (the loops open
        around the node, its function, the process); ``repetition``: the rule knows better how
        often the harm repeats (an unrolled loop's bound, a size), and says so; ``once_confidence``:
        this finding's own precondition grades it otherwise than the rule's default; ``held_bytes``:
        what the finding holds where it stands, read off the code (graded as the cost of a place
        that runs once)."""
        if repetition is None and not self.repeats_with_place:
            repetition = ONCE_HERE
        self.findings.append((node, message, evidence_at(self.context, node, repetition, once_confidence,
                                                         held_bytes, self.harm_is_latency)))


_REGISTRY: dict[str, type[Rule]] = {}


def register(cls: type[Rule]) -> type[Rule]:
    assert cls.code not in _REGISTRY, f"duplicate rule code {cls.code}"
    _REGISTRY[cls.code] = cls
    return cls


def all_rules() -> dict[str, type[Rule]]:
    import tf_memlint.checks  # noqa: F401  (registers the catalogue)

    return dict(sorted(_REGISTRY.items()))
