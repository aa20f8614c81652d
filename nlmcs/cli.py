"""The one command line, `nlmcs`, with a subcommand per job.

Each module in `nlmcs.commands` registers its subcommands (and, optionally, its `nlmcs bench`
entries). Commands are thin: they parse arguments, call keyword-only library functions and print.
Bad input becomes one line on stderr and exit status 2; anything else is a bug
and keeps its traceback.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from nlmcs.errors import UserInputError

# Order here is the order in `nlmcs --help`.
COMMAND_MODULES = ("manual", "game", "play", "corpus", "experiment", "inspect")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nlmcs",
        description="Text-grounded non-linear Monte-Carlo search for FreeCiv-style strategy games.",
        epilog="example:\n  nlmcs manual ingest data/manuals/civ-guide.md",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    bench = sub.add_parser(
        "bench",
        help="benchmarks that print timings and peak memory",
        description="Benchmarks: each prints its figures as a table.",
        epilog="example:\n  nlmcs bench manual",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    bench_sub = bench.add_subparsers(dest="bench", metavar="WHAT", required=True)
    for name in COMMAND_MODULES:
        module = _load(name)
        if module is None:
            continue
        module.register(sub)
        if hasattr(module, "register_bench"):
            module.register_bench(bench_sub)
    return parser


def _load(name: str):
    full = f"nlmcs.commands.{name}"
    if importlib.util.find_spec(full) is None:
        return None
    return importlib.import_module(full)


def add_command(sub, name: str, *, help: str, example: str, func) -> argparse.ArgumentParser:
    """Add a subcommand whose --help ends with a worked example."""
    parser = sub.add_parser(
        name,
        help=help,
        description=help[:1].upper() + help[1:] + ".",
        epilog=f"example:\n  {example}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(func=func)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if not hasattr(args, "func"):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except UserInputError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except (FileNotFoundError, PermissionError, IsADirectoryError, NotADirectoryError) as err:
        where = err.filename if err.filename is not None else ""
        print(f"error: {where}: {err.strerror}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
