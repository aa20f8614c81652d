"""Configuration of the search loop shared by every method."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Literal

from nlmcs.errors import UserInputError
from nlmcs.fields import check_fields, option, without_later

LATER_FIELDS = {"root": "tree", "gumbel_k": 8, "gumbel_c_visit": 50.0, "gumbel_c_scale": 1.0,
                "forced_k": 0.0}
"""Fields added after runs were recorded, with their default: a run's identity leaves each out
at that value (`identity_dict`), so runs recorded before they existed resume."""


def identity_dict(config: SearchConfig) -> dict:
    """`config.to_dict()` without the later fields at their default (`LATER_FIELDS`)."""
    return without_later(config.to_dict(), LATER_FIELDS)


@dataclass(frozen=True)
class SearchConfig:
    """Budget and rules of the per-step Monte-Carlo search (defaults: the 2011 release)."""

    rollouts: int = option(500, low=1)
    """Roll-outs per real step."""
    depth: int = option(20, low=1)
    """Simulated steps (turns) per roll-out."""
    learn_steps: int = option(4, low=0)
    """Only the first `learn_steps` simulated steps of a roll-out yield training datapoints."""
    epsilon_low: float = option(0.01, low=0.0, high=1.0)
    """Least exploration rate of a roll-out (at most `epsilon_high`)."""
    epsilon_high: float = option(0.4, low=0.0, high=1.0)
    """Each roll-out draws its exploration rate uniformly from [epsilon_low, epsilon_high]."""
    early_q: Literal["sampled", "expected"] = "expected"
    """Q used for the epsilon-greedy choice in the learning steps: sampled draws y and z for every
    candidate (release); expected uses E[Q] and draws y, z for the chosen action only (the
    datapoint), which is much cheaper."""
    late_q: Literal["sampled", "expected"] = "expected"
    """Q for the choice in steps after `learn_steps` (no datapoints there, so only the ranking
    of candidates matters; E[Q] is the mean of the sampled Q)."""
    batch: int = option(10, low=1)
    """Roll-outs run against one weight snapshot; updates are applied after the batch in roll-out
    order, so results do not depend on the number of workers. 1 = update after every roll-out."""
    workers: int = option(1, low=1)
    """Worker processes for roll-outs (1 = in this process)."""
    opponent: str = option("builtin", set_by="--opponent")
    """Policy spec of every other player inside roll-outs (`Game.policy`)."""
    reward: Literal["ratio", "weighted"] = "ratio"
    """ratio: win 1 / loss 0 / else score ratio mine / (mine + others); weighted: the release's
    weighted mean of such ratios over `reward_weights`."""
    reward_weights: Mapping[str, float] = option(
        default_factory=lambda: {
            "score": 1.0, "units": 1.0, "cities": 1.0, "techs": 1.0,
            "food": 1.0, "shields": 1.0, "trade": 1.0, "gold": 1.0,
        }  # fmt: skip
    )
    """Weights of the ratios the weighted reward averages (from a config file only)."""
    real_move: Literal["best-rollout", "mean-q"] = "best-rollout"
    """best-rollout: the first joint move of the highest-reward roll-out (release); mean-q: each
    agent's action of highest E[Q] under the final weights."""
    rollout: Literal["uniform", "typed"] = "uniform"
    """Random choices (epsilon moves, UCT beyond the tree): uniform over actions, or typed: an
    action type first, then an action of that type (Dobre & Lascarides 2017)."""
    type_weights: Mapping[str, float] | None = None
    """Optional weights of action types for typed roll-outs (e.g. learned from a corpus; from
    a config file only)."""
    uct_c: float = option(1.0, low=0.0)
    """UCB1 exploration constant of UCT."""
    prior_mode: Literal["visits", "puct"] = "puct"
    """How a prior informs UCT and flat UCB (`nlmcs.search.tree`): visits, the formula of Dobre &
    Lascarides (2015), seeds a child with `prior_visits` virtual visits at the prior's value; puct
    makes the prior a policy over the children and selects by Q + `puct_c` p sqrt(N) / (1 + n).
    Methods without a prior always use UCB1."""
    prior_visits: int = option(10, low=0)
    """Virtual visits given to a child seeded by a prior ("visits" mode)."""
    puct_c: float = option(0.3, low=0.0)
    """Exploration constant of PUCT ("puct" mode); 0.3 was picked on tuning seeds and helped both
    corpus methods on two fresh blocks (docs/corpus.md)."""
    prior_floor: float = option(0.1, low=0.0, high=1.0)
    """Share of a policy prior spread uniformly over all actions, so that none is ruled out
    ("puct" mode, and the text-corpus root bias)."""
    prior_weight: float = option(0.1, low=0.0)
    """text-corpus: weight of the corpus policy added to Q at the root (rewards lie in [0, 1])."""
    root: Literal["tree", "gumbel"] = "tree"
    """How UCT with a policy prior picks at each agent's root: tree, the tree's own rule
    (PUCT with a prior); gumbel, Gumbel root selection with sequential halving (Danihelka et
    al. 2022): `gumbel_k` root moves sampled without replacement from the prior perturbed by
    Gumbel noise, the roll-outs split evenly over them in halving rounds, the real move the
    survivor by noise + log prior + sigma(Q). Meant for budgets of tens of roll-outs."""
    gumbel_k: int = option(8, low=1)
    """Root moves Gumbel root selection considers (at most the legal ones)."""
    gumbel_c_visit: float = option(50.0, low=0.0)
    """c_visit of sigma(Q) below: how much a root move's value counts before any visit."""
    gumbel_c_scale: float = option(1.0, low=0.0)
    """sigma(Q) = (gumbel_c_visit + most root visits) x gumbel_c_scale x Q (Q in [0, 1]): the
    paper's monotone transform of a root move's value."""
    forced_k: float = option(0.0, low=0.0, high=100.0)
    """Forced playouts (Wu 2019, KataGo) at each agent's root under PUCT with a policy prior:
    a root move of prior p with fewer than sqrt(forced_k p N) roll-outs after N is tried
    next, so a move the prior gives little still gets a few looks at a small budget; self-play
    takes those looks back out of its policy targets (`tree.pruned_visits`). 0: off (KataGo
    uses 2)."""
    log_decisions: bool = option(False, set_by="--log-decisions")
    """Keep a per-step decision record (`Planner.last_log`)."""
    engine: Literal["compiled", "python"] = "compiled"
    """Where roll-outs play once no tree or bandit guides the searching player (UCT and flat
    UCB beyond their trees, with the uniform roll-out policy and a built-in or random
    opponent): the compiled civ engine, or the Python reference. Both play the same roll-outs,
    so results do not depend on it (not part of an ablation's identity)."""

    def __post_init__(self) -> None:
        check_fields(self, "search option")
        if self.epsilon_low > self.epsilon_high:
            raise UserInputError(f"search options epsilon_low={self.epsilon_low!r} and "
                                 f"epsilon_high={self.epsilon_high!r}: the low one must be at "
                                 "most the high one")

    @classmethod
    def release(cls, **overrides) -> SearchConfig:
        """The search as the 2011 release ran it: candidates ranked by Q with every candidate's
        own sampled sentence and labels, an update after every roll-out, the weighted reward,
        the best roll-out's first move."""
        base = {"early_q": "sampled", "late_q": "sampled", "batch": 1, "reward": "weighted",
                "real_move": "best-rollout"}
        return cls(**{**base, **overrides})

    def to_dict(self) -> dict:
        out = asdict(self)
        out["reward_weights"] = dict(self.reward_weights)
        out["type_weights"] = dict(self.type_weights) if self.type_weights else None
        return out
