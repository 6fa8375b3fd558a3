#!/usr/bin/env python3
"""Build the real-leak benchmark's cases into a directory, one folder per case.

    python benchmarks/leaks/build.py --out /work/leaks --mirror-dir /work/.mirror

Reproductions (our own code) are copied; a recipe's files are taken from the pinned commit of a
`fetch` mirror (<mirror-dir>/<owner>+<name>/..., a bare git directory) with `git show`, so no
code we did not write is ever committed. A recipe whose repository or commit is missing is
listed and skipped; the scorer counts only the cases that were built.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from split import load_cases  # noqa: E402


def git_dir(mirror_dir: Path, repo: str) -> Path | None:
    base = mirror_dir / repo.replace("/", "+")
    for candidate in (base, base / "repo", base / "repo" / ".git", base.with_suffix(".git")):
        if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir():
            return candidate
    found = sorted(p.parent for p in base.glob("**/HEAD") if (p.parent / "objects").is_dir()) if base.is_dir() else []
    return found[0] if found else None


def build(out: Path, mirror_dir: Path) -> list[str]:
    missing = []
    for case in load_cases():
        target = out / case["id"]
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        shutil.copy2(case["dir"] / "case.toml", target / "case.toml")
        if case["kind"] == "reproduction":
            for source in case["dir"].rglob("*.py"):
                dest = target / source.relative_to(case["dir"])
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, dest)
            continue
        for part in case.get("recipe", []):
            repo_git = git_dir(mirror_dir, part["repo"])
            blob = None
            if repo_git is not None:
                shown = subprocess.run(["git", f"--git-dir={repo_git}", "show", f"{part['commit']}:{part['path']}"],
                                       capture_output=True)
                blob = shown.stdout if shown.returncode == 0 else None
            if blob is None:
                missing.append(f"{case['id']}: {part['repo']}@{part['commit'][:10]}:{part['path']}")
                (target / ".missing").write_text("\n".join(missing[-1:]) + "\n")
                continue
            dest = target / part.get("as", Path(part["path"]).name)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(blob)
    return missing


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--mirror-dir", type=Path, default=Path("/work/.mirror"))
    args = parser.parse_args()
    missing = build(args.out, args.mirror_dir)
    for line in missing:
        print(f"missing: {line}", file=sys.stderr)
    (args.out / "READY").touch()
    return 0


if __name__ == "__main__":
    sys.exit(main())
