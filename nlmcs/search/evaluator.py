"""The seam between the Monte-Carlo loop and a value model (after OpenSpiel's `Evaluator`).

`Evaluator` is all the loop asks of a model, in four methods: forget the last real step, the Q of
candidates, the datapoint of a chosen action, learn from a finished roll-out. What some models
offer beyond that is asked for by type, never by a hidden attribute:

- `WarmsUp`: compiled code to load before anything is timed;
- `Explains`: the model's side of a decision record (what it read to value a move);
- `Replica`: what the in-step roll-out worker processes (`nlmcs.search.workers`, `play
  --workers N`) need of the copies they hold: a roll-out's datapoints prepared once, in the
  process that played it, and ways to bring a copy up to date and to share scores.

A model that is not a `Replica` searches in one process (every experiment plays one process a
game anyway). The text-grounded network is all four (`nlmcs.model.evaluator`);
`ConstantEvaluator` (Q = 0, no learning) is only an `Evaluator`, and turns the loop into plain
epsilon-random roll-outs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from nlmcs.errors import UserInputError
from nlmcs.games.base import Action, AgentId, Picks, State

Candidates = Sequence[tuple[AgentId, Sequence[Action]]]


@runtime_checkable
class Evaluator(Protocol):
    def reset(self) -> None:
        """Forget what the value function learned for the last real step."""

    def q_values(
        self,
        state: State,
        candidates: Candidates,
        *,
        sampled: bool,
        rng: np.random.Generator,
    ) -> tuple[list[np.ndarray], list[list[object]] | None]:
        """Q of each action of each agent; with `sampled`, also each candidate's datapoint.
        Unsampled, nothing is drawn from `rng` and an agent's Q depends on its own candidates
        alone, so the loop may ask agent by agent (only of agents that do not explore)."""

    def datapoint(self, state: State, agent: AgentId, action: Action, rng) -> object:
        """A training datapoint for the chosen action (hidden units drawn now)."""

    def learn(self, datapoints: object, reward: float) -> None:
        """Learn from one roll-out's datapoints (a `Replica`: their `prepare`d form) and its
        reward."""


class ChoosesTurns(Protocol):
    """An evaluator that may choose a whole simulated turn on a board state in compiled code
    (`RolloutCore.joint_move` asks it where `compiled_turns` holds)."""

    compiled_turns: bool

    def board_joint(self, state: State, player: int, eps: float, rng: np.random.Generator, *,
                    learn: bool, datapoints: list) -> Picks | None:
        """`joint_move` of one turn without a root bias and with E[Q]: the same draws, the
        chosen candidates' datapoints appended with `learn`; None (nothing drawn) where it
        cannot choose on this state."""

    def board_turns(self, state: State, player: int, eps: float, rng: np.random.Generator, *,
                    depth: int, end: int, learn_until: int, datapoints: list,
                    root: list | None = None) -> int:
        """The turns `depth`..`end` - 1 of a roll-out (without a root bias) chosen as
        `board_joint` would and played on the board, many per compiled call; the datapoints
        of turns before `learn_until` appended, and turn 0's `Picks` to `root` where it played
        it. Returns the depth reached: `end`, the game's end, or a turn it cannot choose (then
        `board_joint`'s caller plays it)."""


@runtime_checkable
class WarmsUp(Protocol):
    def warm_up(self) -> None:
        """Load whatever the model loads lazily (compiled code), before anything is timed."""


@runtime_checkable
class Explains(Protocol):
    def explain(self, state: State, agent: AgentId, action: Action, rng) -> dict:
        """The model's side of one decision record (what it read to value `action`), merged
        into the decision log."""


@runtime_checkable
class Replica(Protocol):
    def prepare(self, datapoints: Sequence[object]) -> object:
        """One roll-out's datapoints made ready to learn from, in the process that played it
        (what is shipped to every replica instead of the datapoints; independent of the
        weights)."""

    def shared_memory(self, ctx, workers: int) -> object | None:
        """Memory the workers' replicas share scores through, made before they start; None
        when the model shares nothing."""

    def share_scores(self, memory: object, worker: int, workers: int) -> None:
        """In worker `worker`: look up and publish scores in `shared_memory`'s memory."""

    def learned(self) -> object:
        """Everything learning has changed, picklable: another replica's `load_learned` makes
        it identical to this one (cheaper than replaying the updates)."""

    def load_learned(self, learned: object) -> None:
        """Become identical to the replica whose `learned()` this is."""

    def keep_changes(self) -> None:
        """From now on, keep what a replica identical to this one holds (for `changes`)."""

    def changes(self) -> object:
        """What learning changed since `keep_changes` or the last call, picklable: a replica
        identical to this one then, and reset alike since, becomes identical again with
        `load_changes` (cheaper to ship than `learned` when little moved)."""

    def load_changes(self, changes: object) -> None:
        """Become identical to the replica whose `changes()` these are."""


def check_replicable(evaluator: Evaluator, workers: int) -> None:
    """Roll-outs in `workers` > 1 processes need an evaluator that replicates."""
    if workers > 1 and not isinstance(evaluator, Replica):
        raise UserInputError(f"--workers {workers}: {type(evaluator).__name__} cannot be "
                             "copied into roll-out workers; search with --workers 1")


class ConstantEvaluator:
    """Q = 0 everywhere and nothing to learn."""

    def reset(self) -> None:
        pass

    def q_values(self, state, candidates, *, sampled, rng):
        qs = [np.zeros(len(actions)) for _, actions in candidates]
        return qs, ([[None] * len(a) for _, a in candidates] if sampled else None)

    def datapoint(self, state, agent, action, rng):
        return None

    def learn(self, datapoints, reward) -> None:
        pass
