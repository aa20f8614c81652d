"""The seam between the Monte-Carlo loop and a value model (after OpenSpiel's `Evaluator`).

`Evaluator` is what the loop asks: the Q of every candidate action of every agent of a simulated
step (one batched call, or agent by agent), the datapoint of a chosen action, and learning from a
finished roll-out (the process that played it prepares its datapoints once, and every replica
learns from the prepared form). `Replica` is what the roll-out worker processes ask of the
replicas they each hold (`nlmcs.search.workers`): to bring the parent's copy up to date cheaply
and to share scores. The text-grounded network is one evaluator (`nlmcs.model.evaluator`);
`ConstantEvaluator` (Q = 0, no learning) turns the loop into plain epsilon-random roll-outs and
is what the loop's tests use.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from nlmcs.games.base import Action, AgentId, State

Candidates = Sequence[tuple[AgentId, Sequence[Action]]]


class Evaluator(Protocol):
    def warm_up(self) -> None:
        """Load whatever the model loads lazily (compiled code), before anything is timed."""

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
        """Q of each action of each agent; with `sampled`, also each candidate's datapoint."""

    def agent_q(self, state: State, agent: AgentId, actions: Sequence[Action]) -> np.ndarray:
        """`q_values` of one agent, not sampled."""

    def datapoint(self, state: State, agent: AgentId, action: Action, rng) -> object:
        """A training datapoint for the chosen action (hidden units drawn now)."""

    def prepare(self, datapoints: Sequence[object]) -> object:
        """One roll-out's datapoints made ready to learn from, in the process that played it
        (what is shipped to every replica instead of the datapoints)."""

    def learn(self, prepared: object, reward: float) -> None:
        """Learn from one prepared roll-out and its reward."""

    def explain(self, state: State, agent: AgentId, action: Action, rng) -> dict:
        """The model's side of one decision record (what it read to value `action`), merged
        into the decision log; {} when it has nothing to add."""


class Replica(Protocol):
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


class ReplicatedEvaluator(Evaluator, Replica, Protocol):
    """An evaluator whose roll-outs may run in worker processes."""


class ConstantEvaluator:
    """Q = 0 everywhere and nothing to learn."""

    def warm_up(self) -> None:
        pass

    def reset(self) -> None:
        pass

    def agent_q(self, state, agent, actions) -> np.ndarray:
        return np.zeros(len(actions))

    def q_values(self, state, candidates, *, sampled, rng):
        qs = [np.zeros(len(actions)) for _, actions in candidates]
        return qs, ([[None] * len(a) for _, a in candidates] if sampled else None)

    def datapoint(self, state, agent, action, rng):
        return None

    def prepare(self, datapoints):
        return None

    def learn(self, prepared, reward) -> None:
        pass

    def explain(self, state, agent, action, rng) -> dict:
        return {}

    def shared_memory(self, ctx, workers: int) -> None:
        return None

    def share_scores(self, memory, worker: int, workers: int) -> None:
        pass

    def learned(self) -> None:
        return None

    def load_learned(self, learned) -> None:
        pass

    def keep_changes(self) -> None:
        pass

    def changes(self) -> None:
        return None

    def load_changes(self, changes) -> None:
        pass
