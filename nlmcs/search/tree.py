"""Statistics nodes of the tree planners (UCT, flat UCB), their selection rules, prior seeding.

Nodes hold statistics, never states (as OpenSpiel's `SearchNode`). A prior informs a new node's
children in one of two ways (`SearchConfig.prior_mode`):

- "visits", the formula of Dobre & Lascarides (2015): a child the prior has a value v for starts
  with `visits` virtual visits of mean v; a child the prior says nothing about (NaN) starts empty.
  Selection stays UCB1. The value must then be on the roll-out reward's scale, which a corpus
  relevance (0.9 for most candidates against rewards near 0.3) is not.
- "puct", a policy prior as in AlphaZero's PUCT: the prior is a distribution p over the children
  (mixed with `floor` of uniform, so nothing is ruled out), kept in `Node.p`; a child is selected
  by Q + c p sqrt(N) / (1 + n), where Q is its mean, or the parent's mean while it is unvisited.
  No virtual visits, so every statistic stays on the reward's scale.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from nlmcs.games.base import Action, AgentId, State
from nlmcs.search.config import SearchConfig


@runtime_checkable
class Prior(Protocol):
    def __call__(self, state: State, agent: AgentId, actions: list[Action]
                 ) -> Sequence[float] | None:
        """A value per action (NaN: no opinion), or None. For the "visits" mode a value in
        [0, 1]; for "puct" a non-negative weight (normalised here)."""


@runtime_checkable
class ExplainedPrior(Prior, Protocol):
    """A prior that says what it read (the text readers), for the decision log."""

    def explain(self, state: State, agent: AgentId, actions: list[Action]) -> dict:
        """Its side of one decision record; {} when it has nothing to say."""


@runtime_checkable
class Leaf(Protocol):
    def __call__(self, state: State, player: int) -> float:
        """The value for `player` of a roll-out's last state, where the game goes on (a value
        network's), instead of the game's reward."""

Select = Callable[["Node", "Node", float], float]
"""`select(parent, child, c)`: the score a child is picked by (highest first)."""


class Node:
    """Statistics of one agent's action sequence; children by action."""

    __slots__ = ("children", "n", "p", "real", "total")

    def __init__(self, n: float = 0.0, total: float = 0.0, p: float = 0.0):
        self.n = n  # visits, virtual ones from a "visits" prior included
        self.real = 0  # roll-outs that went through this node
        self.total = total  # sum of roll-out rewards (prior mean x virtual visits included)
        self.p = p  # policy prior probability among its siblings ("puct"; else 0)
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


def puct(parent: Node, child: Node, c: float) -> float:
    """Q + c p sqrt(N) / (1 + n); an unvisited child's Q is its parent's mean."""
    q = child.mean if child.n else parent.mean
    return q + c * child.p * math.sqrt(max(parent.n, 1.0)) / (1.0 + child.n)


def policy(values: Sequence[float] | None, m: int, floor: float) -> np.ndarray:
    """A distribution over m children from prior weights (NaN or None: no support), mixed
    with `floor` of uniform."""
    w = np.zeros(m) if values is None else np.nan_to_num(np.asarray(values, float), nan=0.0)
    w = np.maximum(w, 0.0)
    total = w.sum()
    p = w / total if total > 0 else np.full(m, 1.0 / m)
    return (1.0 - floor) * p + floor / m


@dataclass(frozen=True)
class ProductPrior:
    """Several priors as one: the normalised product of their policies (each mixed with `floor`
    of uniform, so none vetoes a move); the "value" kind scales it to [0, 1]. It explains
    itself by the first of its parts that does (the text reader)."""

    parts: tuple[Prior, ...]
    kind: str
    floor: float

    def __call__(self, state: State, agent: AgentId, actions: list[Action]) -> np.ndarray:
        p = np.ones(len(actions))
        for each in self.parts:
            p *= policy(each(state, agent, actions), len(actions), self.floor)
        p /= p.sum()
        return p / p.max() if self.kind == "value" else p

    def explain(self, state: State, agent: AgentId, actions: list[Action]) -> dict:
        for each in self.parts:
            if isinstance(each, ExplainedPrior):
                return each.explain(state, agent, actions)
        return {}


def prior_explanation(prior: Prior | None, state: State, agent: AgentId,
                      actions: Sequence[Action]) -> dict:
    """What a prior that explains itself (the text reader) says of one decision, for the
    decision log; {} for any other."""
    if isinstance(prior, ExplainedPrior) and actions:
        return prior.explain(state, agent, list(actions))
    return {}


def selection(config: SearchConfig, prior: Prior | None) -> tuple[Select, float]:
    """The selection rule and its constant: PUCT for a policy prior, else UCB1."""
    if prior is not None and config.prior_mode == "puct":
        return puct, config.puct_c
    return ucb1, config.uct_c


def seeded_children(state: State, agent: AgentId, actions: list[Action], prior: Prior | None,
                    config: SearchConfig) -> dict[Action, Node]:
    """A child per action, informed by the prior as `config.prior_mode` says (see the module
    docstring); without a prior, every child starts empty."""
    if prior is None:
        return {a: Node() for a in actions}
    values = prior(state, agent, actions)
    if config.prior_mode == "puct":
        p = policy(values, len(actions), config.prior_floor)
        return {a: Node(p=float(p[i])) for i, a in enumerate(actions)}
    children = {}
    for i, a in enumerate(actions):
        v = None if values is None else values[i]
        seeded = v is not None and not math.isnan(v)
        n = config.prior_visits
        children[a] = Node(n, v * n) if seeded else Node()
    return children


def pick(parent: Node, options: Sequence[Action], children: dict[Action, Node], c: float,
         rng: np.random.Generator, select: Select = ucb1) -> Action:
    """The option of highest `select` score, ties broken at random."""
    scores = np.array([select(parent, children.setdefault(a, Node()), c) for a in options])
    best = np.flatnonzero(scores >= scores.max())
    return options[int(best[int(rng.integers(len(best)))])]


def forced_choice(parent: Node, options: Sequence[Action], children: dict[Action, Node],
                  k: float) -> Action | None:
    """The root move a forced playout takes (Wu 2019): of the moves with fewer real roll-outs
    than sqrt(k p N) (p its prior, N the root's roll-outs so far), the one furthest below,
    the first in action order on ties; None when every move has its share."""
    best, gap = None, 0.0
    for a in options:
        child = children.setdefault(a, Node())
        short = math.sqrt(k * child.p * parent.real) - child.real
        if short > gap:
            best, gap = a, short
    return best


def pruned_visits(children: dict[Action, Node], actions: Sequence[Action], k: float,
                  c: float) -> np.ndarray:
    """Real visits of each action as a policy target with the forced playouts taken back out
    (KataGo's target pruning): every move but the most visited loses up to sqrt(k p N) of its
    roll-outs, as long as its PUCT score stays below the most visited move's; a move left with
    one roll-out or none counts none. With k = 0, the visits as they are."""
    n = np.array([children[a].real if a in children else 0 for a in actions], np.float64)
    if k <= 0 or n.sum() <= 0:
        return n
    total = n.sum()
    root = math.sqrt(total)
    top = int(np.argmax(n))
    best = children[actions[top]]
    bar = best.mean + c * best.p * root / (1.0 + best.real)
    out = n.copy()
    for i, a in enumerate(actions):
        if i == top or n[i] == 0:
            continue
        child = children[a]
        lowest = n[i] - math.floor(math.sqrt(k * child.p * total))
        if bar > child.mean:  # fewer visits raise its score; it must stay below the bar
            lowest = max(lowest, math.ceil(c * child.p * root / (bar - child.mean) - 1.0))
        else:
            lowest = n[i]
        kept = min(n[i], max(lowest, 0.0))
        out[i] = kept if kept > 1 else 0.0
    return out


def final_choice(children: dict[Action, Node], by_visits: bool) -> Action:
    """The real move among a root's children. Only a tried child (one real roll-out or more) may
    be played: a "visits" prior's virtual visits say what the prior thinks, not that the search
    tried the move. by_visits: most real visits, ties to the higher mean; else the highest mean
    (prior included in "visits" mode), ties to more real visits. Remaining ties go to the first
    child in action order. With no child tried (no roll-outs), every child counts."""
    tried = {a: c for a, c in children.items() if c.real > 0} or children
    key = (lambda c: (c.real, c.mean)) if by_visits else (lambda c: (c.mean, c.real))
    return max(tried.items(), key=lambda kv: key(kv[1]))[0]


def decision_record(step: int, state: State, player: int, agent: AgentId,
                    action: Action | None, children: dict | None, prior: Prior | None = None
                    ) -> dict:
    """One decision-log line of a tree planner: the move and each root arm's visits and mean
    (and policy prior, when there is one, with what a text prior read)."""
    return {**prior_explanation(prior, state, agent, list(children or ())),
        "step": step, "turn": int(state.turn), "player": player, "agent": agent,
        "action": list(action) if action is not None else None,
        "candidates": [{"action": list(a), "visits": c.n, "q": c.mean,
                        **({"p": c.p} if c.p else {})}
                       for a, c in (children or {}).items()],
    }  # fmt: skip
