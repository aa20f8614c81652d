"""A zero-shot text prior from pretrained word meaning (`manual_pipeline.meaning`): no
training, no game played before.

For one decision, the agent's situation in the game's own words (its labels and its state's)
picks the manual's sentences nearest to it in meaning (the `TOP` nearest with a positive cosine,
weighted by a softmax of their cosines at `TEMPERATURE`, so a sentence much nearer than the rest
speaks for the situation alone); each candidate move (its labels) is then scored by how much
nearer it is to those sentences, weight by weight, than to the manual's average sentence (so a
generic word near everything, "play", "move", advises nothing), and the scores become a policy
by a softmax at the same temperature. A move the nearest sentences speak of gets more of the
search's first visits. A word twin's sentences mix words from the whole manual, so the same rule
reads them as a control.

`TOP` and `TEMPERATURE` are set by hand, before any game: five sentences (a paragraph's worth),
and a temperature at which a cosine 0.1 higher (the gap between a related and an unrelated word
pair in the GloVe table of docs/meaning.md) is worth e^2, about 7x, as a weight and in the
policy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import numpy as np

if TYPE_CHECKING:
    from nlmcs.games.base import Action, AgentId, State

TOP = 5
TEMPERATURE = 0.05
CACHE_LIMIT = 200_000


def _key(state: State, agent: AgentId, actions) -> tuple:
    return (tuple(state.agent_labels(agent)), tuple(state.state_labels(agent)),
            tuple(tuple(a) for a in state.actions_labels(agent, actions)))


class MeaningPrior:
    """`prior(state, agent, actions)`: the policy (or with `kind="value"`, p / max p) over
    `actions`; cached per label key for the whole game, as the situation's labels repeat."""

    def __init__(self, manual, kind: Literal["policy", "value"] = "policy") -> None:
        from manual_pipeline.meaning import sentence_vectors

        self.manual_name = manual.name
        self.texts = manual.sentences["text"].tolist()
        self.vectors = sentence_vectors(manual)
        self.average = self.vectors.mean(axis=0) if len(self.vectors) else None
        self.kind = kind
        self.cache: dict[tuple, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def read(self, key: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(policy over the moves, the nearest sentences' ids, their weights) of a label key."""
        found = self.cache.get(key)
        if found is not None:
            return found
        from manual_pipeline.meaning import text_vector

        agent, situation, moves = key
        sims = self.vectors @ text_vector(" ".join((*agent, *situation)))
        order = np.argsort(-sims, kind="stable")[:TOP]
        near = order[sims[order] > 0]
        weights = np.exp((sims[near] - sims[near].max()) / TEMPERATURE) if len(near) \
            else np.zeros(0)
        weights = weights / weights.sum() if len(near) else weights
        advice = np.zeros(len(moves))
        if len(near):
            for j, move in enumerate(moves):
                v = text_vector(" ".join(move))
                advice[j] = float(weights @ (self.vectors[near] @ v)) - float(self.average @ v)
        logits = advice / TEMPERATURE
        p = np.exp(logits - logits.max()) if len(moves) else np.zeros(0)
        p = p / p.sum() if len(moves) else p
        if len(self.cache) >= CACHE_LIMIT:
            self.cache.clear()
        found = self.cache[key] = (p, near, weights)
        return found

    def __call__(self, state: State, agent: AgentId, actions: list[Action]) -> np.ndarray:
        p = self.read(_key(state, agent, actions))[0]
        return p / p.max() if self.kind == "value" else p

    def explain(self, state: State, agent: AgentId, actions, *, top: int = 3) -> dict:
        """The sentences nearest the situation, with the weight each had, and the moves the
        prior advised most (for the decision log and the relevance report)."""
        key = _key(state, agent, actions)
        p, near, weights = self.read(key)
        best = np.argsort(-p, kind="stable")[:top]
        return {
            "prior_sentences": [{"sentence": int(i), "relevance": float(w),
                                 "text": self.texts[int(i)]} for i, w in zip(near, weights,
                                                                             strict=True)],
            "prior_top": [{"action": list(actions[i]), "p": float(p[i]),
                           "labels": list(key[2][i])} for i in best],
        }


def make_meaning_prior(manual, kind: Literal["policy", "value"] = "policy") -> MeaningPrior:
    """The zero-shot prior of a stored manual (by name, directory or in memory)."""
    from nlmcs.model.manuals import resolve_manual

    return MeaningPrior(resolve_manual(manual), kind)
