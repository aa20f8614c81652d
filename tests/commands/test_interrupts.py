"""Ctrl-C, SIGTERM and a dead worker process end a command in one line, the signals whatever
code they land in, compiled kernels included: a signal handler that raises while a numba kernel
has called back into Python (boxing the arrays it returns) reaches the command as a SystemError
chained to the interrupt."""

from __future__ import annotations

import signal

import numpy as np
import pytest
from numba import njit

from nlmcs import cli
from nlmcs.commands import game
from nlmcs.errors import WorkerExited

ENGINE = ["bench", "engine", "--rollouts", "1", "--depth", "1", "--map", "tiny"]


@njit(cache=False)
def _two_arrays(x):
    return x * 2.0, x + 1.0


def _interrupt_inside_a_kernel() -> SystemError:
    """Raise from a timer's handler while a kernel runs, until it lands in numba's call back."""
    x = np.ones(3)
    _two_arrays(x)

    def on_alarm(signum, frame):
        raise cli.Terminated

    previous = signal.signal(signal.SIGALRM, on_alarm)
    try:
        for _ in range(5000):
            signal.setitimer(signal.ITIMER_REAL, 0.0002)
            try:
                while True:
                    _two_arrays(x)
            except SystemError as err:
                return err
            except cli.Terminated:
                continue  # it landed in plain Python: try again
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    pytest.skip("no interrupt landed inside the kernel's call back in 5,000 tries")


def test_an_interrupt_inside_a_kernel_is_found_behind_its_system_error():
    err = _interrupt_inside_a_kernel()
    assert isinstance(cli._interrupt_behind(err), cli.Terminated)


@pytest.mark.parametrize(("cause", "code", "line"), [
    (cli.Terminated, 143, "interrupted (SIGTERM)"),
    (KeyboardInterrupt, 130, "interrupted"),
])  # fmt: skip
def test_a_command_interrupted_inside_a_kernel_ends_in_one_line(cause, code, line, monkeypatch,
                                                                 capsys):
    def bench_cli(args):
        raise SystemError("CPUDispatcher(...) returned a result with an exception set") \
            from cause()

    monkeypatch.setattr(game, "bench_cli", bench_cli)
    assert cli.main(ENGINE) == code
    assert capsys.readouterr().err.strip().splitlines() == [line]


def test_a_system_error_without_an_interrupt_keeps_its_traceback(monkeypatch):
    def bench_cli(args):
        raise SystemError("a bug")

    monkeypatch.setattr(game, "bench_cli", bench_cli)
    with pytest.raises(SystemError, match="a bug"):
        cli.main(ENGINE)


def test_a_worker_that_dies_ends_the_command_in_one_line(monkeypatch, capsys):
    def bench_cli(args):
        raise WorkerExited("roll-out worker 1 (pid 7) was killed by signal 9 while playing a step")

    monkeypatch.setattr(game, "bench_cli", bench_cli)
    assert cli.main(ENGINE) == 1
    assert capsys.readouterr().err.strip().splitlines() == [
        "error: roll-out worker 1 (pid 7) was killed by signal 9 while playing a step"]
