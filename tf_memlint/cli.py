"""The ``tf-memlint`` command.

    tf-memlint [check] [PATH ...] [options]     lint files, directories and notebooks (default: .)
    tf-memlint [check] - [--stdin-filename PATH] lint the source given on stdin
    tf-memlint explain CODE                     one rule's page
    tf-memlint rules                            the catalogue
    tf-memlint verify [CODE ...] [options]      measure the rules' claims (needs the [verify] extra)

Exit status: 0 no findings, 1 findings, 2 usage, configuration or I/O error (a file that could
not be read or parsed counts: it was not checked). Every other file is still linted and reported;
each file that could not be is named on stderr, one line each: ``path: error: why``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from tf_memlint import __version__, project, report
from tf_memlint.config import Config, ConfigError, find_config_file, load_config, positive_int, rule_options
from tf_memlint.engine import enabled_codes
from tf_memlint.files import PROJECT_TABLES, FileResult, discover, excluded, lint_file, lint_files
from tf_memlint.resources import rule_page
from tf_memlint.rule import all_rules

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2

USAGE = """\
tf-memlint [check] [PATH ...] [options]
       tf-memlint [check] - --stdin-filename PATH [options]
       tf-memlint explain CODE
       tf-memlint rules
       tf-memlint verify [CODE ...] [options]"""
SUBCOMMANDS = """\
subcommands (each has --help):
  check      lint (the default: `tf-memlint src/` is `tf-memlint check src/`)
  explain    print one rule's page: what it flags, why, an example, the fix, the measured claim
  rules      list every rule, its name and whether it is on by default
  verify     measure the rules' claims under real TensorFlow (needs the [verify] extra)"""


def _codes(value: str) -> list[str]:
    return [c.strip().upper() for c in value.split(",") if c.strip()]


def _patterns(value: str) -> list[str]:
    return [p.strip() for p in value.split(",") if p.strip()]


def _count(value: str) -> int:
    try:
        return positive_int(value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tf-memlint", usage=USAGE, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Find TensorFlow memory anti-patterns in Python files and Jupyter notebooks.",
        epilog=SUBCOMMANDS + "\n\nexit status: 0 no findings, 1 findings, 2 usage, configuration or "
                             "I/O error (a file that could not be linted)")
    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="files, directories or notebooks (default: .); - reads stdin")
    parser.add_argument("--stdin-filename", metavar="PATH",
                        help="the name of the source read from stdin: used in the output, for "
                             "--force-exclude, to find the configuration, and .ipynb makes it a notebook")
    parser.add_argument("--select", type=_codes, help="only these codes or prefixes (comma-separated)")
    parser.add_argument("--ignore", type=_codes, help="skip these codes or prefixes")
    parser.add_argument("--extend-select", "--enable", dest="extend_select", type=_codes,
                        help="add codes to the selection; the way to turn on opt-in rules")
    parser.add_argument("--exclude", type=_patterns, help="replace the exclude patterns")
    parser.add_argument("--extend-exclude", type=_patterns, default=[], help="add exclude patterns")
    parser.add_argument("--include", type=_patterns,
                        help="replace the file patterns a directory walk lints (default *.py,*.pyi,*.ipynb)")
    parser.add_argument("--extend-include", type=_patterns, default=[],
                        help="add file patterns to the directory walk")
    parser.add_argument("--force-exclude", action="store_true",
                        help="apply excludes to paths named on the command line too (for pre-commit)")
    parser.add_argument("--format", choices=sorted(report.FORMATS), default="text",
                        help="text (flake8's), json, sarif (SARIF 2.1.0, for code scanning), "
                             "github (workflow annotations)")
    parser.add_argument("--statistics", action="store_true",
                        help="count findings per code after the output (on stderr for json/sarif)")
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    parser.add_argument("-j", "--jobs", type=_count, metavar="N", help="worker processes, 1 or more (default: all cores)")
    parser.add_argument("--config", type=Path, help="pyproject.toml or setup.cfg to read (default: nearest)")
    parser.add_argument("--isolated", action="store_true", help="ignore configuration files")
    parser.add_argument("--version", action="version", version=f"tf-memlint {__version__}")
    for option, default in rule_options().items():
        parser.add_argument("--" + option.replace("_", "-"), dest=f"opt_{option}", type=_count,
                            metavar="N", help=f"rule option (default {default})")
    return parser


def _parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace | int:
    try:
        return parser.parse_args(argv)
    except SystemExit as exit_:  # --help, --version, or a usage error (argparse printed it)
        return EXIT_CLEAN if exit_.code in (0, None) else EXIT_ERROR


def _explain(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="tf-memlint explain", description="Print one rule's page: what it flags, why it "
                     "costs memory, an example, what to write instead, and the measured claim.")
    parser.add_argument("code", metavar="CODE", help="a rule code, e.g. TFM101 (`tf-memlint rules` lists them)")
    args = _parse(parser, argv)
    if isinstance(args, int):
        return args
    code = args.code.upper()
    page = rule_page(code)
    if code not in all_rules() or not page.is_file():
        print(f"tf-memlint: unknown rule {args.code!r}; `tf-memlint rules` lists them", file=sys.stderr)
        return EXIT_ERROR
    sys.stdout.write(page.read_text(encoding="utf-8"))
    return EXIT_CLEAN


def _rules(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="tf-memlint rules",
                     description="List every rule: code, name, on by default or opt-in, summary.")
    args = _parse(parser, argv)
    if isinstance(args, int):
        return args
    rules = all_rules()
    width = max(len(r.name) for r in rules.values())
    print(f"{'code':<7} {'name':<{width}}  default  summary")
    for code, rule in rules.items():
        status = "on" if rule.default_enabled else "opt-in"
        print(f"{code:<7} {rule.name:<{width}}  {status:<7}  {rule.summary}")
    return EXIT_CLEAN


def _verify(argv: list[str]) -> int:
    from tf_memlint.verify.command import run

    try:
        return run(argv)
    except SystemExit as exit_:  # --help, or a usage error
        return exit_.code if isinstance(exit_.code, int) else EXIT_ERROR


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "explain":
        return _explain(argv[1:])
    if argv and argv[0] == "rules":
        return _rules(argv[1:])
    if argv and argv[0] == "verify":
        return _verify(argv[1:])
    if argv and argv[0] == "check":  # ruff-style spelling
        argv = argv[1:]
    args = _parse(_parser(), argv)
    if isinstance(args, int):
        return args
    return _check(args)


def _error(message: str) -> int:
    print(f"tf-memlint: error: {message}", file=sys.stderr)
    return EXIT_ERROR


def _check(args: argparse.Namespace) -> int:
    stdin = args.paths == ["-"] or (args.stdin_filename is not None and not args.paths)
    if "-" in args.paths and not stdin:
        return _error("`-` (read stdin) cannot be combined with other paths")
    if args.stdin_filename is not None and not stdin:
        return _error("--stdin-filename names the source read from stdin: give `-` as the only path")
    if args.config is not None and not args.config.is_file():
        return _error(f"{args.config}: no such file")
    # The configuration is the nearest to the current directory; for stdin, to the file it stands
    # for (an editor may run the command from anywhere).
    start = Path.cwd()
    if stdin and args.stdin_filename:
        start = (Path.cwd() / args.stdin_filename).parent
        while not start.is_dir() and start != start.parent:
            start = start.parent
    try:
        config = Config() if args.isolated else load_config(args.config or find_config_file(start))
    except (ConfigError, OSError) as error:
        return _error(str(error))
    select = args.select if args.select is not None else config.select
    ignore = args.ignore if args.ignore is not None else config.ignore
    extend_select = config.extend_select + (args.extend_select or [])
    unknown = [c for c in select + ignore + extend_select if not any(code.startswith(c) for code in all_rules())]
    if unknown:
        return _error(f"unknown rule code or prefix: {', '.join(unknown)}")
    codes = enabled_codes(select, ignore, extend_select)
    settings = dict(config.settings)
    for option in rule_options():
        value = getattr(args, f"opt_{option}")
        if value is not None:
            settings[option] = value
    exclude = (args.exclude if args.exclude is not None else config.exclude) + args.extend_exclude
    include = (args.include if args.include is not None else config.include) + args.extend_include

    if stdin:
        display = args.stdin_filename or "-"
        if args.stdin_filename and args.force_exclude and excluded(args.stdin_filename, exclude):
            results: list[FileResult] = []
        else:
            results = [lint_file(display, codes, settings, display=display, raw=sys.stdin.buffer.read())]
        missing: list[tuple[str, str | None]] = []
    else:
        found = list(discover(args.paths or ["."], exclude, args.force_exclude, include))
        missing = [(path, error) for path, error in found if error]
        jobs = args.jobs or config.jobs or os.cpu_count() or 1
        paths = [path for path, error in found if not error]
        registry = all_rules()
        # Summaries across the given files' modules, for the rules that follow calls there.
        tables = project.build(paths) if any(registry[code].reaches_across_modules for code in codes) else {}
        if tables:
            settings[PROJECT_TABLES] = tables
        results = lint_files(paths, codes, settings, jobs)

    unreadable = [FileResult(path, error=error) for path, error in missing]
    sys.stdout.write(report.FORMATS[args.format](results + unreadable))
    if args.statistics:
        stream = sys.stderr if args.format in report.DOCUMENT_FORMATS else sys.stdout
        stream.write(report.statistics(results))
    sys.stdout.flush()
    errors = missing + [(r.path, r.error) for r in results if r.error]
    for path, error in errors:
        print(f"{path}: error: {report.one_line(error or '')}", file=sys.stderr)
    if errors:
        return EXIT_ERROR
    if any(r.findings for r in results) and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def console() -> None:
    """The console script: ``main``, and a quiet exit when the reader of stdout goes away
    (``tf-memlint rules | head``)."""
    try:
        status = main()
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # Python flushes stdout again at exit
        status = 1
    except KeyboardInterrupt:
        status = 130
    sys.exit(status)


if __name__ == "__main__":
    console()
