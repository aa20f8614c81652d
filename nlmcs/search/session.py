"""One game of a planner against a scripted opponent, and the per-step search benchmark.

Library side of `nlmcs play` and `nlmcs bench search`: keyword-only functions that return
results; the commands print them.
"""

from __future__ import annotations

import json
import os
import resource
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from nlmcs.games.base import step as play_step
from nlmcs.model.config import ModelConfig
from nlmcs.search.config import SearchConfig
from nlmcs.search.methods import make_planner


@dataclass
class PlayResult:
    method: str
    seed: int
    steps: int
    winner: int | None
    finished: bool
    scores: list[float]
    seconds_per_step: list[float] = field(default_factory=list)

    def summary(self) -> dict:
        sec = self.seconds_per_step
        return {
            "method": self.method,
            "seed": self.seed,
            "steps": self.steps,
            "finished": self.finished,
            "winner": self.winner,
            "scores": [round(s, 2) for s in self.scores],
            "mean_seconds_per_step": round(float(np.mean(sec)), 3) if sec else None,
        }


def play(
    *,
    game,
    method: str,
    manual=None,
    opponent: str = "builtin",
    seed: int = 0,
    steps: int = 100,
    search_config: SearchConfig | None = None,
    model_config: ModelConfig | None = None,
    log_path: Path | None = None,
    on_step: Callable[[int, dict], None] | None = None,
) -> PlayResult:
    """Play `method` as player 0 against `game.policy(opponent)` for up to `steps` real steps.

    The opponent inside roll-outs is the same policy. With `log_path`, every decision record
    (per agent: candidate actions with Q, candidate sentences with probabilities, the sampled
    sentence and its word labels) goes to a JSON-lines file, written atomically at the end.
    """
    scfg = replace(search_config or SearchConfig(), opponent=opponent,
                   log_decisions=log_path is not None)  # fmt: skip
    planner = make_planner(method, game=game, manual=manual, search_config=scfg,
                           model_config=model_config or ModelConfig(), seed=seed)  # fmt: skip
    opponents = {p: game.policy(opponent) for p in range(1, game.num_players)}
    state = game.new_initial_state(seed)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 1]))
    result = PlayResult(method, seed, 0, None, False, [])
    tmp = None
    if log_path is not None:
        log_path = Path(log_path)
        fd, tmp = tempfile.mkstemp(prefix=f".{log_path.name}.", dir=log_path.parent or ".")
        log = os.fdopen(fd, "w")
    try:
        for t in range(steps):
            if state.is_terminal():
                break
            move = planner.choose(state, 0, rng)
            stats = dict(planner.last_stats)
            result.seconds_per_step.append(stats.get("seconds", 0.0))
            if tmp is not None:
                for rec in planner.last_log:
                    log.write(json.dumps(rec) + "\n")
            play_step(state, 0, move, opponents, rng)
            result.steps = t + 1
            if on_step is not None:
                on_step(t, {**stats, "scores": [state.score(p) for p in range(state.num_players)]})
    finally:
        planner.close()
        if tmp is not None:
            log.close()
            os.replace(tmp, log_path)
    result.finished = state.is_terminal()
    result.winner = state.winner()
    result.scores = [float(state.score(p)) for p in range(state.num_players)]
    return result


@dataclass
class BenchRow:
    method: str
    rollouts: int
    workers: int
    seconds: float
    cpu_seconds: float
    peak_mb: float


def bench_search(
    *,
    game,
    methods: Sequence[str],
    rollouts: Sequence[int],
    workers: Sequence[int],
    depth: int = 20,
    seed: int = 0,
    manual=None,
    opponent: str = "builtin",
    model_config: ModelConfig | None = None,
    on_row: Callable[[BenchRow], None] | None = None,
) -> list[BenchRow]:
    """Seconds for one real step from the seed's start position, per method, budget, workers.

    Planner start-up (worker processes, manual index) is not timed; CPU seconds add this
    process and its workers (start-up included for workers), which tells the cost apart from
    waiting on a busy machine; peak memory is the largest resident size of this process or of
    any worker so far (ru_maxrss).
    """
    state = game.new_initial_state(seed)
    rows = []
    for method in methods:
        for n in rollouts:
            for w in workers:
                cfg = SearchConfig(rollouts=n, depth=depth, workers=w, opponent=opponent)
                planner = make_planner(method, game=game, manual=manual, search_config=cfg,
                                       model_config=model_config, seed=seed)  # fmt: skip
                kids0 = _children_cpu()
                try:
                    t0, c0 = time.perf_counter(), time.process_time()
                    planner.choose(state.clone(), 0, np.random.default_rng(seed))
                    seconds = time.perf_counter() - t0
                    cpu = time.process_time() - c0
                finally:
                    planner.close()
                cpu += _children_cpu() - kids0  # workers count once they have exited
                peak = max(
                    resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                    resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
                )
                row = BenchRow(method, n, w, seconds, cpu, peak / 1024.0)
                rows.append(row)
                if on_row is not None:
                    on_row(row)
    return rows


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime
