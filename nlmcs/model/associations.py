"""Learned word-to-game-attribute weights of one decision, for the decision log.

In the full text model of Branavan, Silver & Barzilay (2011) the predicate features f cross a word
of the chosen sentence, under its predicate label (action or state), with one game attribute of
the candidate: its action type, its unit and action, or one of the agent's state labels. The
weight w of such a feature is what the model learned that grounding to be worth in Q (the
papers' figure of learned feature groups shows the strongest of them). `word_associations` reads
those weights for the words of a sampled sentence, so the decision log can carry the strongest
few without the weight tables.
"""

from __future__ import annotations

from nlmcs.model.features import LABELS, Signature


def attribute_names(sig: Signature) -> list[str]:
    """Names of the game attributes in the order of the predicate feature parts of `sig`:
    action type, unit and action, then each state label."""
    return [f"action type {sig.atype}", f"{sig.unit}: {sig.action_key}",
            *(f"state {label}" for label in sig.state)]


def word_associations(net, sig: Signature, *, y: int, z: tuple[int, ...], top: int = 8
                      ) -> list[list]:
    """The `top` strongest (largest |w|) non-zero predicate weights of the action- and
    state-labelled words of candidate sentence row `y` with labels `z`, as
    [stem, label, attribute, weight] (weight as it enters Q, i.e. with the word's norm)."""
    feats = net.features(sig)
    uw = feats.unit
    lo, hi = uw.span(y)
    pred = feats.pred(lo, hi)  # (words, 2 labels, parts) w slots
    names = attribute_names(sig)
    found = []
    for k, label in enumerate(z):
        if label >= 2:  # background words have no predicate features
            continue
        word = net.index.stems[uw.words[lo + k]]
        weights = net.w[pred[k, label]] * uw.norm[lo + k]
        for name, weight in zip(names, weights, strict=True):
            if weight != 0.0:
                found.append([word, LABELS[label], name, round(float(weight), 6)])
    found.sort(key=lambda a: -abs(a[3]))
    return found[:top]
