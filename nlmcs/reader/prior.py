"""The reader at play: a prior over an agent's legal actions, for PUCT and the MC root bias.

`TextPrior(state, agent, actions)` answers with the reader's distribution over `actions`. The
answer depends only on the labels the game gives (the agent's, its state's, each candidate's),
so it is computed once per such key and cached for the whole game: within a search the same
keys come back at every node. `kind="value"` scales it to [0, 1] (p / max p) for the "visits"
prior mode.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
import torch

from nlmcs.reader.forward import build_query, collate
from nlmcs.reader.index import ReaderIndex, manual_identity
from nlmcs.reader.weights import check_fits, default_model, load_model, net_for

if TYPE_CHECKING:
    from nlmcs.games.base import Action, AgentId, State

CACHE_LIMIT = 200_000
INDEX_LIMIT = 8
"""Indexes kept per process: an ablation's twin per game makes a new one every game."""
_INDEXES: dict[tuple, ReaderIndex] = {}


def reader_index(manual, game) -> ReaderIndex:
    """The reader's index of a stored manual for a game's vocabulary (one per process)."""
    identity = manual_identity(manual)
    key = (identity["content_sha256"], game.name, getattr(game, "ruleset", None) and
           getattr(game.ruleset, "name", None))
    index = _INDEXES.get(key)
    if index is None:
        if len(_INDEXES) >= INDEX_LIMIT:
            _INDEXES.pop(next(iter(_INDEXES)))
        vocabulary = game.label_vocabulary() or {}
        index = _INDEXES[key] = ReaderIndex.build(manual, vocabulary)
    return index


def key_of(state: State, agent: AgentId, actions) -> tuple:
    return (tuple(state.agent_labels(agent)), tuple(state.state_labels(agent)),
            tuple(state.actions_labels(agent, actions)))


class TextPrior:
    def __init__(self, index: ReaderIndex, model: dict,
                 kind: Literal["policy", "value"] = "policy"):
        torch.set_num_threads(1)
        self.index = index
        self.model = model
        self.kind = kind
        self.net = net_for(model, index.feature_names)
        self.net.eval()
        self.cache: dict[tuple, np.ndarray] = {}

    def distribution(self, key: tuple) -> np.ndarray:
        p = self.cache.get(key)
        if p is None:
            if len(self.cache) >= CACHE_LIMIT:
                self.cache.clear()
            with torch.no_grad():
                logp, _ = self.net(collate([build_query(self.index, *key)]))
            p = self.cache[key] = logp.exp().numpy().astype(float)
        return p

    def __call__(self, state: State, agent: AgentId, actions: list[Action]) -> np.ndarray:
        p = self.distribution(key_of(state, agent, actions))
        return p / p.max() if self.kind == "value" else p

    def explain(self, state: State, agent: AgentId, actions, *, top: int = 3) -> dict:
        """The reader's side of one decision: its most relevant sentences (and NULL's share)
        and its most advised actions."""
        key = key_of(state, agent, actions)
        query = build_query(self.index, *key)
        with torch.no_grad():
            logp, r = self.net(collate([query]))
        p, r = logp.exp().numpy(), r.numpy()
        sentences = query.candidates.sentences
        order = np.argsort(-r[:-1], kind="stable")[:top]
        best = np.argsort(-p, kind="stable")[:top]
        return {
            "prior_null": float(r[-1]),
            "prior_sentences": [{"sentence": int(sentences[i]), "relevance": float(r[i]),
                                 "text": self.index.texts[int(sentences[i])]} for i in order],
            "prior_top": [{"action": list(actions[i]), "p": float(p[i]),
                           "labels": list(key[2][i])} for i in best],
        }  # fmt: skip


def load_reader(path: str | Path | None) -> dict:
    """A reader file's model, or the hand-set default for None."""
    return default_model() if path is None else load_model(path)


def make_text_prior(manual, game, reader: str | Path | dict | None,
                    kind: Literal["policy", "value"] = "policy") -> TextPrior:
    """The prior of a stored manual under a reader file (None: the untrained default),
    refused in one line when the reader was trained on another manual or game."""
    from nlmcs.model.manuals import resolve_manual

    stored = resolve_manual(manual)
    index = reader_index(stored, game)
    model = reader if isinstance(reader, dict) else load_reader(reader)
    check_fits(model, index.identity, game)
    return TextPrior(index, model, kind)
