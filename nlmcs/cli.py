"""The one command line, `nlmcs`, with a subcommand per job.

Each module in `nlmcs.commands` registers its subcommands (and its `nlmcs bench` entries).
Commands are thin: they parse arguments, call keyword-only library functions and print; the
command modules import nothing heavy until a command runs, so `--help` answers at once.
Bad input becomes one line on stderr and exit status 2; anything else is a bug and keeps its
traceback.
"""

from __future__ import annotations

import argparse
import logging
import sys

from nlmcs import __version__
from nlmcs.commands import ablation, corpus, game, manual, play, relevance
from nlmcs.errors import UserInputError

# Order here is the order in `nlmcs --help`.
COMMAND_MODULES = (manual, game, play, relevance, ablation, corpus)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nlmcs",
        description="Text-grounded non-linear Monte-Carlo search for FreeCiv-style strategy games.",
        epilog="example:\n  nlmcs play --method text --map small --steps 10 --rollouts 50 "
        "--depth 10",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"nlmcs {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    bench = sub.add_parser(
        "bench",
        help="benchmarks that print timings and peak memory",
        description="Benchmarks: each prints its figures as a table.",
        epilog="example:\n  nlmcs bench engine",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    bench_sub = bench.add_subparsers(dest="bench", metavar="WHAT", required=True)
    for module in COMMAND_MODULES:
        module.register(sub)
        module.register_bench(bench_sub)
    return parser


class _NoticeHandler(logging.Handler):
    """One-line notices (a shipped manual built on first use, ...) as "note: ..." on stderr."""

    def emit(self, record: logging.LogRecord) -> None:
        print(f"note: {record.getMessage()}", file=sys.stderr)


def _configure_logging(verbose: bool) -> None:
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    notice = logging.getLogger("nlmcs.notice")
    if not any(isinstance(h, _NoticeHandler) for h in notice.handlers):
        notice.addHandler(_NoticeHandler())
    notice.setLevel(logging.INFO)
    notice.propagate = False


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _configure_logging(args.verbose)
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
    except BrokenPipeError:  # the reader went away (`nlmcs ... | head`): nothing left to say
        sys.stderr.close()
        return 141


if __name__ == "__main__":
    sys.exit(main())
