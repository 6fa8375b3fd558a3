"""The ``tf-memlint`` command.

    tf-memlint [check] [PATH ...] [options]     lint files, directories and notebooks (default: .)
    tf-memlint [check] - [--stdin-filename PATH] lint the source given on stdin
    tf-memlint explain CODE|NAME                one rule's page
    tf-memlint rules                            the catalogue
    tf-memlint verify [CODE ...] [options]      measure the rules' claims (needs the [verify] extra)
    tf-memlint clean                            delete the cache (.tf-memlint-cache)

Exit status: 0 no findings, 1 findings, 2 usage, configuration or I/O error (a file that could
not be read or parsed counts: it was not checked). Every other file is still linted and reported;
each file that could not be is named on stderr, one line each: ``path: error: why``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from tf_memlint import __version__, baseline, project, report
from tf_memlint.config import Config, ConfigError, find_config_file, load_config, positive_int, rule_options
from tf_memlint.engine import TEST_PATHS_SETTING, enabled_codes
from tf_memlint.grading import DEFAULT_MIN_MIB, DEFAULT_MIN_SECONDS, LEVELS
from tf_memlint.files import PROJECT_TABLES, FileResult, discover, excluded, lint_file, lint_files
from tf_memlint.fixes import command as fixes
from tf_memlint.ignores import codes_for, without_ignored
from tf_memlint.resources import rule_page
from tf_memlint.rule import all_rules
from tf_memlint.selection import selection_problem

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2

USAGE = """\
tf-memlint [check] [PATH ...] [options]
       tf-memlint [check] - --stdin-filename PATH [options]
       tf-memlint explain CODE|NAME
       tf-memlint rules
       tf-memlint verify [CODE ...] [options]
       tf-memlint clean"""
SUBCOMMANDS = """\
subcommands (each has --help):
  check      lint (the default: `tf-memlint src/` is `tf-memlint check src/`)
  explain    print one rule's page (by code or name): what it flags, why, an example, the fix, the claim
  rules      list every rule, its name and whether it is on by default
  verify     measure the rules' claims under real TensorFlow (needs the [verify] extra)
  clean      delete the cache the command keeps between runs (.tf-memlint-cache)"""


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
    parser.add_argument("--rule-url-base", metavar="URL",
                        help="where the rule pages are hosted, for the links in json and sarif "
                             "(default: the pages this installation ships, as file:// links)")
    parser.add_argument("--statistics", action="store_true",
                        help="count findings per code after the output (on stderr for json/sarif)")
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    parser.add_argument("-j", "--jobs", type=_count, metavar="N", help="worker processes, 1 or more (default: all cores)")
    parser.add_argument("--baseline", type=Path, metavar="FILE",
                        help="report only the findings not recorded in FILE (see --write-baseline)")
    parser.add_argument("--write-baseline", type=Path, metavar="FILE",
                        help="record every current finding in FILE (JSON) and exit 0; later runs with "
                             "--baseline FILE report only new ones")
    parser.add_argument("--config", type=Path, help="pyproject.toml or setup.cfg to read (default: nearest)")
    parser.add_argument("--no-cache", action="store_true",
                        help="neither read nor write the cache of results (.tf-memlint-cache)")
    parser.add_argument("--cache-dir", type=Path, metavar="DIR",
                        help="where the cache is kept (default: $TF_MEMLINT_CACHE_DIR, else "
                             ".tf-memlint-cache beside the configuration file, else in the current directory)")
    parser.add_argument("--isolated", action="store_true", help="ignore configuration files")
    parser.add_argument("--version", action="version", version=f"tf-memlint {__version__}")
    grading = parser.add_argument_group(
        "grading", "every finding is graded high, medium or low by its evidence (how often the code "
                   "runs, in what kind of process) and by its projected cost; the least shown is "
                   "--confidence (default high)")
    grading.add_argument("--confidence", choices=LEVELS, help="show findings of this confidence and above (default high)")
    grading.add_argument("--min-memory-cost", type=_count, metavar="MIB",
                         help=f"a projected memory cost below this is graded low (default {DEFAULT_MIN_MIB})")
    grading.add_argument("--min-time-cost", type=_count, metavar="SECONDS",
                         help=f"a projected time cost below this is graded low (default {DEFAULT_MIN_SECONDS:g})")
    fixes.add_arguments(parser)
    _add_rule_options(parser)
    return parser


def _add_rule_options(parser: argparse.ArgumentParser) -> None:
    """Each rule option in a --help group named after the rules it tunes (TFM101 and TFM102 share one)."""
    rules = all_rules()
    owners: dict[str, list[str]] = {}
    for code, rule in rules.items():
        for option in rule.options:
            owners.setdefault(option, []).append(code)
    groups: dict[tuple[str, ...], argparse._ArgumentGroup] = {}
    for option, codes in owners.items():
        key = tuple(codes)
        if key not in groups:
            groups[key] = parser.add_argument_group(", ".join(f"{c} ({rules[c].name})" for c in codes))
        default, help_text = rules[codes[0]].options[option]
        groups[key].add_argument("--" + option.replace("_", "-"), dest=f"opt_{option}", type=_count,
                                 metavar="N", help=f"{help_text} (default {default})")


def _parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace | int:
    try:
        return parser.parse_args(argv)
    except SystemExit as exit_:  # --help, --version, or a usage error (argparse printed it)
        return EXIT_CLEAN if exit_.code in (0, None) else EXIT_ERROR


def _explain(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="tf-memlint explain", description="Print one rule's page: what it flags, why it "
                     "costs memory, an example, what to write instead, and the measured claim.")
    parser.add_argument("code", metavar="CODE", help="a rule code or name, e.g. TFM101 or predict-in-loop "
                                                    "(`tf-memlint rules` lists them)")
    args = _parse(parser, argv)
    if isinstance(args, int):
        return args
    by_name = {rule.name: code for code, rule in all_rules().items()}
    code = by_name.get(args.code.strip().lower().replace("_", "-"), args.code.upper())
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


def _clean(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="tf-memlint clean", description="Delete the cache the command "
                                     "keeps between runs: the one a check from here would use.")
    parser.add_argument("--cache-dir", type=Path, metavar="DIR", help="the cache to delete (default: as check finds it)")
    parser.add_argument("--config", type=Path, help="pyproject.toml or setup.cfg beside which the cache is")
    parser.add_argument("--isolated", action="store_true", help="ignore configuration files")
    args = _parse(parser, argv)
    if isinstance(args, int):
        return args
    from tf_memlint import cache

    try:
        source = None if args.isolated else (args.config or find_config_file(Path.cwd()))
    except (ConfigError, OSError) as error:
        return _error(str(error))
    problem = cache.clean(cache.directory(args.cache_dir, source))
    return _error(problem) if problem else EXIT_CLEAN


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "clean":
        return _clean(argv[1:])
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
    if args.unsafe_fixes and not fixes.wanted(args):
        return _error("--unsafe-fixes goes with --fix or --diff")
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
    problem = selection_problem(select, ignore, extend_select, codes)
    if problem:
        return _error(problem)
    settings = dict(config.settings)
    settings[TEST_PATHS_SETTING] = list(config.test_paths)
    for option in rule_options():
        value = getattr(args, f"opt_{option}")
        if value is not None:
            settings[option] = value
    for option in ("confidence", "min_memory_cost", "min_time_cost"):
        if getattr(args, option) is not None:
            settings[option] = getattr(args, option)
    exclude = (args.exclude if args.exclude is not None else config.exclude) + args.extend_exclude
    include = (args.include if args.include is not None else config.include) + args.extend_include

    stdin_sources: dict[str, str] = {}  # the baseline's view of the source read from stdin
    if stdin:
        display = args.stdin_filename or "-"
        if args.stdin_filename and args.force_exclude and excluded(args.stdin_filename, exclude):
            results: list[FileResult] = []
        elif fixes.wanted(args):
            return fixes.fix_stdin(args, sys.stdin.buffer.read(), display, codes, settings)
        else:
            raw = sys.stdin.buffer.read()
            stdin_sources[display] = raw.decode("utf-8", errors="replace")
            results = [lint_file(display, codes, settings, display=display, raw=raw)]
        missing: list[tuple[str, str | None]] = []
    else:
        found = list(discover(args.paths or ["."], exclude, args.force_exclude, include))
        missing = [(path, error) for path, error in found if error]
        jobs = args.jobs or config.jobs or os.cpu_count() or 1
        paths = [path for path, error in found if not error]
        if fixes.wanted(args):
            status = fixes.fix_paths(args, paths, codes, settings, codes_for(codes, config))
            if args.diff:
                return EXIT_ERROR if missing else status
        registry = all_rules()
        from tf_memlint import cache

        store = None if args.no_cache else cache.Cache(cache.directory(args.cache_dir, config.source))
        # Summaries across the given files' modules, for the rules that follow calls there.
        reach = any(registry[code].reaches_across_modules for code in codes)
        tables = project.build(paths, store) if reach else {}
        if tables:
            settings[PROJECT_TABLES] = tables
        results = cache.lint_files(store, paths, codes, settings, jobs) if store else lint_files(paths, codes, settings, jobs)

    results = without_ignored(results, config)
    try:
        if args.write_baseline is not None:
            count = baseline.write(args.write_baseline, results, stdin_sources)
            print(f"tf-memlint: recorded {count} findings in {args.write_baseline}", file=sys.stderr)
            results = baseline.new_findings(results, args.write_baseline, stdin_sources)  # none
        elif args.baseline is not None or config.baseline:
            path = args.baseline or baseline.option_path(config.baseline, config)
            results = baseline.new_findings(results, path, stdin_sources)
    except baseline.BaselineError as error:
        return _error(str(error))
    unreadable = [FileResult(path, error=error) for path, error in missing]
    if args.format in report.DOCUMENT_FORMATS:  # they link each finding's rule page
        url_base = args.rule_url_base or config.rule_url_base
        output = report.FORMATS[args.format](results + unreadable, url_base=url_base)
    else:
        output = report.FORMATS[args.format](results + unreadable)
    sys.stdout.write(output)
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
