"""What every fix needs: the tree of the file with positions and parents, the node a finding
names (found again by its position), and small rewrites of statement blocks.

A finding carries its position only (``Diagnostic``: line, 0-based column of the reported node's
start, as LibCST's PositionProvider gives it). Several nodes start there (``model.predict(x).sum()``:
the outer call, the inner call, the attribute and the name all start at ``model``), so each fix
says which one it wants with a predicate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator, Optional, Sequence

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

SAFE, UNSAFE = "safe", "unsafe"


@dataclass(frozen=True)
class Edit:
    """One fix: the whole module rewritten, and whether the rewrite may change what the code does."""

    module: cst.Module
    applicability: str  # SAFE or UNSAFE
    why_unsafe: str = ""


class Site:
    """A parsed module with the metadata fixes use; ``module`` is the tree to rewrite."""

    def __init__(self, source: str) -> None:
        wrapper = MetadataWrapper(cst.parse_module(source))
        self.module = wrapper.module
        self.positions = wrapper.resolve(PositionProvider)
        self.parents = wrapper.resolve(ParentNodeProvider)

    def nodes_at(self, line: int, col: int) -> list[cst.CSTNode]:
        """Every node that starts at (line, 0-based col), outermost first."""
        found = [node for node, span in self.positions.items()
                 if span.start.line == line and span.start.column == col]
        return sorted(found, key=self._depth)

    def _depth(self, node: cst.CSTNode) -> int:
        depth = 0
        while node in self.parents:
            node, depth = self.parents[node], depth + 1
        return depth

    def find(self, line: int, col: int, wanted: Callable[[cst.CSTNode], bool]) -> Optional[cst.CSTNode]:
        return next((node for node in self.nodes_at(line, col) if wanted(node)), None)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        while node in self.parents:
            node = self.parents[node]
            yield node

    def statement_of(self, node: cst.CSTNode) -> Optional[cst.BaseStatement]:
        """The statement (a line of simple statements, or a compound one) that holds ``node``."""
        for candidate in [node, *self.ancestors(node)]:
            if isinstance(candidate, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                return candidate
        return None

    def block_of(self, statement: cst.CSTNode) -> Optional[cst.CSTNode]:
        """The Module or IndentedBlock whose ``body`` lists ``statement`` (None for a one-line
        block such as ``for x in y: f(x)``)."""
        parent = self.parents.get(statement)
        if isinstance(parent, (cst.Module, cst.IndentedBlock)) and any(s is statement for s in parent.body):
            return parent
        return None

    def line_of(self, node: cst.CSTNode) -> int:
        return self.positions[node].start.line


def replace_body(module: cst.Module, block: cst.CSTNode, body: Sequence[cst.BaseStatement]) -> cst.Module:
    """The module with ``block``'s statements replaced."""
    if block is module:
        return module.with_changes(body=list(body))
    return module.deep_replace(block, block.with_changes(body=list(body)))


def replace_nodes(module: cst.Module, replacements: dict[cst.CSTNode, cst.CSTNode]) -> cst.Module:
    """The module with each original node (a key) replaced by its value, in one pass (a second
    ``deep_replace`` would no longer find the nodes the first one rebuilt). The nodes must not
    contain one another."""

    class Replace(cst.CSTTransformer):
        def on_leave(self, original_node, updated_node):
            return replacements.get(original_node, updated_node)

    return module.visit(Replace())


def index_in(block: cst.CSTNode, statement: cst.CSTNode) -> int:
    return next(i for i, s in enumerate(block.body) if s is statement)


def names_in(node: cst.CSTNode) -> set[str]:
    """Every identifier read or written under ``node``."""
    found: set[str] = set()

    class Collect(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            found.add(name.value)

    node.visit(Collect())
    return found


def bound_in(node: cst.CSTNode) -> set[str]:
    """Names assigned under ``node``: targets of =, +=, for, with ... as, walrus, def, class, import."""
    found: set[str] = set()

    def targets(expr: cst.CSTNode) -> None:
        if isinstance(expr, cst.Name):
            found.add(expr.value)
        elif isinstance(expr, (cst.Tuple, cst.List)):
            for element in expr.elements:
                targets(element.value)
        elif isinstance(expr, cst.StarredElement):
            targets(expr.value)

    class Collect(cst.CSTVisitor):
        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            targets(node.target)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            targets(node.target)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            targets(node.target)

        def visit_For(self, node: cst.For) -> None:
            targets(node.target)

        def visit_AsName(self, node: cst.AsName) -> None:
            targets(node.name)

        def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
            targets(node.target)

        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            found.add(node.name.value)

        def visit_ClassDef(self, node: cst.ClassDef) -> None:
            found.add(node.name.value)

    node.visit(Collect())
    return found


def nodes_of(node: cst.CSTNode, kind: type) -> list:
    """Every node of type ``kind`` under ``node`` (``node`` included), nested functions too."""
    found: list = []

    class Collect(cst.CSTVisitor):
        def on_visit(self, visited: cst.CSTNode) -> bool:
            if isinstance(visited, kind):
                found.append(visited)
            return True

    node.visit(Collect())
    return found


def parameters(function: cst.FunctionDef) -> set[str]:
    params = function.params
    every = [*params.posonly_params, *params.params, *params.kwonly_params]
    every += [p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)]
    return {p.name.value for p in every}


def self_attribute(expr: cst.BaseExpression) -> Optional[str]:
    """``x`` for ``self.x``."""
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        return expr.attr.value
    return None


def imported_names(statements: Sequence[cst.CSTNode]) -> set[str]:
    """The names the top-level imports among ``statements`` bind (``tf``, ``GradientTape``)."""
    found: set[str] = set()
    for line in statements:
        if not isinstance(line, cst.SimpleStatementLine):
            continue
        for small in line.body:
            if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
                for alias in small.names:
                    found.add(_bound(alias))
    return found


def imports_before(site: Site, node: cst.CSTNode) -> cst.Module:
    """The module cut to the top-level statements before the one that holds ``node``: the imports a
    fix may use there (at module level, an import further down has not run yet)."""
    top = [node, *site.ancestors(node)]
    index = next((i for i, s in enumerate(site.module.body) if any(s is n for n in top)), len(site.module.body))
    return site.module.with_changes(body=site.module.body[:index])


def keras_spelling(module: cst.Module) -> Optional[str]:
    """How this module names Keras at top level: ``keras`` (``import keras``, ``import
    keras.layers``, ``from tensorflow import keras``, ``import tensorflow.keras as keras``), else
    ``<tf>.keras`` for ``import tensorflow as <tf>`` (``tensorflow.keras`` for ``import
    tensorflow.keras.layers``); None when neither is imported at module level."""
    keras_name, tf_name = None, None
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    dotted, bound, renamed = _dotted(alias.name), _bound(alias), alias.asname is not None
                    if (dotted == "keras" or dotted.startswith("keras.")) and not renamed \
                            or dotted in ("keras", "tensorflow.keras") and renamed:
                        keras_name = keras_name or bound  # `import keras.layers` binds keras too
                    elif dotted == "tensorflow" or dotted.startswith("tensorflow.") and not renamed:
                        tf_name = tf_name or bound
            elif isinstance(small, cst.ImportFrom) and small.module is not None \
                    and _dotted(small.module) == "tensorflow" and not isinstance(small.names, cst.ImportStar):
                for alias in small.names:
                    if _dotted(alias.name) == "keras":
                        keras_name = keras_name or _bound(alias)
    if keras_name:
        return keras_name
    return f"{tf_name}.keras" if tf_name else None


# Modules whose ``constant`` and dtypes are TensorFlow's own (tf.compat.v1.constant takes the same
# value and dtype arguments)
_TENSORFLOW_MODULES = ("tensorflow", "tensorflow.compat.v1", "tensorflow.compat.v2")


def tensorflow_spelling(module: cst.Module) -> Optional[str]:
    """The name ``import tensorflow as <name>`` (or ``import tensorflow``, or ``import
    tensorflow.compat.v1 as <name>``) binds at top level."""
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Import):
                    for alias in small.names:
                        dotted = _dotted(alias.name)
                        renamed = alias.asname is not None
                        if dotted == "tensorflow" or dotted in _TENSORFLOW_MODULES and renamed:
                            return _bound(alias)
    return None


def _bound(alias: cst.ImportAlias) -> str:
    """The name an import binds: its ``as`` name, else the first part of the dotted name."""
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value
    return _dotted(alias.name).split(".")[0]


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


def statement(code: str, config: cst.Module) -> cst.BaseStatement:
    """One statement parsed with the module's indentation and newline."""
    return cst.parse_statement(code, config=config.config_for_parsing)


def expression(code: str, config: cst.Module) -> cst.BaseExpression:
    return cst.parse_expression(code, config=config.config_for_parsing)
