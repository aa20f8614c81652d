"""Worker processes of every command, and the local pool of game processes.

Every worker process of the project (the in-step roll-out workers of `nlmcs.search.workers`,
and the game pools here) is set up by `worker_setup`: one BLAS / OpenMP / torch thread
(parallelism is over processes); Ctrl-C reaches the whole process group, but only the parent
decides what to keep, so a worker ignores it; SIGTERM kills a worker quietly and takes the
temporaries it was writing with it (no half-written game log stays hidden in a store); and a
worker dies with its parent, so a `kill -9` of the command leaves none running.

`local_pool` never outlives the command that started it: leaving its block by an exception stops
the workers at once instead of waiting for the games in flight; a worker that dies mid-game
surfaces as `BrokenProcessPool` rather than a hang. A base module (it imports no feature), so
every feature that plays many games may use it.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing as mp
import os
import signal
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor

from nlmcs.errors import UserInputError

ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
"""What a worker's BLAS / OpenMP read as they load: one thread each."""


def pin_threads() -> None:
    """One BLAS / OpenMP thread in this process (and one torch thread if torch is loaded):
    parallelism is over processes. Only for worker processes: it lasts as long as the process.
    The environment variables reach libraries loaded later and processes started from here."""
    os.environ.update(ONE_THREAD)
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


@contextlib.contextmanager
def one_thread_environment():
    """The thread-count variables at 1 while worker processes start, then as they were: a
    spawned worker loads numpy (and its BLAS thread pool) before `worker_setup` runs, and only
    the variables make that pool one thread; the caller's own process keeps its threads.
    (Another thread of the caller that reads these variables meanwhile sees the 1s; two that
    start workers at once take turns, so neither saves the other's 1s as the caller's.)"""
    with _ENVIRONMENT:
        saved = {var: os.environ.get(var) for var in ONE_THREAD}
        os.environ.update(ONE_THREAD)
        try:
            yield
        finally:
            for var, value in saved.items():
                if value is None:
                    os.environ.pop(var, None)
                else:
                    os.environ[var] = value


_ENVIRONMENT = threading.Lock()


_PR_SET_PDEATHSIG = 1


def die_with_parent(parent_pid: int) -> None:
    """Have the kernel send SIGKILL to this process when its parent exits (Linux only)."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent_pid:  # the parent died before the request took effect
        os._exit(1)


def worker_setup(parent_pid: int) -> None:
    """First thing in a worker process: one thread, Ctrl-C left to the parent, SIGTERM fatal,
    quiet and tidy, death with the parent."""
    pin_threads()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, die_of_signal)
    die_with_parent(parent_pid)


def die_of_signal(signum, frame=None) -> None:
    """A worker's signal handler: remove what this process was writing, then die of the signal,
    quietly, as by default.
    (`nlmcs.files` sits on this layer; a worker that never loaded it has nothing to remove.)"""
    files = sys.modules.get("nlmcs.files")
    if files is not None:
        files.remove_open_temporaries()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@contextlib.contextmanager
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


def quiet_thread(thread: threading.Thread | None) -> None:
    """Let `thread` end by an exception without a traceback on stderr: the pool's manager
    thread, whose workers this process is killing, can fail on a pipe they closed (seen once
    in a test, as a "Thread-1" traceback after a clean SIGTERM exit); any other thread's
    exception is reported as before."""
    if thread is None:
        return
    previous = threading.excepthook

    def hook(args) -> None:
        if args.thread is not thread:
            previous(args)

    threading.excepthook = hook


def _stop_now(pool: ProcessPoolExecutor) -> None:
    # Python 3.11 has no public way to stop a pool's running workers (3.14 adds
    # terminate_workers); without it, exit would wait for every game in flight to finish.
    procs = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)
    quiet_thread(manager)
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
