"""Roll-out policies: how an agent moves where no value or tree guides it.

A roll-out policy picks one agent's action: `choose(state, agent, actions, rng) -> Action`.
Typed roll-outs (Dobre & Lascarides 2017) draw an action type first, so that an agent with forty
`move` actions and one `build city` does not almost always move.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

import numpy as np

from nlmcs.games.base import Action, AgentId, State


class RolloutPolicy(Protocol):
    def choose(self, state: State, agent: AgentId, actions: Sequence[Action],
               rng: np.random.Generator) -> Action: ...


class UniformRollout:
    """Every legal action equally likely."""

    def choose(self, state: State, agent: AgentId, actions: Sequence[Action], rng) -> Action:
        return actions[int(rng.integers(len(actions)))]


class TypedRollout:
    """An action type (uniformly, or by `type_weights`), then an action of that type uniformly."""

    def __init__(self, type_weights: Mapping[str, float] | None = None):
        self.type_weights = dict(type_weights) if type_weights else None

    def choose(self, state: State, agent: AgentId, actions: Sequence[Action], rng) -> Action:
        by_type: dict[str, list[Action]] = {}
        for a in actions:
            by_type.setdefault(state.action_type(a), []).append(a)
        types = list(by_type)
        if self.type_weights is None:
            t = types[int(rng.integers(len(types)))]
        else:
            w = np.array([max(self.type_weights.get(t, 0.0), 0.0) for t in types])
            w = w + 1e-6 if w.sum() <= 0 else w
            t = types[int(rng.choice(len(types), p=w / w.sum()))]
        group = by_type[t]
        return group[int(rng.integers(len(group)))]


class ScriptedMoves:
    """A game's scripted player (`Policy.joint_action`) asked agent by agent: the move it gives
    an agent on this state, computed once per state and turn for the agent's whole side. It
    serves the trees as a roll-out policy (`ScriptedRollout`) and a PUCT prior
    (`ScriptedPrior`)."""

    def __init__(self, policy):
        self.policy = policy
        self._state = None
        self._turn = None
        self._moves: dict[AgentId, Action] = {}

    def move(self, state: State, agent: AgentId, rng: np.random.Generator) -> Action | None:
        if self._state is not state or self._turn != state.turn:
            self._state, self._turn, self._moves = state, state.turn, {}
        if agent not in self._moves:
            for player in range(state.num_players):
                if agent in state.agents(player):
                    self._moves.update(self.policy.joint_action(state, player, rng))
                    break
        return self._moves.get(agent)


class ScriptedRollout:
    """The scripted player's move where it gives one among `actions`, else uniformly."""

    def __init__(self, policy):
        self.moves = ScriptedMoves(policy)

    def choose(self, state: State, agent: AgentId, actions: Sequence[Action], rng) -> Action:
        move = self.moves.move(state, agent, rng)
        return move if move in actions else actions[int(rng.integers(len(actions)))]


class ScriptedPrior:
    """A PUCT prior: all on the scripted player's move (the floor of `prior_floor` keeps the
    others searchable). Its own stream for the script's tie-breaks, from `seed`, so the prior
    draws nothing from the search's."""

    def __init__(self, policy, seed: int = 0):
        self.moves = ScriptedMoves(policy)
        self.rng = np.random.default_rng(np.random.SeedSequence([seed, 3]))

    def __call__(self, state: State, agent: AgentId, actions: list[Action]) -> list[float]:
        move = self.moves.move(state, agent, self.rng)
        return [1.0 if a == move else 0.0 for a in actions]


def make_rollout_policy(kind: str, type_weights: Mapping[str, float] | None = None
                        ) -> RolloutPolicy:
    if kind == "uniform":
        return UniformRollout()
    if kind == "typed":
        return TypedRollout(type_weights)
    raise ValueError(f"unknown roll-out policy {kind!r}")
