#!/usr/bin/env python3
"""Rebuild the real-code evaluation corpus from the recipe (repos.toml).

    python benchmarks/corpus/build.py [--mirror-dir DIR] [--out /work/corpus] [--only dev|heldout]
                                      [--step fetch,extract,convert,trees,stats]
    python benchmarks/corpus/build.py --check-split     # recompute the split rule, compare with repos.toml
    python benchmarks/corpus/build.py --recipe benchmarks/corpus/heldout2.toml --mirror-dir DIR
        # another recipe: its halves are its [split] halves; the split rule is checked only when
        # its [split] has a seed (heldout2.toml has one half and no seed)

Steps (all by default, in this order):
  fetch    get a git directory holding each pinned commit: from --mirror-dir (bare git dirs laid
           out as <DIR>/<owner>+<name>/repo or .../repo/.git, as the `fetch` tool produces, or
           <DIR>/<owner>+<name>.git) or else `git fetch --depth 1 https://github.com/<owner>/<name> <commit>`
           into <out>/git/<owner>+<name>.git
  extract  write every blob of the pinned commit to <out>/src/<owner>+<name>/ (symlinks and
           submodules skipped; blobs absent from a partial snapshot are listed in
           <out>/src/<owner>+<name>/.corpus-missing.txt instead of failing, which `git archive`
           would do)
  convert  run convert.py on each source tree (.ipynb -> .ipynb.py, .md -> .md.py)
  trees    build <out>/dev/ and <out>/heldout/: <half>/<owner>+<name>/ holds the .py files of the
           source tree (converted .ipynb.py/.md.py included) as hard links, at the same relative
           paths; then touch <out>/<half>/READY
  stats    print, per half: repositories, kinds, .py files, lines (wc -l), files importing
           tensorflow or keras

Sources are never committed: only this recipe is.
"""
from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
RECIPE = HERE / "repos.toml"
sys.path.insert(0, str(HERE))
import convert  # noqa: E402


def load_recipe(path: Path = RECIPE) -> dict:
    with open(path, "rb") as f:
        return tomllib.load(f)


def slug(name: str) -> str:
    return name.replace("/", "+")


# ---------------------------------------------------------------- split rule
def compute_split(repos: list[dict], seed: int) -> dict[str, str]:
    """The split rule (fixed before any lint run; see README.md):

    Within each kind (kinds taken in sorted order), the repositories are sorted by name and
    shuffled with random.Random(f"{seed}:{kind}"); then they are dealt alternately to the two
    halves. The half that receives the first repository of a kind alternates from one kind with
    an odd count to the next (starting with "dev"), so that odd kinds do not all favour one half.
    """
    by_kind: dict[str, list[str]] = {}
    for r in repos:
        by_kind.setdefault(r["kind"], []).append(r["name"])
    halves = ("dev", "heldout")
    first = 0
    split = {}
    for kind in sorted(by_kind):
        names = sorted(by_kind[kind])
        random.Random(f"{seed}:{kind}").shuffle(names)
        for i, name in enumerate(names):
            split[name] = halves[(first + i) % 2]
        if len(names) % 2:
            first = 1 - first
    return split


# ---------------------------------------------------------------- fetch
def git(*args, git_dir: Path | None = None, **kw) -> subprocess.CompletedProcess:
    cmd = ["git"]
    if git_dir is not None:
        cmd.append(f"--git-dir={git_dir}")
    return subprocess.run(cmd + list(args), check=True, **kw)


def has_commit(git_dir: Path, commit: str) -> bool:
    r = subprocess.run(["git", f"--git-dir={git_dir}", "cat-file", "-e", f"{commit}^{{commit}}"],
                       capture_output=True)
    return r.returncode == 0


def find_git_dir(repo: dict, mirror_dir: Path | None, out: Path) -> Path:
    name, commit = repo["name"], repo["commit"]
    candidates = []
    if mirror_dir is not None:
        base = mirror_dir / slug(name)
        candidates += [base / "repo" / ".git", base / "repo", base / ".git", base,
                       mirror_dir / (slug(name) + ".git")]
    candidates.append(out / "git" / (slug(name) + ".git"))
    for c in candidates:
        if (c / "objects").is_dir() and has_commit(c, commit):
            return c
    target = out / "git" / (slug(name) + ".git")
    target.parent.mkdir(parents=True, exist_ok=True)
    if not (target / "objects").is_dir():
        git("init", "--bare", "-q", str(target))
    url = f"https://github.com/{name}"
    git("fetch", "-q", "--depth", "1", url, commit, git_dir=target)
    return target


# ---------------------------------------------------------------- extract
def extract(git_dir: Path, commit: str, dest: Path) -> tuple[int, list[str]]:
    """Write every blob of `commit` under dest; return (files written, paths missing)."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    listing = subprocess.run(["git", f"--git-dir={git_dir}", "ls-tree", "-r", "-z", commit],
                             check=True, capture_output=True).stdout
    entries = []
    for rec in listing.split(b"\0"):
        if not rec:
            continue
        meta, path = rec.split(b"\t", 1)
        mode, typ, sha = meta.split()
        if typ != b"blob" or mode == b"120000":
            continue  # submodule or symlink
        entries.append((sha.decode(), path.decode("utf-8", "surrogateescape")))
    proc = subprocess.Popen(["git", f"--git-dir={git_dir}", "cat-file", "--batch"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    missing, written = [], 0
    root = dest.resolve()
    for sha, path in entries:
        proc.stdin.write(sha.encode() + b"\n")
        proc.stdin.flush()
        header = proc.stdout.readline().split()
        if len(header) < 2 or header[1] == b"missing":
            missing.append(path)
            continue
        size = int(header[2])
        data = proc.stdout.read(size)
        proc.stdout.read(1)  # trailing newline
        target = (dest / path)
        if not str(target.resolve()).startswith(str(root) + os.sep):
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "wb") as f:
            f.write(data)
        written += 1
    proc.stdin.close()
    proc.wait()
    if missing:
        (dest / ".corpus-missing.txt").write_text("\n".join(missing) + "\n")
    return written, missing


# ---------------------------------------------------------------- trees and stats
def build_trees(repos: list[dict], out: Path, halves: list[str]) -> None:
    """<out>/<half>/<owner>+<name>/... : the .py files of each source tree (converted notebooks
    and Markdown included), hard-linked (copied if a hard link is impossible), so that any
    linter walking the half finds them without following symlinks (os.walk, flake8 and
    tf-memlint do not follow symlinked directories)."""
    for half in halves:
        d = out / half
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
        for r in repos:
            if r["split"] != half:
                continue
            src = out / "src" / slug(r["name"])
            for dirpath, dirnames, filenames in os.walk(src):
                dirnames[:] = [x for x in dirnames if x != ".git"]
                for fn in filenames:
                    if not fn.endswith(".py"):
                        continue
                    s = Path(dirpath) / fn
                    if s.is_symlink():
                        continue
                    t = d / slug(r["name"]) / s.relative_to(src)
                    t.parent.mkdir(parents=True, exist_ok=True)
                    try:
                        os.link(s, t)
                    except OSError:
                        shutil.copy2(s, t)
        (d / "READY").touch()


IMPORT_TF = re.compile(r"^\s*(import|from)\s+(tensorflow|keras|tf_keras)\b", re.M)


def repo_stats(src: Path) -> dict:
    files = lines = tf = 0
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for fn in filenames:
            if not fn.endswith(".py"):
                continue
            p = os.path.join(dirpath, fn)
            if os.path.islink(p):
                continue
            with open(p, "rb") as f:
                data = f.read()
            files += 1
            lines += data.count(b"\n")
            if IMPORT_TF.search(data.decode("utf-8", "replace")):
                tf += 1
    return {"files": files, "lines": lines, "tf_files": tf}


def print_stats(repos: list[dict], out: Path, halves: list[str]) -> None:
    for half in halves:
        tot = {"files": 0, "lines": 0, "tf_files": 0}
        kinds: dict[str, int] = {}
        print(f"== {half}")
        print(f"{'repository':55} {'kind':18} {'files':>6} {'lines':>8} {'tf/keras':>8}")
        for r in sorted((r for r in repos if r["split"] == half), key=lambda r: (r["kind"], r["name"])):
            s = repo_stats(out / half / slug(r["name"]))
            kinds[r["kind"]] = kinds.get(r["kind"], 0) + 1
            for k in tot:
                tot[k] += s[k]
            print(f"{r['name']:55} {r['kind']:18} {s['files']:6} {s['lines']:8} {s['tf_files']:8}")
        n = sum(kinds.values())
        label = f"TOTAL {n} repositories"
        print(f"{label:55} {'':18} {tot['files']:6} {tot['lines']:8} {tot['tf_files']:8}")
        print("kinds:", ", ".join(f"{k}={v}" for k, v in sorted(kinds.items())))
        print()


# ---------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--recipe", type=Path, default=RECIPE)
    ap.add_argument("--mirror-dir", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=Path("/work/corpus"))
    ap.add_argument("--only", default=None,
                    help="build one half only, e.g. dev or heldout (the other half's READY is left alone)")
    ap.add_argument("--step", default="fetch,extract,convert,trees,stats")
    ap.add_argument("--check-split", action="store_true")
    args = ap.parse_args(argv)

    recipe = load_recipe(args.recipe)
    repos = recipe["repo"]
    all_halves = recipe["split"].get("halves", ["dev", "heldout"])
    bad = [r["name"] for r in repos if r.get("split") not in all_halves]
    if "seed" in recipe["split"]:
        split = compute_split(repos, recipe["split"]["seed"])
        bad = [r["name"] for r in repos if r.get("split") != split[r["name"]]]
    if bad:
        print("split recorded in the recipe disagrees with the rule for:", ", ".join(bad), file=sys.stderr)
        return 1
    if args.check_split:
        print(f"split in {args.recipe.name} agrees with the rule")
        return 0
    if args.only and args.only not in all_halves:
        ap.error(f"--only must be one of {all_halves}")

    halves = [args.only] if args.only else all_halves
    selected = [r for r in repos if r["split"] in halves]
    steps = args.step.split(",")
    out = args.out.resolve()
    git_dirs = {}
    if "fetch" in steps or "extract" in steps:
        for r in selected:
            git_dirs[r["name"]] = find_git_dir(r, args.mirror_dir, out)
    if "extract" in steps:
        for r in selected:
            n, missing = extract(git_dirs[r["name"]], r["commit"], out / "src" / slug(r["name"]))
            note = f" ({len(missing)} blobs absent from the snapshot)" if missing else ""
            print(f"extracted {r['name']}@{r['commit'][:10]}: {n} files{note}")
    if "convert" in steps:
        for r in selected:
            print("converted", r["name"], convert.convert_tree(str(out / "src" / slug(r["name"]))))
    if "trees" in steps:
        build_trees(selected, out, halves)
    if "stats" in steps:
        print_stats(selected, out, halves)
    return 0


if __name__ == "__main__":
    sys.exit(main())
