"""The one job loop: plays jobs on any `concurrent.futures.Executor` and stores each as it ends.

A local process pool and a Dask cluster (`distributed.Client.get_executor()`) offer the same
interface, so one loop serves both (and no executor plays the jobs in this process, one by one):
it keeps a bounded number of jobs in flight (a job may carry a manual, so the window also bounds
what is queued on a scheduler), hands each finished result to the store at once, and on an
interrupt or a lost worker cancels what is left. What was stored stays; a re-run plays only the
missing jobs. A base module: the ablations, the advice audit, the reader's labels, corpus
recording and the network's self-play and judging all play their games here.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from typing import Protocol

from nlmcs.errors import UserInputError, WorkerExited

log = logging.getLogger(__name__)


class WorkerLost(WorkerExited):
    """A worker died mid-job (killed, out of memory, a lost cluster node): the results stored
    so far are safe and a re-run resumes (the CLI says so in one line)."""


class Store(Protocol):
    """Where `run_jobs` keeps each result (`nlmcs.runs.JsonLinesStore`, or a feature's own)."""

    noun: str
    stored: int

    @property
    def where(self) -> object: ...

    def describe(self, job) -> str: ...

    def keep(self, job, result) -> None: ...


_END = object()


def run_jobs(jobs: Iterable, fn: Callable, store: Store, executor: Executor | None = None, *,
             max_in_flight: int | None = 2, order: Callable | None = None) -> None:
    """Play `fn(job)` for every job and hand each result to `store.keep(job, result)` as it
    ends. Jobs are taken from `jobs` only as they are submitted (a generator may build each
    one then); at most `max_in_flight` are in flight (None: all). Results that end together
    are kept in `order` (a key of the job; default: submission order), every one before a
    failure among them is acted on. An exception (an interrupt, a lost worker as `WorkerLost`,
    a failing job) cancels the jobs not yet finished and propagates; what was stored stays."""
    todo = iter(jobs)
    if executor is None:
        for job in todo:
            store.keep(job, fn(job))
        return
    in_flight: dict[Future, tuple[int, object]] = {}
    submitted = 0

    def lost(job, err: BaseException) -> WorkerLost:
        return WorkerLost(
            f"a worker died during {store.describe(job)} ({type(err).__name__}); {store.stored} "
            f"{store.noun} are stored in {store.where}; re-run the same command to resume")

    def fill() -> None:
        """Submit jobs until the window is full or none is left."""
        nonlocal submitted
        while max_in_flight is None or len(in_flight) < max(1, max_in_flight):
            job = next(todo, _END)
            if job is _END:
                return
            try:
                in_flight[executor.submit(fn, job)] = (submitted, job)
            except BaseException as err:
                # A pool can break between a finished job and the next submission.
                if is_lost_worker(err):
                    raise lost(job, err) from err
                raise
            submitted += 1

    def sort_key(pair):
        (seq, job), _ = pair
        return seq if order is None else order(job)

    try:
        fill()
        while in_flight:
            finished, _ = wait(list(in_flight), return_when=FIRST_COMPLETED)
            failure = None
            # Store every job that did finish before acting on one that failed.
            for (_, job), outcome in sorted(((in_flight.pop(f), f) for f in finished),
                                            key=sort_key):
                try:
                    result = outcome.result()
                except BaseException as err:
                    failure = failure or (job, err)
                    continue
                store.keep(job, result)
            # Drop finished futures now: a Dask cluster keeps (and recomputes, should a
            # worker die) the results of futures still referenced.
            del finished, outcome
            if failure is not None:
                job, err = failure
                if is_lost_worker(err):
                    raise lost(job, err) from err
                raise err
            fill()
    finally:
        for future in in_flight:
            future.cancel()


def is_lost_worker(err: BaseException) -> bool:
    if isinstance(err, BrokenProcessPool):
        return True
    distributed = sys.modules.get("distributed")
    return distributed is not None and isinstance(err, distributed.KilledWorker)


# --- executors ----------------------------------------------------------------------------------
@contextmanager
def local_executor(workers: int) -> Iterator[Executor | None]:
    """A local pool of `workers` processes (`nlmcs.processes.local_pool`), or None (play in
    this process) for one worker."""
    if workers <= 1:
        yield None
        return
    from nlmcs.processes import local_pool

    with local_pool(workers) as pool:
        yield pool


@contextmanager
def dask_executor(address: str, *, timeout: float = 5.0,
                  pin: bool = True) -> Iterator[tuple[Executor, int]]:
    """(executor, worker threads) of the Dask scheduler at `address`; a scheduler that does not
    answer within `timeout` seconds is a `UserInputError`. With `pin`, every connected worker
    process is pinned to one BLAS/torch thread (`Client.run`)."""
    try:
        from distributed import Client
    except ImportError as err:  # the dask extra (`make setup` installs it)
        raise UserInputError("--scheduler needs Dask's 'distributed' package: pip install "
                             "'nlmcs[dask]'") from err
    try:
        client = Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError) as err:
        raise UserInputError(f"no Dask scheduler answers at {address} within {timeout:g} s "
                             f"({type(err).__name__})") from err  # fmt: skip
    except ValueError as err:
        raise UserInputError(f"bad Dask scheduler address {address!r} ({err})") from err
    try:
        if pin:
            from nlmcs.processes import pin_threads

            client.run(pin_threads)
        threads = sum(client.nthreads().values())
        if not threads:
            log.warning("the Dask scheduler at %s has no workers yet; games wait for them",
                        address)
        yield client.get_executor(), max(1, threads)
    finally:
        client.close()
