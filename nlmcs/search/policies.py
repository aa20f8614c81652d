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


def make_rollout_policy(kind: str, type_weights: Mapping[str, float] | None = None
                        ) -> RolloutPolicy:
    if kind == "uniform":
        return UniformRollout()
    if kind == "typed":
        return TypedRollout(type_weights)
    raise ValueError(f"unknown roll-out policy {kind!r}")
