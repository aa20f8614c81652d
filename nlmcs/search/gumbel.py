"""Gumbel root selection with sequential halving (Danihelka et al. 2022, "Policy improvement by
planning with Gumbel"), for each agent's root of the tree search.

At a budget of tens of roll-outs PUCT's root spends most of them on the prior's favourite and
may play a move it hardly tried. Here each agent's root instead samples `k` moves without
replacement by the Gumbel-top-k trick on its prior (g(a) + log p(a), g ~ Gumbel(0, 1)), and
the roll-outs are split over them in rounds: every move left is tried equally often in a round,
then the better half by g(a) + log p(a) + sigma(Q(a)) stays, until one is left; that survivor
is the real move. sigma(Q) = (c_visit + max_b N(b)) c_scale Q, with Q in [0, 1] (the roll-out
reward's scale; an untried move counts the mean of the tried ones). The agents of a player run
their rounds in lockstep: round r covers the same roll-outs for all, each agent cycling through
its own moves left.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from nlmcs.games.base import Action
from nlmcs.search.tree import Node


def rounds(budget: int, moves: int) -> list[int]:
    """The roll-outs of each halving round for `moves` candidates (ceil(log2 moves) rounds,
    the budget split evenly, the last round taking what is left); one round with one move."""
    count = max(1, math.ceil(math.log2(moves))) if moves > 1 else 1
    each = budget // count
    out = [each] * count
    out[-1] += budget - each * count
    return out


class GumbelRoot:
    """One agent's root under sequential halving: which move each roll-out forces, and, after
    all, the move to play."""

    def __init__(self, children: dict[Action, Node], k: int, rng: np.random.Generator,
                 c_visit: float, c_scale: float):
        self.children = children
        self.c_visit, self.c_scale = c_visit, c_scale
        actions = list(children)
        p = np.array([max(children[a].p, 1e-12) for a in actions])
        self.logits = {a: float(math.log(x)) for a, x in zip(actions, p / p.sum(), strict=True)}
        self.gumbel = {a: float(g) for a, g in zip(actions, rng.gumbel(size=len(actions)),
                                                    strict=True)}
        ranked = sorted(actions, key=lambda a: -(self.gumbel[a] + self.logits[a]))
        self.left: list[Action] = ranked[:max(1, min(k, len(actions)))]
        self._turn = 0

    def forced(self) -> Action:
        """The move this roll-out plays at the root: the next of the moves left, in turn."""
        action = self.left[self._turn % len(self.left)]
        self._turn += 1
        return action

    def score(self, action: Action) -> float:
        """g + log p + sigma(Q) of a root move."""
        tried = [c.mean for c in self.children.values() if c.real > 0]
        child = self.children[action]
        q = child.mean if child.real > 0 else (float(np.mean(tried)) if tried else 0.0)
        most = max((c.real for c in self.children.values()), default=0)
        return (self.gumbel[action] + self.logits[action]
                + (self.c_visit + most) * self.c_scale * q)

    def halve(self) -> None:
        """End of a round: the better half (rounded up) of the moves left stays."""
        if len(self.left) > 1:
            keep = math.ceil(len(self.left) / 2)
            self.left = sorted(self.left, key=lambda a: -self.score(a))[:keep]
        self._turn = 0

    def choice(self) -> Action:
        """The real move: the best of the moves left (the survivor, once the rounds are done)."""
        return max(self.left, key=self.score)


def round_ends(budget: int, roots: Sequence[GumbelRoot]) -> set[int]:
    """Roll-out indices after which every agent's root halves: the rounds of the agent with the
    most candidates, shared by all (an agent with fewer keeps its survivor sooner)."""
    most = max((len(r.left) for r in roots), default=1)
    ends, done = set(), 0
    for size in rounds(budget, most):
        done += size
        ends.add(done - 1)
    return ends
