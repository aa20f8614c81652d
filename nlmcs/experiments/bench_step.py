"""Where a learned method's real step spends its time, and what a second worker could save.

Library side of `nlmcs bench step`. The planner runs in this process (one worker) with its
evaluator and its roll-outs' opponents behind a stopwatch (`TimedEvaluator`, `TimedOpponents`):
the network's jobs and the opponent's moves are timed where they happen, and so is, where the
roll-outs play on the compiled engine's board, everything they ask of it (`BOARD_CALLS`); what is
left of the step is the roll-out loop and, on the Python engine, the engine applying the moves
and answering the search's questions. The step's roll-outs are then
learned again from the weights the step started with (`replay`): the sweeps timed alone, which
is steadier than a whole step on a busy machine, and a check that the replay ends on the
step's weights to the last bit.

What W workers could do at best (`StepTimes.ceiling`) is worked out from the step's own roll-outs:
each batch's roll-outs are handed, in index order, to whichever worker is free, the batch waits
for its last one, and then every replica learns every roll-out of the batch
(`nlmcs.search.workers`). Roll-outs differ in length several-fold, so the batch's end, not only
the learning, keeps two workers from halving a step.
"""

from __future__ import annotations

import heapq
import time
from collections import Counter
from dataclasses import dataclass

import numpy as np

from nlmcs.search.config import SearchConfig

PARTS = {
    "agent_q": "Q of candidates (signatures, scoring)",
    "q_values": "Q of every candidate, sampled",
    "datapoint": "datapoints sampled",
    "prepare": "update rows prepared",
    "learn": "learning sweeps",
    "opponent": "opponent's moves in roll-outs",
    "prior": "policy prior (text reader, corpus)",
    "board": "engine on the board (moves, labels)",
    "turn": "compiled turns (Q, choices, datapoints, play)",
}
"""The parts a step is split into, in print order, with their names in the table. Each part's
seconds leave out the parts timed inside it (the board's labels asked for inside Q of
candidates count as the board's). Rows written before the "board" part existed (their
`board_*` cells empty) counted the board inside Q of candidates, the datapoints and the
rest."""

LATER_PARTS = ("board", "turn")
"""Parts that joined `nlmcs bench step --out`'s table after its first columns: theirs come
last, so older tables still take new rows."""

BOARD_CALLS = ("agents", "agent_actions", "agent_keys", "legal_actions", "candidates_key",
               "candidate_labels", "actions_labels", "action_labels", "state_labels",
               "agent_labels", "action_type", "play_turn", "is_terminal", "winner", "score",
               "stats", "clone")
"""What a roll-out asks of a board state: with the board made for it, the compiled engine's
part of a step."""


class Stopwatch:
    """Seconds and calls per part, cleared at the start of every real step. A part's seconds
    leave out those of the parts timed inside it, so the parts add up to no more than the
    step."""

    def __init__(self):
        self.seconds: Counter = Counter()
        self.calls: Counter = Counter()
        self.last = 0.0  # seconds of the last call timed, the parts inside it included
        self._inside = [0.0]  # per open call: seconds of the timed calls inside it

    def run(self, name: str, fn, *args, **kwargs):
        self._inside.append(0.0)
        t = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            self.last = time.perf_counter() - t
            inside = self._inside.pop()
            self._inside[-1] += self.last
            self.seconds[name] += self.last - inside
            self.calls[name] += 1

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
        self.learn_seconds: list[float] = []  # each of them learned, in learning order
        self.rollout_seconds: list[float] = []  # each roll-out played (`time_rollouts`)
        self.start = None  # the learned state before the step's first update

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def _timed(self, name: str, *args, **kwargs):
        return self.clock.run(name, getattr(self.inner, name), *args, **kwargs)

    def reset(self) -> None:
        self.inner.reset()
        self.clock.clear()
        self.learned = []
        self.learn_seconds = []
        self.rollout_seconds = []
        self.start = None

    def q_values(self, state, candidates, *, sampled, rng):
        part = "q_values" if sampled else "agent_q"  # unsampled: asked agent by agent
        return self.clock.run(part, self.inner.q_values, state, candidates, sampled=sampled,
                              rng=rng)

    def datapoint(self, state, agent, action, rng):
        return self._timed("datapoint", state, agent, action, rng)

    def board_joint(self, state, player, eps, rng, *, learn, datapoints):
        return self.clock.run("turn", self.inner.board_joint, state, player, eps, rng,
                              learn=learn, datapoints=datapoints)

    def board_turns(self, state, player, eps, rng, **kwargs):
        return self.clock.run("turn", self.inner.board_turns, state, player, eps, rng, **kwargs)

    def prepare(self, datapoints):
        return self._timed("prepare", datapoints)

    def learn(self, prepared, reward) -> None:
        if self.start is None:
            self.start = _copy(self.inner.learned())
        self.learned.append((prepared, reward))
        self._timed("learn", prepared, reward)
        self.learn_seconds.append(self.clock.last)

    def time_rollouts(self, core) -> None:
        """Time each roll-out `core` plays (what the step's batches are made of)."""
        run, clock = core.run, self.clock

        def timed_run(*args, **kwargs):
            out = clock.run("roll-out", run, *args, **kwargs)
            self.rollout_seconds.append(clock.last)
            return out

        core.run = timed_run


class TimedOpponents:
    """The roll-outs' opponents (`nlmcs.search.rollout.Opponents`) with their moves timed."""

    def __init__(self, inner, clock: Stopwatch):
        self.inner = inner
        self.clock = clock
        self._timed: dict[int, Timed] = {}

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def board_state(self, *args, **kwargs):
        """The roll-out's board state with what the search asks of it timed ("board"; the
        opponent moves inside the board's turn, so its moves are the board's there)."""
        if self.inner.engine != "compiled":  # no board: nothing of the engine to time here
            return None
        board = self.clock.run("board", self.inner.board_state, *args, **kwargs)
        return None if board is None else Timed(board, self.clock, "board", BOARD_CALLS)

    def of(self, state, player: int) -> dict:
        out = {}
        for p, policy in self.inner.of(state, player).items():
            timed = self._timed.get(id(policy))
            if timed is None or timed.inner is not policy:
                timed = self._timed[id(policy)] = Timed(policy, self.clock, "opponent",
                                                        ("joint_action",))
            out[p] = timed
        return out


class Timed:
    """`inner` with the calls of `methods` timed as `part`; everything else passes through."""

    def __init__(self, inner, clock: Stopwatch, part: str, methods: tuple[str, ...]):
        self.inner = inner
        self.clock = clock
        self.part = part
        self.methods = methods

    def __getattr__(self, name):
        found = getattr(self.inner, name)
        if name not in self.methods:
            return found
        clock, part = self.clock, self.part
        return lambda *args, **kwargs: clock.run(part, found, *args, **kwargs)


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
    batch: int = 10  # roll-outs per weight snapshot (`SearchConfig.batch`)
    rollout_seconds: tuple[float, ...] = ()  # each roll-out played, in index order
    learn_seconds: tuple[float, ...] = ()  # each roll-out learned, in index order

    @property
    def rest(self) -> float:
        """The step less the parts: the roll-out loop, and on the Python engine the engine
        applying the moves and answering the search's questions."""
        return self.seconds - sum(self.parts.values())

    def ceiling(self, workers: int) -> float:
        """The least seconds per step with `workers` workers if nothing were added to the work
        (no exchanges, no scores computed twice): each batch's roll-outs handed out in index
        order to whichever worker is free, the batch done when its last roll-out is, then
        learned by every replica; the rest of the step as it was. Without per-roll-out times:
        (step - learning) / workers + learning."""
        learn = self.parts.get("learn", 0.0)
        play = self.rollout_seconds
        if not play or len(self.learn_seconds) != len(play):
            return (self.seconds - learn) / workers + learn
        out = self.seconds - sum(play) - sum(self.learn_seconds)
        for lo in range(0, len(play), self.batch):
            out += makespan(play[lo : lo + self.batch], workers)
            out += sum(self.learn_seconds[lo : lo + self.batch])
        return out


def rollout_spread(rows: list[StepTimes]) -> tuple[float, float, float] | None:
    """Milliseconds a roll-out took over these steps: median, 90th percentile, longest (None
    without per-roll-out times): how far a batch may wait for its last one."""
    played = [s for row in rows for s in row.rollout_seconds]
    if not played:
        return None
    return tuple(float(x) for x in np.percentile(np.array(played) * 1e3, [50, 90, 100]))


def makespan(seconds, workers: int) -> float:
    """When the last of these jobs ends if each goes, in order, to the first worker free."""
    free = [0.0] * workers
    for s in seconds:
        heapq.heapreplace(free, free[0] + s)
    return max(free)


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
    timed.time_rollouts(core)
    if core.prior is not None:
        prior = core.prior
        core.prior = lambda *args: clock.run("prior", prior, *args)
    planner.choose(state.clone(), 0, np.random.default_rng(seed))  # warm-up, untimed
    out = []
    for k in range(steps):
        t = time.perf_counter()
        planner.choose(state.clone(), 0, np.random.default_rng(seed + 1 + k))
        seconds = time.perf_counter() - t
        parts = {name: clock.seconds[name] for name in PARTS if clock.calls[name]}
        calls = {name: clock.calls[name] for name in PARTS if clock.calls[name]}
        replay_seconds, same = replay(timed)
        row = StepTimes(seconds, parts, calls, cfg.rollouts, replay_seconds, same, cfg.batch,
                        tuple(timed.rollout_seconds), tuple(timed.learn_seconds))
        out.append(row)
        if on_step is not None:
            on_step(k, row)
    return out
