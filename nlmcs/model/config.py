"""Configuration of the value network (Branavan et al. 2011, defaults read from their release)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

from nlmcs.errors import UserInputError
from nlmcs.fields import check_fields, option, without_later

ModelKind = Literal["linear", "nonlinear", "relevance-only", "text"]
"""Named as the MC methods of Branavan et al. (`random-text` is `text` on the twin manual)."""


@dataclass(frozen=True)
class ModelConfig:
    """Every knob of the network and its online learning.

    Names follow the paper: `u` weighs the sentence-relevance features phi, `v` the
    predicate-label features psi, `w` the output features f (Q = w . f).
    """

    kind: ModelKind = option("text", set_by="--method")
    """linear: Q = w . x, no hidden layer; nonlinear: `num_latent` hidden states in place of
    sentences, no text; relevance-only: sentence layer only, no predicate labels; text: the full
    model."""
    num_latent: int = option(10, low=1)
    """Hidden states of the `nonlinear` (no text) model."""
    table_bits: int = option(18, low=8, high=26)
    """u and v are hashed tables of 2**table_bits float64 weights; w has two such halves, one for
    the game features x and one for the text (or latent) output features, so the two families
    never share a weight (the release kept them in separate vectors)."""
    alpha: float = option(1e-4, low=0.0, high=1.0)
    """Learning rate of every layer (above 1 the weights overflow within a few updates)."""
    l2: float = option(0.01, low=0.0, high=1.0)
    """L2 penalty; applied to the weights a datapoint touches (sparse decay)."""
    passes: int = option(7, low=1)
    """Update passes over a roll-out's datapoints."""
    hidden_update: Literal["release", "consistent", "expected"] = "release"
    """The factor k of the hidden layers' likelihood-ratio update k (phi(y) - E[phi]) (and the
    same for psi): release k = (Q - R) Q, as the 2011 code and the paper's eq. 3; consistent
    k = (R - Q) Q, the gradient of the squared error; expected: u steps down the exact gradient
    of E_y[(R - Q_y)^2] over every candidate row (no draw, no batch baseline; a single datapoint
    learns), and the labels take k = e(expected labels) - e(sampled labels). Every rule has
    compiled sweeps (`nlmcs.model.kernels`)."""
    hidden_alpha: float | None = option(None, low=0.0, high=1.0)
    """Learning rate of u and v (None: `alpha`)."""
    hidden_l2: float | None = option(None, low=0.0, high=1.0)
    """L2 penalty of u and v (None: `l2`)."""
    persist: Literal["none", "hidden"] = "none"
    """none: every weight is reset at every real step (release: the value function is local to
    the current state); hidden: only the game-feature half of w resets, while u, v and the
    text (or latent) output half of w carry over from step to step within a game, so what the
    manual's sentences are learned to mean accumulates over the game."""
    center: bool = False
    """Train the output layer on R - b, b the mean reward of the step's earlier roll-outs, so a
    feature's weight estimates an advantage and rarely visited actions are not ranked below
    often visited ones only because their weights have not grown yet. The step's first
    roll-out has no earlier one to centre on: it only counts its reward."""
    normalize: bool = False
    """Divide each word's relevance and output features by its sentence's kept-word count, so a
    long sentence (or one repeating a label word) does not outweigh a short one by size."""
    overlap_state: bool = False
    """Add a relevance feature counting the sentence's words that name the agent's state labels
    (the release's overlap counted agent and action words only)."""
    relevance_prior: float = option(0.0, low=0.0, high=20.0)
    """Weight the overlap features of relevance (the sentence's words naming the agent and the
    action, and under `overlap_state` the agent's state) start from, wherever u starts from
    zero: relevance then begins in favour of sentences that name this move in this situation
    instead of uniform, and learning moves it from there (0: uniform, the release). The L2
    penalty of the hidden layers pulls it back towards 0 (docs/reading.md)."""
    meaning: bool = False
    """Add two relevance features from pretrained word meaning (`manual_pipeline.meaning`, the
    'meaning' extra): the cosine between a candidate sentence and the agent's words with the
    action's, and the summed cosines between the sentence and each of the agent's state labels.
    They start from `meaning_prior`, so relevance begins in favour of sentences near this move
    in this situation in meaning, whatever words they use."""
    meaning_prior: float = option(20.0, low=0.0, high=100.0)
    """Weight the meaning features start from wherever u starts from zero (a cosine 0.1 higher
    is then worth e^2, 7.4x, in relevance). 20 is the smallest of 10, 20, 30 at which, in a
    15-step game on the Civ II manual (seed 1, 30 x 5; not a seed of any block), the median
    decision's normalised entropy fell below 0.9 with the top sentence 2x above uniform, the
    twin's staying nearer uniform (docs/meaning.md)."""
    temperature: float = option(1.0, above=0.0)
    """Softmax temperature of the hidden layers."""
    min_count: int = option(5, low=1)
    """Manual stems seen fewer times are dropped (as are stop words and punctuation)."""
    max_sentences: int | None = option(None, low=1)
    """Cap on candidate sentences per agent (None keeps all that hold the agent's word)."""
    rank_sentences: Literal["document", "state-action"] = "document"
    """Which sentences the cap keeps: the first in document order, or those sharing most stems
    with the agent's state labels and the candidate action's labels (a set per action)."""
    grounding_features: bool = True
    """Two shared output features counting action-/state-labelled words of the chosen sentence
    that match the candidate action's / the state's labels (an addition to the release)."""

    backend: Literal["numba", "numpy"] = "numba"
    """numba: compiled scoring of the text kinds and compiled update sweeps
    (`nlmcs.model.kernels`); numpy: the plain reference they are checked against
    (`nlmcs.model.reference`). Both give the same values (within 1e-9) and the same games."""

    @property
    def hidden_rates(self) -> tuple[float, float]:
        """(learning rate, L2 penalty) of the hidden layers' u and v: `hidden_alpha` and
        `hidden_l2`, each `alpha` and `l2` where left at None (resolved here only)."""
        return (self.alpha if self.hidden_alpha is None else self.hidden_alpha,
                self.l2 if self.hidden_l2 is None else self.hidden_l2)

    def __post_init__(self) -> None:
        check_fields(self, "model option")

    @classmethod
    def release(cls, **overrides) -> ModelConfig:
        """The model as the 2011 release had it: every weight reset at every step, the
        release's hidden-layer sign, all candidate sentences in document order, no grounding
        features (docs/search-options.md, "Deviations from the release", lists what still
        differs)."""
        return cls(**{**RELEASE, **overrides})

    @classmethod
    def preset(cls, name: str, **overrides) -> ModelConfig:
        """The model setting `name` of `MODEL_PRESETS`, with `overrides` on top."""
        if name not in MODEL_PRESETS:
            raise UserInputError(f"unknown model preset {name!r}; choose from "
                                 f"{', '.join(MODEL_PRESETS)}")
        return cls(**{**MODEL_PRESETS[name], **overrides})

    def to_dict(self) -> dict:
        return asdict(self)


RELEASE = {
    "hidden_update": "release", "hidden_alpha": None, "hidden_l2": None, "persist": "none",
    "center": False, "normalize": False, "overlap_state": False, "max_sentences": None,
    "rank_sentences": "document", "grounding_features": False, "alpha": 1e-4, "l2": 0.01,
    "passes": 7, "relevance_prior": 0.0,
}  # fmt: skip

LATER_FIELDS = {"meaning": False, "meaning_prior": 20.0}
"""Fields added after runs were recorded, with their default: a run's identity leaves each out
at that value, so runs recorded before they existed resume with today's code
(`AblationSpec.identity`), while any other value (a method may turn meaning on by itself, so
the prior counts on its own) changes the identity."""


def identity_dict(config: ModelConfig) -> dict:
    """`config.to_dict()` without the later fields at their default (`LATER_FIELDS`)."""
    return without_later(config.to_dict(), LATER_FIELDS)


MODEL_PRESETS: dict[str, dict] = {
    "default": {},
    "release": RELEASE,
    # The fourth and fifth attempts of "Does the manual matter?" (docs/experiments.md; the final
    # blocks 2929, 3939 and 8383): the K sentences sharing most words with the state and the action,
    # learned by the expected rule and kept from step to step within a game.
    "state-action": {
        "max_sentences": 10, "rank_sentences": "state-action", "overlap_state": True,
        "center": True, "normalize": True, "alpha": 0.001, "hidden_l2": 0.0,
        "hidden_update": "expected", "hidden_alpha": 1.0, "persist": "hidden",
    },
    # Reading that selects (docs/reading.md, "Why relevance stays uniform"): relevance starts in
    # favour of sentences naming the move and the situation, every candidate sentence kept, the
    # expected rule with a step that does not vanish at rewards in [0, 1], and no L2 pull of u,
    # which the shared overlap weights would feel once per candidate of every datapoint.
    "selecting": {
        "overlap_state": True, "relevance_prior": 1.5, "hidden_update": "expected",
        "hidden_alpha": 0.1, "hidden_l2": 0.0, "normalize": True, "center": True,
    },
}  # fmt: skip
"""Every model setting docs/experiments.md reports, by name (`--model-preset NAME`): the
project's defaults, the 2011 release's, the setting the manual ablations settled on, and the
setting whose relevance selects (`selecting`, measured by `nlmcs relevance planted`)."""
