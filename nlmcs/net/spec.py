"""What a training run of the network does, as one typed spec (torch-free, so the command line
loads without torch); `nlmcs.net.train` runs it."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

from nlmcs.fields import check_fields, option, without_later

LATER_FIELDS = {"init": None, "full_share": 1.0, "cheap_rollouts": 8, "previous_games": None,
                "forced_k": 0.0, "goal_words": False}
"""Fields added after runs were recorded, with the default that trains as before."""


@dataclass(frozen=True)
class TrainSpec:
    """The defaults are the run that made the shipped network (`results/net/civ-small`)."""

    game: str = "civ"
    """Game the network plays."""
    map: str = "small"
    """Map preset of self-play and judging games."""
    max_turns: int = option(20, low=1)
    """Length of self-play and judging games."""
    corpus: str = "civ-sample"
    """Corpus whose games generation 0 clones and later fits mix in (with `--bc-epochs 0
    --corpus-mix 0` it is not read: generation 0 keeps its initial weights)."""
    corpus_games: int = option(0, low=0)
    """Corpus games replayed (0: all)."""
    bc_epochs: int = option(4, low=0)
    """Passes over the corpus's positions in behaviour cloning."""
    generations: int = option(5, low=0)
    """Self-play generations after behaviour cloning (may grow when a run resumes)."""
    games: int = option(60, low=1)
    """Self-play games per generation."""
    rollouts: int = option(30, low=1)
    """Roll-outs per step of the PUCT search in self-play and judging games."""
    net_depth: int = option(3, low=1)
    """Turns a roll-out plays before its last state is scored."""
    value_weight: float = option(0.5, low=0.0, high=1.0)
    """A leaf's score: this share of the network's value, the rest the game's reward."""
    opponent: str = "self"
    """Self-play's player 1: "self" (the same network searching) or a scripted player."""
    temperature_turns: int = option(6, low=0)
    """Turns in which self-play draws its moves from the visit shares (then most visited)."""
    dirichlet_alpha: float = option(0.3, above=0.0)
    """Concentration of the Dirichlet noise mixed into self-play's root priors."""
    noise_share: float = option(0.25, low=0.0, high=1.0)
    """Share of that noise in the root priors."""
    puct_c: float = option(0.3, above=0.0)
    """PUCT's exploration constant in self-play and judging games."""
    prior_floor: float = option(0.1, low=0.0, high=1.0)
    """Share of the prior spread uniformly over the moves (none is ruled out)."""
    epochs: int = option(4, low=1)
    """Passes over the replay window per generation."""
    window: int = option(4, low=1)
    """Generations of self-play positions the fit reads (the replay buffer)."""
    corpus_mix: float = option(1.0, low=0.0)
    """Corpus positions drawn into each generation's fit per self-play position, so self-play
    refines the cloned policy instead of forgetting it (0: self-play alone, as AlphaZero)."""
    batch: int = option(128, low=1)
    """Positions per gradient step."""
    lr: float = option(1e-3, low=0.0)
    """AdamW's step size."""
    weight_decay: float = option(1e-4, low=0.0)
    """AdamW's weight decay."""
    hidden: int = option(64, low=1)
    """Width of the network's hidden layers (a new run only)."""
    goal_words: bool = False
    """A new network reads each move's goal words too (`Layout.goal_words`: the step the
    built-in AI would take towards a city site, a job, the front, home or the rally point)."""
    eval_games: int = option(40, low=0)
    """Judging games per generation, against the built-in AI and against the previous one."""
    eval_opponent: str = "builtin:normal"
    """Scripted player the judging games are played against."""
    eval_seed: int = option(9191, low=0)
    """Seed of the judging games (salted apart from training games)."""
    seed: int = option(0, low=0)
    """Seed of the initial weights, the shuffles and the self-play games."""
    init: str | None = None
    """A checkpoint generation 0 starts from, instead of fresh weights cloned from the corpus:
    a curriculum (the 20-turn network, judged and trained on at 100 turns)."""
    full_share: float = option(1.0, above=0.0, high=1.0)
    """Playout-cap randomisation: the share of self-play moves searched at `rollouts`; the
    others at `cheap_rollouts`, whose visit shares are no policy target (their positions still
    learn the game's result)."""
    cheap_rollouts: int = option(8, low=1)
    """Roll-outs of a self-play move outside the full share."""
    forced_k: float = option(0.0, low=0.0, high=100.0)
    """Forced playouts at self-play's roots (a root move of prior p gets sqrt(forced_k p N) of
    N roll-outs), taken back out of the policy targets (KataGo's pruning); 0: none. Judging
    games search without them."""
    previous_games: int | None = option(None, low=0)
    """Judging games against the previous generation (None: `eval_games`); both sides search
    there, so they cost twice a game against the built-in AI."""

    def __post_init__(self) -> None:
        check_fields(self, "training option")

    def identity(self) -> dict:
        """What a resumed run must share (not the number of generations; fields added since
        runs were recorded only where they are not at their default)."""
        values = {k: v for k, v in dataclasses.asdict(self).items() if k != "generations"}
        if self.init is not None:  # `./x.pt` and `x.pt` are one file
            values["init"] = os.path.normpath(self.init)
        return without_later(values, LATER_FIELDS)

    def game_options(self) -> dict:
        return {"preset": self.map, "max_turns": self.max_turns}


def stage_name(generation: int) -> str:
    return f"gen-{generation:03d}"


JUDGING = 0x5EED
"""The salt of judging games: none is a training game."""


def eval_seeds(spec: TrainSpec, games: int | None = None) -> list[int]:
    """Judging seeds (the first `games`, default `eval_games`): from `eval_seed`, salted apart
    from every training game's."""
    from nlmcs.seeds import game_seed

    n = spec.eval_games if games is None else games
    return [game_seed(spec.eval_seed, JUDGING, i) for i in range(n)]


def previous_seeds(spec: TrainSpec) -> list[int]:
    """Judging seeds against the previous generation: the first `previous_games` of them."""
    return eval_seeds(spec, spec.eval_games if spec.previous_games is None
                      else spec.previous_games)
