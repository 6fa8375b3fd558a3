"""The ``tf-memlint`` command.

    tf-memlint [PATH ...] [--select ...] [--ignore ...] [--format text|json|sarif|github]
               [--statistics] [--exit-zero] [-j N] [--force-exclude]
    tf-memlint explain CODE
    tf-memlint rules
    tf-memlint verify [CODE ...] ...   (needs the [verify] extra: TensorFlow)

Exit status: 0 no findings, 1 findings, 2 usage, configuration or I/O error (a file that could
not be read or parsed counts: it was not checked). Every other file is still linted and reported;
each file that could not be is named on stderr, one line each: ``path: error: why``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from tf_memlint import __version__, report
from tf_memlint.config import Config, ConfigError, find_config_file, load_config, rule_options
from tf_memlint.engine import enabled_codes
from tf_memlint.files import FileResult, discover, lint_files
from tf_memlint.resources import rule_page
from tf_memlint.rule import all_rules

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _codes(value: str) -> list[str]:
    return [c.strip().upper() for c in value.split(",") if c.strip()]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tf-memlint",
        description="Find TensorFlow memory anti-patterns. Subcommands: explain CODE, rules, verify.")
    parser.add_argument("paths", nargs="*", metavar="PATH", help="files or directories (default: .)")
    parser.add_argument("--select", type=_codes, help="only these codes or prefixes (comma-separated)")
    parser.add_argument("--ignore", type=_codes, help="skip these codes or prefixes")
    parser.add_argument("--extend-select", "--enable", dest="extend_select", type=_codes,
                        help="add codes to the selection; the way to turn on opt-in rules")
    parser.add_argument("--exclude", type=lambda v: v.split(","), help="replace the exclude patterns")
    parser.add_argument("--extend-exclude", type=lambda v: v.split(","), default=[],
                        help="add exclude patterns")
    parser.add_argument("--force-exclude", action="store_true",
                        help="apply excludes to paths named on the command line too (for pre-commit)")
    parser.add_argument("--format", choices=sorted(report.FORMATS), default="text",
                        help="text (flake8's), json, sarif (SARIF 2.1.0, for code scanning), "
                             "github (workflow annotations)")
    parser.add_argument("--statistics", action="store_true",
                        help="count findings per code after the output (on stderr for json/sarif)")
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    parser.add_argument("-j", "--jobs", type=int, help="worker processes (default: all cores)")
    parser.add_argument("--config", type=Path, help="pyproject.toml or setup.cfg to read (default: nearest)")
    parser.add_argument("--isolated", action="store_true", help="ignore configuration files")
    parser.add_argument("--version", action="version", version=f"tf-memlint {__version__}")
    for option, default in rule_options().items():
        parser.add_argument("--" + option.replace("_", "-"), dest=f"opt_{option}", type=type(default),
                            metavar=type(default).__name__.upper(), help=f"rule option (default {default})")
    return parser


def _explain(args: list[str]) -> int:
    if len(args) != 1:
        print("usage: tf-memlint explain CODE", file=sys.stderr)
        return EXIT_ERROR
    code = args[0].upper()
    page = rule_page(code)
    if code not in all_rules() or not page.is_file():
        print(f"tf-memlint: unknown rule {args[0]!r}; `tf-memlint rules` lists them", file=sys.stderr)
        return EXIT_ERROR
    sys.stdout.write(page.read_text(encoding="utf-8"))
    return EXIT_CLEAN


def _rules() -> int:
    rules = all_rules()
    width = max(len(r.name) for r in rules.values())
    print(f"{'code':<7} {'name':<{width}}  default  summary")
    for code, rule in rules.items():
        status = "on" if rule.default_enabled else "opt-in"
        print(f"{code:<7} {rule.name:<{width}}  {status:<7}  {rule.summary}")
    return EXIT_CLEAN


def _verify(args: list[str]) -> int:
    from tf_memlint.verify.command import run

    return run(args)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "explain":
        return _explain(argv[1:])
    if argv and argv[0] == "rules":
        return _rules()
    if argv and argv[0] == "verify":
        return _verify(argv[1:])
    if argv and argv[0] == "check":  # ruff-style spelling
        argv = argv[1:]
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return EXIT_CLEAN if exit_.code == 0 else EXIT_ERROR
    try:
        config = Config() if args.isolated else load_config(args.config or find_config_file(Path.cwd()))
    except (ConfigError, OSError) as error:
        print(f"tf-memlint: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    if args.config is not None and not args.config.is_file():
        print(f"tf-memlint: error: {args.config}: no such file", file=sys.stderr)
        return EXIT_ERROR
    select = args.select if args.select is not None else config.select
    ignore = args.ignore if args.ignore is not None else config.ignore
    extend_select = config.extend_select + (args.extend_select or [])
    unknown = [c for c in select + ignore + extend_select if not any(code.startswith(c) for code in all_rules())]
    if unknown:
        print(f"tf-memlint: error: unknown rule code or prefix: {', '.join(unknown)}", file=sys.stderr)
        return EXIT_ERROR
    codes = enabled_codes(select, ignore, extend_select)
    settings = dict(config.settings)
    for option in rule_options():
        value = getattr(args, f"opt_{option}")
        if value is not None:
            settings[option] = value
    exclude = (args.exclude if args.exclude is not None else config.exclude) + args.extend_exclude

    found = list(discover(args.paths or ["."], exclude, args.force_exclude))
    missing = [(path, error) for path, error in found if error]
    jobs = args.jobs or config.jobs or os.cpu_count() or 1
    results = lint_files([path for path, error in found if not error], codes, settings, jobs)

    unreadable = [FileResult(path, error=error) for path, error in missing]
    sys.stdout.write(report.FORMATS[args.format](results + unreadable))
    if args.statistics:
        stream = sys.stderr if args.format in report.DOCUMENT_FORMATS else sys.stdout
        stream.write(report.statistics(results))
    sys.stdout.flush()
    errors = missing + [(r.path, r.error) for r in results if r.error]
    for path, error in errors:
        print(f"{path}: error: {error}", file=sys.stderr)
    if errors:
        return EXIT_ERROR
    if any(r.findings for r in results) and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


if __name__ == "__main__":
    sys.exit(main())
