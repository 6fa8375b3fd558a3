"""The analysis is one stack of layers, each importing only from the layers below it:

    syntax -> names and scopes -> evidence -> domain facts -> context -> rule framework -> rules

and the doors (engine, command, flake8 plugin, project tables, cache, baseline and ignores,
fixes, verifier) on top. Read off the
import graph of tf_memlint/ with the stdlib ``ast``, every import counted wherever it is written
(a function-level import is a dependency too). The exceptions are named here, each once.
"""

from __future__ import annotations

import ast
from pathlib import Path

import tf_memlint

PACKAGE = Path(tf_memlint.__file__).parent

# Lowest first. A name ending in ".*" stands for every module of that subpackage.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("syntax", ("walk", "syntax")),
    ("names and scopes", ("names", "scopes")),
    ("evidence", ("command_line", "evidence", "grading")),
    ("domain facts", ("facts", "facts.*")),
    ("context", ("context",)),
    ("rule framework", ("rule", "gate")),
    ("rules", ("checks", "checks.*")),
    ("doors", ("engine", "excerpt", "project", "cache", "files", "noqa", "notebook", "config", "baseline",
               "ignores", "selection", "links", "report", "sarif", "cli", "flake8_plugin", "resources",
               "__main__", "__init__", "fixes", "fixes.*", "verify", "verify.*")),
]
# Imported only for annotations, under ``if TYPE_CHECKING:``: never at run time.
ANNOTATION_ONLY = frozenset({"context", "rule", "scopes", "files"})
# The registry loads its catalogue when asked for it (rule.all_rules imports the checks package).
REGISTRY_LOADS_CATALOGUE = ("rule", "checks")
ANALYSIS_LAYERS = {"syntax", "names and scopes", "evidence", "domain facts", "context", "rule framework", "rules"}


def _name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def _layer(module: str) -> int:
    for index, (_, members) in enumerate(LAYERS):
        for member in members:
            if module == member or (member.endswith(".*") and module.startswith(member[:-1])):
                return index
    raise AssertionError(f"tf_memlint.{module} is in no layer: place it in tests/test_layers.py")


def _modules() -> dict[str, ast.Module]:
    return {_name(path): ast.parse(path.read_text(encoding="utf-8")) for path in sorted(PACKAGE.rglob("*.py"))}


def _type_checking_blocks(tree: ast.Module) -> set[int]:
    """Ids of the import nodes under ``if TYPE_CHECKING:``."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            found.update(id(n) for statement in node.body for n in ast.walk(statement))
    return found


def _imports(module: str, tree: ast.Module, known: set[str]) -> list[tuple[str, bool, int]]:
    """(imported module of the package, under TYPE_CHECKING, line) for every import."""
    annotation_only = _type_checking_blocks(tree)
    package = module.split(".")[:-1] if module in known and not (PACKAGE / module.replace(".", "/")).is_dir() \
        else module.split(".")
    found = []
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                above = package[:len(package) - (node.level - 1)] if node.level > 1 else package
                base = ".".join(["tf_memlint", *above, *([base] if base else [])])
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        for target in targets:
            if not target.startswith("tf_memlint."):
                continue
            name = target[len("tf_memlint."):]
            while name and name not in known:  # `from tf_memlint.facts.keras import X`: the module
                name = name.rpartition(".")[0]
            if name and name != module:
                found.append((name, id(node) in annotation_only, node.lineno))
                break
    return found


def test_every_import_goes_down_the_layers():
    modules = _modules()
    known = set(modules)
    upward = []
    for module, tree in modules.items():
        for imported, annotation, line in _imports(module, tree, known):
            if _layer(imported) <= _layer(module):
                continue
            if annotation and imported in ANNOTATION_ONLY:
                continue
            if (module, imported.split(".")[0]) == REGISTRY_LOADS_CATALOGUE:
                continue
            upward.append(f"tf_memlint/{module.replace('.', '/')}.py:{line} imports {imported} "
                          f"({LAYERS[_layer(module)][0]} -> {LAYERS[_layer(imported)][0]})")
    assert not upward, "imports up the layers:\n" + "\n".join(upward)


def test_annotation_imports_stay_annotations():
    """A module named in ANNOTATION_ONLY and above the importer is never imported at run time."""
    modules = _modules()
    known = set(modules)
    for module, tree in modules.items():
        for imported, annotation, line in _imports(module, tree, known):
            if _layer(imported) > _layer(module) and imported in ANNOTATION_ONLY and \
                    (module, imported.split(".")[0]) != REGISTRY_LOADS_CATALOGUE:
                assert annotation, f"tf_memlint/{module.replace('.', '/')}.py:{line} imports {imported} at run time"


def test_the_fact_modules_import_each_other_in_one_order():
    """No cycle among the fact modules: each may build on the ones before it."""
    modules = _modules()
    known = set(modules)
    facts = {m for m in modules if _layer(m) == _layer("facts")}
    edges = {m: {i for i, annotation, _ in _imports(m, modules[m], known) if i in facts and not annotation}
             for m in facts}
    order: list[str] = []
    remaining = dict(edges)
    while remaining:
        ready = sorted(m for m, deps in remaining.items() if deps <= set(order))
        assert ready, f"the fact modules import each other in a cycle: {sorted(remaining)}"
        order.extend(ready)
        for m in ready:
            del remaining[m]


def _declared_attributes(modules: dict[str, ast.Module]) -> set[str]:
    """Every attribute some class of the package gives itself (``self.x = ...``, a class field)."""
    names: set[str] = set()
    for tree in modules.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                        names.add(item.target.id)
                    if isinstance(item, ast.Assign):
                        names.update(t.id for t in item.targets if isinstance(t, ast.Name))
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                    for sub in ast.walk(target):
                        if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) \
                                and sub.value.id == "self":
                            names.add(sub.attr)
    return names


def test_the_analysis_adds_no_state_to_nodes_or_objects():
    """Below the doors (and in the project tables) no code sets an attribute that the object's
    class does not declare, nor calls setattr: a fact module keeps its caches in itself."""
    modules = _modules()
    declared = _declared_attributes(modules)
    added = []
    for module, tree in modules.items():
        if LAYERS[_layer(module)][0] not in ANALYSIS_LAYERS and module != "project":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and (
                    (isinstance(node.func, ast.Name) and node.func.id == "setattr")
                    or (isinstance(node.func, ast.Attribute) and node.func.attr == "__setattr__"
                        and not _normalises_own_field(node))):
                added.append(f"tf_memlint/{module.replace('.', '/')}.py:{node.lineno} {ast.unparse(node)[:60]}")
            targets = node.targets if isinstance(node, ast.Assign) else (
                [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else [])
            for target in targets:
                for sub in ast.walk(target):
                    if isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Store) \
                            and not (isinstance(sub.value, ast.Name) and sub.value.id in ("self", "cls")) \
                            and sub.attr not in declared:
                        added.append(f"tf_memlint/{module.replace('.', '/')}.py:{node.lineno} sets {ast.unparse(sub)}")
    assert not added, "state added from outside:\n" + "\n".join(added)


def _normalises_own_field(call: ast.Call) -> bool:
    """``object.__setattr__(self, "field", ...)``: a frozen dataclass normalising its own field."""
    return bool(call.args) and isinstance(call.args[0], ast.Name) and call.args[0].id == "self"


def test_the_layer_test_sees_an_upward_import(tmp_path, monkeypatch):
    """The test fails where it should: a fact module that imports the context at run time."""
    tree = ast.parse("from tf_memlint.context import TFContext\n")
    imports = _imports("facts.keras", tree, {"facts.keras", "context"})
    assert imports == [("context", False, 1)] and _layer("context") > _layer("facts.keras")
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from tf_memlint.context import TFContext\n")
    assert _imports("facts.keras", tree, {"facts.keras", "context"}) == [("context", True, 3)]
