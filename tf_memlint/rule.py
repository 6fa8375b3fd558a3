"""The shape of a rule: a small LibCST-style visitor with its code, message and examples beside it.

A rule defines ``visit_<Node>`` / ``leave_<Node>`` methods like a ``libcst.CSTVisitor``. The engine
batches every enabled rule into one traversal, so a rule never walks the tree itself; it reads the
shared ``TFContext`` (``self.context``) and calls ``self.report(node, message)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import libcst as cst

from tf_memlint.context import (
    DATASET_TRACING_METHODS,
    KERAS_BASE_CLASSES,
    TRACING_CALLS,
    TFContext,
)

# Trigger sets for ``Rule.triggers`` (read by the engine's gate, engine.could_fire). A trigger is
#   "tensorflow.function"  a canonical TF/Keras name (names.canonical): matches every spelling of
#                          it and of any name under it (tf.compat.v1.Session, from tensorflow import)
#   ".predict"             an attribute with that name on any receiver (model.predict, sess.run)
#   "~train_step"          a name or attribute name containing that text (my_train_step)
#   "a&b"                  all of these at once (".append&.apply_gradients")
#   "*"                    always: the rule can fire in any module that imports TensorFlow/Keras
# TRACED_SCOPE is everything that can make a function traced (context.TRACING_CALLS, the Keras
# Model/Layer bases, tf.data datasets): a rule that fires only inside traced code declares it.
# A Dataset.map (filter, ...) body is traced: context.is_dataset knows datasets made by
# tensorflow.data / tensorflow_datasets names only. Teach it another source, add it here.
_DATASET_SOURCES = ("tensorflow.data", "tensorflow_datasets")
TRACED_SCOPE: frozenset[str] = frozenset(
    TRACING_CALLS | KERAS_BASE_CLASSES
    | {f"{source}&.{method}" for source in _DATASET_SOURCES for method in DATASET_TRACING_METHODS}
)


@dataclass(frozen=True, order=True)
class Diagnostic:
    line: int  # 1-based
    col: int  # 0-based, as flake8 expects from a plugin (it prints col + 1)
    code: str
    message: str  # without the code

    def __str__(self) -> str:
        return f"{self.code} {self.message}"


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]  # one line, for `tf-memlint rules`
    default_enabled: ClassVar[bool] = True
    # Options a user may set in [tool.tf-memlint] / flake8: name -> (default, help).
    options: ClassVar[dict[str, tuple[Any, str]]] = {}
    # What a module must contain for this rule to be able to fire (syntax above TRACED_SCOPE).
    # The engine builds a LibCST tree only for modules where some enabled rule's triggers occur,
    # so this must over-approximate: list every name or attribute the rule's match depends on.
    # None (not declared): engine.CATALOGUE_TRIGGERS[code] if the catalogue lists the code,
    # else the rule runs on every module that imports TensorFlow (always safe, slower).
    triggers: ClassVar["frozenset[str] | None"] = None

    def __init__(self, context: TFContext, settings: dict[str, Any]) -> None:
        self.context = context
        self.settings = {name: settings.get(name, default) for name, (default, _) in self.options.items()}
        self.findings: list[tuple[cst.CSTNode, str]] = []

    def report(self, node: cst.CSTNode, message: str) -> None:
        self.findings.append((node, message))


_REGISTRY: dict[str, type[Rule]] = {}


def register(cls: type[Rule]) -> type[Rule]:
    assert cls.code not in _REGISTRY, f"duplicate rule code {cls.code}"
    _REGISTRY[cls.code] = cls
    return cls


def all_rules() -> dict[str, type[Rule]]:
    import tf_memlint.checks  # noqa: F401  (registers the catalogue)

    return dict(sorted(_REGISTRY.items()))
