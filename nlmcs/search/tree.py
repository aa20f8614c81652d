"""Statistics nodes of the tree planners (UCT, flat UCB), UCB1, and prior seeding.

Nodes hold statistics, never states (as OpenSpiel's `SearchNode`). A prior (Dobre & Lascarides
2015) seeds a new child with `visits` virtual visits whose mean is the prior value; a child the
prior says nothing about (None or NaN) starts empty.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from nlmcs.games.base import Action, AgentId, State

Prior = Callable[[State, AgentId, list[Action]], "Sequence[float] | None"]
"""`prior(state, agent, actions)`: a value in [0, 1] per action (NaN: no opinion), or None."""


class Node:
    """Statistics of one agent's action sequence; children by action."""

    __slots__ = ("children", "n", "real", "total")

    def __init__(self, n: float = 0.0, total: float = 0.0):
        self.n = n  # visits, virtual ones from a prior included
        self.real = 0  # roll-outs that went through this node
        self.total = total  # sum of roll-out rewards (prior mean x virtual visits included)
        self.children: dict[Action, Node] | None = None  # None until first expanded

    @property
    def mean(self) -> float:
        return self.total / self.n if self.n else 0.0

    def add(self, reward: float) -> None:
        self.n += 1
        self.real += 1
        self.total += reward


def ucb1(parent: Node, child: Node, c: float) -> float:
    if child.n == 0:
        return math.inf
    return child.mean + c * math.sqrt(math.log(max(parent.n, 1.0)) / child.n)


def seeded_children(state: State, agent: AgentId, actions: list[Action], prior: Prior | None,
                    visits: int) -> dict[Action, Node]:
    """A child per action, those with a prior value starting at `visits` virtual visits."""
    values = prior(state, agent, actions) if prior is not None else None
    children = {}
    for i, a in enumerate(actions):
        v = None if values is None else values[i]
        seeded = v is not None and not math.isnan(v)
        children[a] = Node(visits, v * visits) if seeded else Node()
    return children


def pick(parent: Node, options: Sequence[Action], children: dict[Action, Node], c: float,
         rng: np.random.Generator,
         select: Callable[[Node, Node, float], float] = ucb1) -> Action:
    """The option of highest `select` score, ties broken at random."""
    scores = np.array([select(parent, children.setdefault(a, Node()), c) for a in options])
    best = np.flatnonzero(scores >= scores.max())
    return options[int(best[int(rng.integers(len(best)))])]


def decision_record(step: int, state: State, player: int, agent: AgentId,
                    action: Action | None, children: dict | None) -> dict:
    """One decision-log line of a tree planner: the move and each root arm's visits and mean."""
    return {
        "step": step, "turn": int(state.turn), "player": player, "agent": agent,
        "action": list(action) if action is not None else None,
        "candidates": [{"action": list(a), "visits": c.n, "q": c.mean}
                       for a, c in (children or {}).items()],
    }  # fmt: skip
