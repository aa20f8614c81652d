"""Configuration of the value network (Branavan et al. 2011, defaults read from their release)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

ModelKind = Literal["linear", "nonlinear", "relevance-only", "text"]
"""Named as the MC methods of Branavan et al. (`random-text` is `text` on the twin manual)."""


@dataclass(frozen=True)
class ModelConfig:
    """Every knob of the network and its online learning.

    Names follow the paper: `u` weighs the sentence-relevance features phi, `v` the
    predicate-label features psi, `w` the output features f (Q = w . f).
    """

    kind: ModelKind = "text"
    """linear: Q = w . x, no hidden layer; nonlinear: `num_latent` hidden states in place of
    sentences, no text; relevance-only: sentence layer only, no predicate labels; text: the full
    model."""
    num_latent: int = 10
    """Hidden states of the `nonlinear` (no text) model."""
    table_bits: int = 18
    """Each of u, v, w is a hashed table of 2**table_bits float64 weights."""
    alpha: float = 1e-4
    """Learning rate of every layer."""
    l2: float = 0.01
    """L2 penalty; applied to the weights a datapoint touches (sparse decay)."""
    passes: int = 7
    """Update passes over a roll-out's datapoints."""
    sign: Literal["release", "consistent"] = "release"
    """Hidden-layer update sign: release (Q - R) * Q, as the 2011 code and the paper's eq. 3;
    consistent (R - Q) * Q, the gradient of the squared error."""
    hidden: Literal["sample", "expect"] = "sample"
    """sample: y and z drawn at `temperature` per evaluation (release); expect: every choice
    uses the exact expectation of Q over y and z (label marginals propagated parent before
    child), while learning still draws y and z once for each chosen action."""
    temperature: float = 1.0
    """Softmax temperature of the hidden layers."""
    min_count: int = 5
    """Manual stems seen fewer times are dropped (as are stop words and punctuation)."""
    max_sentences: int | None = None
    """Cap on candidate sentences per agent (the first ones in document order); None keeps all."""
    game_features: bool = True
    """Output features action x agent x state labels (always on for `linear`)."""
    grounding_features: bool = True
    """Two shared output features counting action-/state-labelled words of the chosen sentence
    that match the candidate action's / the state's labels (an addition to the release)."""

    def to_dict(self) -> dict:
        return asdict(self)
