"""Seconds per real step of each search method at each roll-out budget and worker count, for the
compiled (numba) and the reference (numpy) arithmetic of the value network.

Library side of `nlmcs bench search`.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import resource
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from nlmcs.experiments.positions import start_position
from nlmcs.games.base import Game
from nlmcs.methods import (
    CorpusOptions,
    NetOptions,
    ReaderOptions,
    get_method,
    make_planner,
)
from nlmcs.model.config import ModelConfig
from nlmcs.search.config import SearchConfig

RELEASE_SECONDS = {("text", 20): 4.9, ("text", 100): 16.4, ("text", 500): 76.5,
                   ("linear", 20): 3.7, ("linear", 100): 11.8, ("linear", 500): 49.4}
"""The 2011 C++ release's seconds per real step on two cores at depth 20 (docs/benchmarks.md)."""


@dataclass
class BenchRow:
    method: str
    rollouts: int
    workers: int
    backend: str
    seconds: float  # the first real step
    cpu_seconds: float  # per timed step
    peak_mb: float
    warm_seconds: float | None = None  # mean of the steps after the first (None: one step)


def bench_search(
    *,
    game: Game,
    methods: Sequence[str],
    rollouts: Sequence[int],
    workers: Sequence[int],
    backends: Sequence[str] = ("numba",),
    search_config: SearchConfig | None = None,
    seed: int = 0,
    manual=None,
    corpus: CorpusOptions | None = None,
    reader: ReaderOptions | None = None,
    net: NetOptions | None = None,
    opponent: str = "builtin",
    model_config: ModelConfig | None = None,
    steps: int = 1,
    start_turn: int = 0,
    on_row: Callable[[BenchRow], None] | None = None,
) -> list[BenchRow]:
    """Seconds for the first real step from the seed's start position (or from turn
    `start_turn` of the built-in AIs' game, `positions.start_position`), per method, budget,
    workers and backend (methods without a value network are timed once, as "-"); with `steps`
    above 1 the planner plays that many steps from the same position (step k's choices seeded
    seed + k) and the mean of all but the first is reported too: the first step also builds
    what later ones find cached, and one step is a noisy sample on a busy machine.

    Planner start-up (worker processes, manual index) is not timed; CPU seconds (per timed
    step) add this process and its workers (start-up included for workers), which tells the
    cost apart from waiting on a busy machine; peak memory is the largest resident size of
    this process or of any of the row's workers. On Linux each row's peak is its own: the
    previous row's planner is collected and this process's peak is started afresh
    (`fresh_peak`) before the row; elsewhere it is the largest so far (ru_maxrss).

    Each row searches with `search_config` (default `SearchConfig()`) at its own roll-out
    budget and worker count, against `opponent`.
    """
    state = start_position(game, seed=seed, turns=start_turn)
    base = model_config or ModelConfig()
    template = search_config or SearchConfig()
    rows = []
    for method in methods:
        learned = get_method(method).planner == "mc"
        for n in rollouts:
            for w in workers:
                for backend in (backends if learned else ("-",)):
                    cfg = replace(template, rollouts=n, workers=w, opponent=opponent)
                    mcfg = replace(base, backend=backend) if learned else base
                    gc.collect()  # the last row's planner (its caches) is not this row's
                    fresh = fresh_peak()
                    planner = make_planner(method, game=game, manual=manual, corpus=corpus,
                                           search_config=cfg, model_config=mcfg, seed=seed,
                                           reader=reader, net=net)
                    row = _time_steps(planner, state, seed, steps, (method, n, w, backend),
                                      fresh)
                    del planner
                    rows.append(row)
                    if on_row is not None:
                        on_row(row)
    return rows


def _time_steps(planner, state, seed: int, steps: int, key: tuple, fresh: bool) -> BenchRow:
    kids0 = _children_cpu()
    seconds = []
    peaks = None
    try:
        c0 = time.process_time()
        for k in range(steps):
            t0 = time.perf_counter()
            planner.choose(state.clone(), 0, np.random.default_rng(seed + k))
            seconds.append(time.perf_counter() - t0)
        cpu = time.process_time() - c0
        if fresh:  # the workers' peaks, read while they still run
            procs = getattr(getattr(planner, "executor", None), "procs", ())
            peaks = [peak_kib(p.pid) for p in procs] + [peak_kib()]
    finally:
        planner.close()
    cpu += _children_cpu() - kids0  # workers count once they have exited
    if peaks is not None and None not in peaks:
        peak = max(peaks)
    else:
        peak = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                   resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    warm = sum(seconds[1:]) / (steps - 1) if steps > 1 else None
    return BenchRow(*key, seconds[0], cpu / steps, peak / 1024.0, warm)


def fresh_peak() -> bool:
    """Start this process's peak resident size afresh from its present size (Linux:
    /proc/self/clear_refs), after handing the memory freed so far back to the system (glibc's
    malloc_trim: else the last row's freed heap would count as this row's); False where that
    cannot be done."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).malloc_trim(0)
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return peak_kib() is not None


def peak_kib(pid: int | str = "self") -> int | None:
    """The peak resident size of a process in KiB (Linux: VmHWM), None where unknown."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime
