"""The robustness suite: bad input and faults, tried as a careless or hostile user would.

Behaviour that belongs to the command line (exit codes, messages, signals, pipes, locks, kills)
is tried on real `nlmcs` processes; file contents that only the library reads are tried in
this process. Every case asserts the same things: the exit code, one `error:` line naming the
user's file or option, no traceback, and a store either byte-identical or consistently updated.
The helpers live in `robust_support.py` (a module of its own, since every test folder has a
conftest); this file holds the fixtures and prints the suite's counts.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from robust_support import TALLY, TESTS, Result

sys.path.insert(0, str(TESTS / "corpus"))  # the corpus log synthesiser (corpus_logs.py)
sys.path.insert(0, str(TESTS / "experiments"))  # hand-made decision logs (relevance_records.py)

# --- the counts of the suite ------------------------------------------------------------------
HERE = Path(__file__).resolve().parent
CLASSES = {
    "test_robust_concurrency.py": "concurrent writers",
    "test_robust_names.py": "names and paths",
    "test_robust_damage.py": "silent replacement and damage",
    "test_robust_crash.py": "crash windows",
    "test_robust_signals.py": "signals and pipes",
    "test_robust_options.py": "options",
    "test_robust_logs.py": "semantic checks of corpus logs",
    "test_robust_files.py": "special files, sizes and messages",
    "test_robust_disk.py": "full devices",
    "test_robust_overwrite.py": "outputs over inputs",
    "test_robust_derived.py": "derived files trusted blindly",
    "test_robust_sizes.py": "sizes",
    "test_robust_changing.py": "files changing while read",
}
_OUTCOMES: dict[str, Counter[str]] = {}


def pytest_runtest_logreport(report) -> None:
    path = Path(report.fspath).resolve()
    if path.parent != HERE:
        return
    counts = _OUTCOMES.setdefault(path.name, Counter())
    if report.when == "call" or (report.when == "setup" and not report.passed):
        counts[report.outcome] += 1


def pytest_terminal_summary(terminalreporter) -> None:
    """Cases per class of bad input or fault, and what the checks saw (a case is one test or
    one parametrisation; a hypothesis test is one case of many generated examples)."""
    if not _OUTCOMES:
        return
    write = terminalreporter.write_line
    terminalreporter.section("robustness suite")
    total: Counter[str] = Counter()
    for name, label in CLASSES.items():
        counts = _OUTCOMES.get(name, Counter())
        total += counts
        write(f"{label:36} {sum(counts.values()):4} cases: {counts['passed']} passed, "
              f"{counts['failed']} failed, {counts['skipped']} skipped")
    write(f"{'all classes':36} {sum(total.values()):4} cases: {total['passed']} passed, "
          f"{total['failed']} failed, {total['skipped']} skipped")
    for key in ("clean refusals", "stores kept byte-identical", "tracebacks",
                "silent acceptances", "data lost or changed"):
        write(f"{key:36} {TALLY[key]:4}")


@pytest.fixture
def data(tmp_path) -> Path:
    """A private, empty data folder (NLMCS_DATA) for the processes of one test."""
    root = tmp_path / "data"
    root.mkdir()
    return root


@pytest.fixture
def env(data) -> dict:
    return {**os.environ, "NLMCS_DATA": str(data), "PYTHONUNBUFFERED": "1"}


@pytest.fixture
def cli(data, monkeypatch, capsys) -> Callable[..., Result]:
    """Run `nlmcs ARGS` in this process (for file contents, where no signal or lock is
    involved), with the test's data folder."""
    from nlmcs.cli import main

    monkeypatch.setenv("NLMCS_DATA", str(data))

    def call(*args) -> Result:
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return call


@pytest.fixture
def logs(tmp_path) -> Callable[..., Path]:
    """logs(name, games, start) -> a valid corpus log of `games` games with ids g<start>..."""
    from corpus_logs import game_lines, write_log

    def make(name: str = "a.jsonl", games: int = 2, first: int = 0) -> Path:
        return write_log(tmp_path / name,
                         [game_lines(f"g{first + i}", seed=first + i) for i in range(games)])

    return make
