#!/usr/bin/env python3
"""Build a held-out set of library code from PyPI wheels (a recipe of pinned packages).

    python benchmarks/corpus/pypi_set.py benchmarks/corpus/heldout11.toml [--out /work/corpus]

The recipe lists ``[[package]]`` entries (name, version, file, sha256). Each wheel is fetched with
``pip download --no-deps --only-binary :all: NAME==VERSION``, its sha256 checked against the
recipe, and its ``.py`` files written to ``<out>/<set>/<file stem>/`` (the set is the recipe's
``[split] halves``); then ``<out>/<set>/READY``. Sources are never committed: only the recipe is.
"""
from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("recipe", type=Path)
    parser.add_argument("--out", type=Path, default=Path("/work/corpus"))
    args = parser.parse_args(argv)
    recipe = tomllib.loads(args.recipe.read_text())
    (half,) = recipe["split"]["halves"]
    root = args.out / half
    files = lines = 0
    with tempfile.TemporaryDirectory() as cache:
        for package in recipe["package"]:
            spec = f"{package['name']}=={package['version']}"
            subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary", ":all:",
                            "-d", cache, spec], check=True)
            wheel = Path(cache) / package["file"]
            digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
            if digest != package["sha256"]:
                raise SystemExit(f"{package['file']}: sha256 {digest}, the recipe pins {package['sha256']}")
            target = root / wheel.name.split("-")[0]
            with zipfile.ZipFile(wheel) as archive:
                for member in archive.namelist():
                    if member.endswith(".py") and ".dist-info/" not in member:
                        path = target / member
                        path.parent.mkdir(parents=True, exist_ok=True)
                        data = archive.read(member)
                        path.write_bytes(data)
                        files += 1
                        lines += data.count(b"\n")
    (root / "READY").touch()
    print(f"{half}: {len(recipe['package'])} packages, {files} .py files, {lines} lines")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
