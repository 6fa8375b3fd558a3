"""What `pip install .` ships: every subpackage and every fixture kind (an editable install hides
a missing entry, so this reads pyproject.toml instead of importing)."""

from __future__ import annotations

import sys
from pathlib import Path

from conftest import FIXTURES, REPO

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

SETUPTOOLS = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


def test_every_subpackage_is_listed():
    on_disk = {".".join(init.parent.relative_to(REPO).parts)
               for init in (REPO / "tf_memlint").rglob("__init__.py")}
    assert on_disk - set(SETUPTOOLS["packages"]) == set()


def test_every_fixture_file_kind_is_package_data():
    patterns = SETUPTOOLS["package-data"]["tf_memlint._data.fixtures"]
    suffixes = {path.suffix for path in FIXTURES.rglob("*") if path.is_file()}
    shipped = {Path(pattern).suffix for pattern in patterns}
    assert suffixes <= shipped, f"fixture files of kinds {sorted(suffixes - shipped)} would not be installed"


def test_every_data_file_of_the_package_is_package_data():
    """A JSON table the package reads at run time (the unit costs findings project, the fixes'
    measurements) ships in the wheel: without it an installed tf-memlint grades differently."""
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    for table in (REPO / "tf_memlint").rglob("*.json"):
        package = ".".join(table.parent.relative_to(REPO).parts)
        assert f'"{package}" = ["{table.name}"]' in text, table
