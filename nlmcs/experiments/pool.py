"""A local pool of game processes that never outlives the command that started it.

Workers are set up by `nlmcs.search.workers.worker_setup` (Ctrl-C left to the parent, quiet
death on SIGTERM or when the parent dies). Leaving the `local_pool` block by an exception stops
the workers at once instead of waiting for the games in flight; a worker that dies mid-game
surfaces as `BrokenProcessPool` rather than a hang. Used by `nlmcs ablation run` and
`nlmcs corpus record`.
"""

from __future__ import annotations

import multiprocessing as mp
import os
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager

from nlmcs.errors import UserInputError
from nlmcs.search.workers import worker_setup


def usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@contextmanager
def local_pool(workers: int) -> Iterator[ProcessPoolExecutor]:
    """A pool of `workers` spawned processes; on any exception its workers are stopped at once
    (games in flight are lost, nothing stored is touched)."""
    if workers < 1:
        raise UserInputError(f"--workers must be at least 1, got {workers}")
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn"),
                               initializer=worker_setup, initargs=(os.getpid(),))
    try:
        yield pool
    except BaseException:
        _stop_now(pool)
        raise
    pool.shutdown(wait=True)


def _stop_now(pool: ProcessPoolExecutor) -> None:
    # Python 3.11 has no public way to stop a pool's running workers (3.14 adds
    # terminate_workers); without it, exit would wait for every game in flight to finish.
    procs = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        if proc.is_alive():
            proc.terminate()
    for proc in procs:
        proc.join(timeout=5)
        if proc.is_alive():
            proc.kill()
            proc.join(timeout=5)
    # The pool's manager thread joins the same workers: one it reaped may not carry its exit
    # code yet, and would still count as a live child. Wait for that thread to finish.
    if manager is not None:
        manager.join(timeout=10)
