"""The one command line, `nlmcs`, with a subcommand per job.

Each module in `nlmcs.commands` registers its subcommands (and its `nlmcs bench` entries).
Commands are thin: they parse arguments, call keyword-only library functions and print; the
command modules import nothing heavy until a command runs, so `--help` answers at once.
Bad input (a file, a name, an option) becomes one line on stderr and exit status 2; anything
else is a bug and keeps its traceback. SIGTERM (what `timeout` and job schedulers send) is
handled like Ctrl-C, so finished work is kept either way: exit status 130 after SIGINT, 143
after SIGTERM. A reader that goes away (`nlmcs ... | head`) ends the command quietly (141).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import logging
import os
import re
import signal
import sys
import threading

from nlmcs import __version__
from nlmcs.commands import (
    ablation,
    advice,
    corpus,
    env,
    freeciv,
    game,
    manual,
    net,
    play,
    reader,
    relevance,
    serve,
)
from nlmcs.commands.options import HelpFormatter, check_paths, sectioned_help
from nlmcs.errors import UserInputError, WorkerExited
from nlmcs.processes import die_of_signal

# Order here is the order in `nlmcs --help`.
COMMAND_MODULES = (manual, game, play, relevance, ablation, advice, reader, net, corpus,
                   serve, freeciv, env)


class UsageError(UserInputError):
    """A command line argparse refuses (unknown option, bad value)."""


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line, like every other refusal (the usage is one --help away)."""

    def format_help(self) -> str:
        return sectioned_help(self) or super().format_help()

    def error(self, message: str):
        # "argument --steps: must be at least 1" reads as the other refusals do: "--steps must..."
        # (an option also named with its section, "--rollouts/--search.rollouts", by its first)
        message = re.sub(r"^argument ([^:/]+)(/[^:]+)?: (?=must )", r"\1 ", message)
        raise UsageError(f"{self.prog}: {message} (see `{self.prog} --help`)")


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C would be, so the same clean-up runs."""


def _sigterm_handler(main_pid: int):
    def on_sigterm(signum, frame):
        if os.getpid() != main_pid:
            die_of_signal(signum)  # a forked worker inherited this handler
            return
        raise Terminated

    return on_sigterm


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="nlmcs",
        description="Text-grounded non-linear Monte-Carlo search for FreeCiv-style strategy games.",
        epilog="example:\n  nlmcs play --method text --map small --steps 10 --rollouts 50 "
        "--depth 10",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"nlmcs {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    bench = sub.add_parser(
        "bench",
        help="benchmarks that print timings and peak memory",
        description="Benchmarks: each prints its figures as a table.",
        epilog="example:\n  nlmcs bench engine",
        formatter_class=HelpFormatter,
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
    _show_notices()


def _show_notices() -> None:
    """Notices print whatever --verbose says, and from the start: reading a --config file, as
    the command line is parsed, may have one to give."""
    notice = logging.getLogger("nlmcs.notice")
    if not any(isinstance(h, _NoticeHandler) for h in notice.handlers):
        notice.addHandler(_NoticeHandler())
    notice.setLevel(logging.INFO)
    notice.propagate = False


def parse_command_line(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line parsed, with the settings of its --config file where it names one
    (options given override the file's)."""
    refuse_empty_values(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "config", None) is not None:
        from nlmcs.commands.config_file import apply_config

        args = apply_config(parser, args, argv)
    check_paths(args, _positional(parser, args))
    return args


def _positional(parser: argparse.ArgumentParser, args: argparse.Namespace) -> frozenset[str]:
    """The dests of the chosen command's positional arguments (for naming them in messages)."""
    found: set[str] = set()
    while parser is not None:
        sub = None
        for action in parser._actions:  # argparse lists a parser's arguments nowhere else
            if isinstance(action, argparse._SubParsersAction):
                sub = action.choices.get(getattr(args, action.dest, None))
            elif not action.option_strings:
                found.add(action.dest)
        parser = sub
    return frozenset(found)


def refuse_empty_values(argv: list[str]) -> None:
    """An empty value never means "the default" (`--methods ''` once ran every method, `--map
    ''` the large map): an empty or blank argument is a usage error, named by its option."""
    for i, token in enumerate(argv):
        if token.startswith("--") and "=" in token:
            name, _, value = token.partition("=")
            if not value.strip():
                raise UsageError(f"{name}: an empty value; give one, or leave the option out")
        elif not token.strip():
            before = argv[i - 1] if i and argv[i - 1].startswith("-") else None
            raise UsageError(f"{before}: an empty value; give one, or leave the option out"
                             if before else "an empty argument; give a value")


FULL_DEVICE = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
BAD_PATH = {errno.ENAMETOOLONG, errno.ELOOP, errno.ENOTDIR}
"""Path errors that are the user's input (a name too long, a link loop, a file used as a
folder): one line, exit status 2."""
"""Write failures that say "no room", not "bad input": one line, exit status 1."""


def main(argv: list[str] | None = None) -> int:
    _show_notices()
    try:
        args = parse_command_line(argv)
    except UserInputError as err:  # a usage error, or a bad --config file
        refuse(str(err))
        return 2
    _configure_logging(args.verbose)
    handles_signals = threading.current_thread() is threading.main_thread()
    previous = (signal.signal(signal.SIGTERM, _sigterm_handler(os.getpid()))
                if handles_signals else None)
    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, not at exit
        return code
    except UserInputError as err:
        refuse(str(err))
        return 2
    except (FileNotFoundError, PermissionError, IsADirectoryError, NotADirectoryError) as err:
        where = f"{err.filename}: " if err.filename is not None else ""
        refuse(f"{where}{err.strerror or err}")
        return 2
    except WorkerExited as err:
        refuse(str(err))
        return 1
    except KeyboardInterrupt as err:
        return _interrupted(err)
    except SystemError as err:
        signal_err = _interrupt_behind(err)
        if signal_err is None:
            raise
        return _interrupted(signal_err)
    except BrokenPipeError:  # the reader went away (`nlmcs ... | head`): nothing left to say
        _silence_stdout()
        return 141
    except OSError as err:
        if err.errno in BAD_PATH:
            refuse(f"{err.filename}: {err.strerror}" if err.filename is not None else str(err))
            return 2
        if err.errno not in FULL_DEVICE:
            raise
        where = f"{err.filename}: " if err.filename is not None else ""
        refuse(f"{where}{err.strerror or err} (the device is full or a file size limit is "
               "reached); what was stored before is kept: free space and run it again")
        return 1
    finally:
        if handles_signals:
            signal.signal(signal.SIGTERM, previous)


MAX_MESSAGE = 1000
"""Characters of an error line shown at most: a value echoed whole (a megabyte pasted as an
option) would bury the line that says what is wrong."""
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def refuse(message: str) -> None:
    """The one `error:` line on stderr: control characters from a user's names (a terminal
    escape in a file name) shown escaped, never acted on by the terminal; lone surrogates from
    undecodable names shown as escapes; a huge message cut in the middle."""
    message = _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"),
                           message.replace("\n", " ").replace("\t", " "))
    message = message.encode("utf-8", "backslashreplace").decode("utf-8")
    if len(message) > MAX_MESSAGE:
        cut = len(message) - MAX_MESSAGE
        message = (f"{message[:MAX_MESSAGE // 2]} ... ({cut} characters not shown) ... "
                   f"{message[-MAX_MESSAGE // 2:]}")
    print(f"error: {message}", file=sys.stderr)


def _interrupted(err: KeyboardInterrupt) -> int:
    print("interrupted" + (" (SIGTERM)" if isinstance(err, Terminated) else ""), file=sys.stderr)
    return 143 if isinstance(err, Terminated) else 130


def _interrupt_behind(err: BaseException) -> KeyboardInterrupt | None:
    """The Ctrl-C or SIGTERM an error stands for, if any: a signal whose handler raises while
    compiled code has called back into Python (numba fetching the array class as it boxes the
    arrays a kernel returns) reaches us as a SystemError chained to the interrupt."""
    seen = set()
    while err is not None and id(err) not in seen:
        if isinstance(err, KeyboardInterrupt):
            return err
        seen.add(id(err))
        err = err.__cause__ or err.__context__
    return None


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush cannot fail again."""
    # stdout may have no file descriptor (captured in tests); then there is nothing to flush.
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


if __name__ == "__main__":
    sys.exit(main())
