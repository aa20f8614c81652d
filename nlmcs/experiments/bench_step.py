"""Where a learned method's real step spends its time, and what a second worker could save.

Library side of `nlmcs bench step`. The planner runs in this process (one worker) with its
evaluator and its roll-outs' opponents behind a stopwatch (`TimedEvaluator`, `TimedOpponents`):
the network's jobs and the opponent's moves are timed where they happen, and what is left of
the step is the engine applying the moves and the roll-out loop. The step's roll-outs are then
learned again from the weights the step started with (`replay`): the sweeps timed alone, which
is steadier than a whole step on a busy machine, and a check that the replay ends on the
step's weights to the last bit.

Every replica of a multi-worker search learns every roll-out (`nlmcs.search.workers`), so with W
workers a step takes at least (step - learning) / W + learning: the ceiling printed here.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass

import numpy as np

from nlmcs.search.config import SearchConfig

PARTS = {
    "agent_q": "Q of candidates (signatures, scoring)",
    "q_values": "Q of candidates, sampled or stale",
    "datapoint": "datapoints sampled",
    "prepare": "update rows prepared",
    "learn": "learning sweeps",
    "opponent": "opponent's moves in roll-outs",
}
"""The parts a step is split into, in print order, with their names in the table."""


class Stopwatch:
    """Seconds and calls per part, cleared at the start of every real step."""

    def __init__(self):
        self.seconds: Counter = Counter()
        self.calls: Counter = Counter()

    def run(self, name: str, fn, *args, **kwargs):
        t = time.perf_counter()
        out = fn(*args, **kwargs)
        self.seconds[name] += time.perf_counter() - t
        self.calls[name] += 1
        return out

    def clear(self) -> None:
        self.seconds.clear()
        self.calls.clear()


class TimedEvaluator:
    """An evaluator that times its jobs (`PARTS`) and keeps the step's roll-outs to learn again;
    everything else passes through."""

    def __init__(self, inner, clock: Stopwatch):
        self.inner = inner
        self.clock = clock
        self.learned: list[tuple] = []  # (prepared rows, reward) of this step, in learning order
        self.start = None  # the learned state before the step's first update

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def _timed(self, name: str, *args, **kwargs):
        return self.clock.run(name, getattr(self.inner, name), *args, **kwargs)

    def reset(self) -> None:
        self.inner.reset()
        self.clock.clear()
        self.learned = []
        self.start = None

    def agent_q(self, state, agent, actions):
        return self._timed("agent_q", state, agent, actions)

    def q_values(self, state, candidates, **kwargs):
        return self._timed("q_values", state, candidates, **kwargs)

    def datapoint(self, state, agent, action, rng):
        return self._timed("datapoint", state, agent, action, rng)

    def prepare(self, datapoints):
        return self._timed("prepare", datapoints)

    def learn(self, prepared, reward) -> None:
        if self.start is None:
            self.start = _copy(self.inner.learned())
        self.learned.append((prepared, reward))
        self._timed("learn", prepared, reward)


class TimedOpponents:
    """The roll-outs' opponents (`nlmcs.search.rollout.Opponents`) with their moves timed."""

    def __init__(self, inner, clock: Stopwatch):
        self.inner = inner
        self.clock = clock
        self._timed: dict[int, _TimedPolicy] = {}

    def of(self, state, player: int) -> dict:
        out = {}
        for p, policy in self.inner.of(state, player).items():
            timed = self._timed.get(id(policy))
            if timed is None or timed.inner is not policy:
                timed = self._timed[id(policy)] = _TimedPolicy(policy, self.clock)
            out[p] = timed
        return out


class _TimedPolicy:
    def __init__(self, inner, clock: Stopwatch):
        self.inner = inner
        self.clock = clock

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def joint_action(self, state, player: int, rng):
        return self.clock.run("opponent", self.inner.joint_action, state, player, rng)


def _copy(learned: tuple) -> tuple:
    return tuple(x.copy() if isinstance(x, np.ndarray) else x for x in learned)


@dataclass
class StepTimes:
    """One timed real step: seconds, seconds and calls per part, the sweeps learned again."""

    seconds: float
    parts: dict[str, float]
    calls: dict[str, int]
    rollouts: int
    replay_seconds: float
    replay_same: bool

    @property
    def rest(self) -> float:
        """The engine applying the moves and the roll-out loop: the step less the parts."""
        return self.seconds - sum(self.parts.values())

    def ceiling(self, workers: int) -> float:
        """The least seconds per step with `workers` workers if the roll-outs split perfectly
        and nothing else were added: every replica still learns every roll-out."""
        learn = self.parts.get("learn", 0.0)
        return (self.seconds - learn) / workers + learn


def replay(evaluator: TimedEvaluator) -> tuple[float, bool]:
    """Learn the step's roll-outs again from its starting weights: (seconds, whether the weights
    come out equal to the step's to the last bit). The evaluator ends as the step left it."""
    if evaluator.start is None:
        return 0.0, True
    inner = evaluator.inner
    end = _copy(inner.learned())
    inner.load_learned(evaluator.start)
    t = time.perf_counter()
    for prepared, reward in evaluator.learned:
        inner.learn(prepared, reward)
    seconds = time.perf_counter() - t
    got = inner.learned()
    same = all(np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b
               for a, b in zip(got, end, strict=True))
    inner.load_learned(end)
    return seconds, same


def bench_step(planner, state, *, steps: int, seed: int, on_step=None) -> list[StepTimes]:
    """Time `steps` real steps of an MC planner from `state` (each from the same position, after
    one untimed warm-up step), splitting each into the evaluator's jobs and the rest."""
    cfg: SearchConfig = planner.config
    if cfg.workers != 1:
        raise ValueError("bench_step times the evaluator in this process: one worker only")
    clock = Stopwatch()
    core = planner.core  # the one-worker executor runs this core
    timed = core.evaluator = TimedEvaluator(core.evaluator, clock)
    core.opponents = TimedOpponents(core.opponents, clock)
    planner.choose(state.clone(), 0, np.random.default_rng(seed))  # warm-up, untimed
    out = []
    for k in range(steps):
        t = time.perf_counter()
        planner.choose(state.clone(), 0, np.random.default_rng(seed + 1 + k))
        seconds = time.perf_counter() - t
        parts = {name: clock.seconds[name] for name in PARTS if clock.calls[name]}
        calls = {name: clock.calls[name] for name in PARTS if clock.calls[name]}
        replay_seconds, same = replay(timed)
        row = StepTimes(seconds, parts, calls, cfg.rollouts, replay_seconds, same)
        out.append(row)
        if on_step is not None:
            on_step(k, row)
    return out
