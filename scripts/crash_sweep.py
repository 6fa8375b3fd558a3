#!/usr/bin/env python
"""Lint every .py file of installed packages and the standard library through both front doors
and count crashes: tf-memlint must never crash and never lose a finding silently.

    python scripts/crash_sweep.py                      # tensorflow, keras, numpy, the stdlib
    python scripts/crash_sweep.py --sample 200         # every k-th file, about 200 per tree
    python scripts/crash_sweep.py --roots some/dir ... # other trees

For each file:
  * flake8 plugin: the file is read and parsed by flake8's own ``FileProcessor`` (the lines and
    the ast tree flake8 hands a plugin), then ``TFMemlintChecker(tree, lines, filename).run()``.
    A file flake8 cannot parse is not given to plugins (flake8 reports E902/E999): counted apart.
  * tf-memlint: ``files.lint_file``, the command's own per-file path (decoding, noqa included).
    A file it refuses gets a one-line error (syntax error, cannot decode, NUL byte): counted by
    kind, and listed; that is defined behaviour, not a crash.

A crash is an exception escaping either door; an internal error is a TFM000 finding (plugin) or a
"TFM000 internal error" (command). Exit status 1 if there is any of either, else 0.

With --check-gate it also proves the engine's gate on every file: the text import test never
says "no" where the ast says the file imports TensorFlow, and for every file that imports it,
the gated engine finds exactly what the ungated one finds (exit status 1 if not).
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import os
import sys
import sysconfig
import time
import traceback
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

DEFAULT_PACKAGES = ("tensorflow", "keras", "numpy")


def package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)  # does not import the package
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def default_roots() -> list[Path]:
    roots = [p for p in map(package_dir, DEFAULT_PACKAGES) if p is not None]
    roots.append(Path(sysconfig.get_paths()["stdlib"]))
    return roots


def python_files(root: Path) -> list[str]:
    found = []
    for directory, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in ("site-packages", "__pycache__"))
        found.extend(os.path.join(directory, f) for f in sorted(filenames) if f.endswith(".py"))
    return found


def _flake8_options():
    from types import SimpleNamespace

    return SimpleNamespace(hang_closing=False, indent_size=4, max_line_length=79, max_doc_length=None,
                           verbose=0, stdin_display_name="stdin", disable_noqa=False)


def sweep_one(path: str, check_gate: bool = False) -> dict:
    from tf_memlint.files import lint_file
    from tf_memlint.flake8_plugin import TFMemlintChecker
    from tf_memlint.rule import all_rules

    codes = list(all_rules())
    out: dict = {"path": path, "lines": 0}
    # --- the flake8 door -------------------------------------------------------------------
    try:
        from flake8.processor import FileProcessor

        processor = FileProcessor(path, _flake8_options())
        out["lines"] = len(processor.lines)
        try:
            tree = processor.build_ast()
        except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
            out["flake8"] = {"skipped": f"E999 {type(error).__name__}"}
        else:
            TFMemlintChecker.codes, TFMemlintChecker.settings = codes, {}
            results = list(TFMemlintChecker(tree, processor.lines, path).run())
            messages = [r[2] for r in results]
            out["flake8"] = {"findings": [m.split()[0] for m in messages if not m.startswith("TFM000")],
                             "internal": [m for m in messages if m.startswith("TFM000")]}
    except Exception:  # noqa: BLE001 - the point is to count these
        out["flake8"] = {"crash": traceback.format_exc(limit=6)}
    # --- the command's door ------------------------------------------------------------------
    try:
        result = lint_file(path, codes, {})
        entry: dict = {"findings": [d.code for d in result.findings]}
        if result.error:
            key = "internal" if result.error.startswith("TFM000") else "error"
            entry[key] = result.error
        out["cli"] = entry
    except Exception:  # noqa: BLE001
        out["cli"] = {"crash": traceback.format_exc(limit=6)}
    if check_gate:
        out["gate"] = _check_gate(path, codes)
    return out


def _check_gate(path: str, codes: list[str]) -> dict:
    from tf_memlint.engine import LintError, ModuleFacts, lint_source, may_import_tf, parse_ast
    from tf_memlint.files import read_source

    try:
        raw = Path(path).read_bytes()
        tree = parse_ast(raw)
        if tree is None or not ModuleFacts(tree).imports_tf():
            return {}
        result: dict = {"imports_tf": True}
        if not may_import_tf(raw):
            result["unsound_text_test"] = True
        source = read_source(path)
        gated, ungated = lint_source(source, codes), lint_source(source, codes, gate=False)
        if gated != ungated:
            result["differ"] = [str(d) for d in set(gated) ^ set(ungated)]
        return result
    except LintError:
        return {}
    except Exception:  # noqa: BLE001
        return {"crash": traceback.format_exc(limit=6)}


def _chunk(paths: list[str], check_gate: bool = False) -> list[dict]:
    return [sweep_one(p, check_gate) for p in paths]


def run(files: list[str], jobs: int, check_gate: bool = False) -> list[dict]:
    if jobs <= 1:
        return _chunk(files, check_gate)
    size = max(1, min(32, len(files) // (jobs * 8) or 1))
    chunks = [files[i:i + size] for i in range(0, len(files), size)]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return [r for batch in pool.map(_chunk, chunks, [check_gate] * len(chunks)) for r in batch]


def summarise(results: list[dict]) -> dict:
    summary: dict = {"files": len(results), "lines": sum(r["lines"] for r in results)}
    for door in ("flake8", "cli"):
        entries = [r[door] for r in results]
        findings = collections.Counter(code for e in entries for code in e.get("findings", ()))
        errors = collections.Counter(e["error"].split(":")[0] for e in entries if "error" in e)
        summary[door] = {
            "linted": sum(1 for e in entries if "crash" not in e and "skipped" not in e and "error" not in e),
            "skipped_by_flake8": sum(1 for e in entries if "skipped" in e),
            "refused_with_error": dict(errors),
            "findings": sum(findings.values()),
            "findings_by_code": dict(sorted(findings.items())),
            "files_with_findings": sum(1 for e in entries if e.get("findings")),
            "crashes": [r["path"] + "\n" + r[door]["crash"] for r in results if "crash" in r[door]],
            "internal_errors": [f"{r['path']}: {r[door]['internal']}" for r in results if r[door].get("internal")],
        }
    gates = [r for r in results if r.get("gate")]
    if gates:
        summary["gate"] = {
            "files_importing_tf": sum(1 for r in gates if r["gate"].get("imports_tf")),
            "unsound_text_test": [r["path"] for r in gates if r["gate"].get("unsound_text_test")],
            "gated_differs": [f"{r['path']}: {r['gate']['differ']}" for r in gates if r["gate"].get("differ")],
            "crashes": [r["path"] + "\n" + r["gate"]["crash"] for r in gates if r["gate"].get("crash")],
        }
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--roots", nargs="*", type=Path, help="trees to sweep (default: tensorflow, keras, numpy, stdlib)")
    parser.add_argument("--sample", type=int, default=0, help="about this many files per tree (0: all)")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--json", type=Path, help="write the full per-file results here")
    parser.add_argument("--check-gate", action="store_true",
                        help="also compare the gated and ungated engine on every file importing TF")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    files: list[str] = []
    per_root = {}
    for root in args.roots or default_roots():
        found = python_files(root)
        if args.sample and len(found) > args.sample:
            step = len(found) / args.sample
            found = [found[int(i * step)] for i in range(args.sample)]
        per_root[str(root)] = len(found)
        files.extend(found)
    results = run(files, args.jobs, args.check_gate)
    summary = summarise(results)
    summary["roots"] = per_root
    summary["seconds"] = round(time.perf_counter() - started, 1)
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "results": results}, indent=1))
    for root, count in per_root.items():
        print(f"{count:>7} files  {root}")
    print(f"{summary['files']} files, {summary['lines']} lines, {summary['seconds']} s")
    for door, label in (("flake8", "flake8 plugin"), ("cli", "tf-memlint")):
        s = summary[door]
        print(f"{label:>14}: linted {s['linted']}, findings {s['findings']} in {s['files_with_findings']} files "
              f"{s['findings_by_code']}, crashes {len(s['crashes'])}, internal errors {len(s['internal_errors'])}, "
              f"skipped by flake8 (E999) {s['skipped_by_flake8']}, refused with an error {s['refused_with_error']}")
        for line in s["crashes"][:10] + s["internal_errors"][:10]:
            print("    " + line.replace("\n", "\n    "))
    gate = summary.get("gate")
    if gate:
        print(f"          gate: {gate['files_importing_tf']} files import TensorFlow/Keras; text test unsound on "
              f"{len(gate['unsound_text_test'])}, gated findings differ on {len(gate['gated_differs'])}, "
              f"crashes {len(gate['crashes'])}")
        for line in (gate["unsound_text_test"] + gate["gated_differs"] + gate["crashes"])[:10]:
            print("    " + line.replace("\n", "\n    "))
    failed = any(summary[d]["crashes"] or summary[d]["internal_errors"] for d in ("flake8", "cli"))
    failed = failed or bool(gate and (gate["unsound_text_test"] or gate["gated_differs"] or gate["crashes"]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
