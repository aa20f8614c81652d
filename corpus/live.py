"""The corpus at play time: priors, queries, type weights and a naive-Bayes roll-out policy.

Everything here talks to games only through `nlmcs.games.base`: the live action vector of a
candidate is found the way mining found the recorded ones, by applying the action to a clone of the
state and subtracting the acting player's state vector before from the one after (Dobre &
Lascarides 2015). Typed roll-out weights follow Dobre & Lascarides 2017; the naive-Bayes policy
follows Ontañón 2016.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from corpus.mine import action_key
from corpus.similarity import CorpusSimilarity, SimilarityConfig
from corpus.store import StoredCorpus
from nlmcs.errors import UserInputError
from nlmcs.games.base import Action, AgentId, State

if TYPE_CHECKING:
    from corpus.naive_bayes import NaiveBayesActionModel


def agent_owner(state: State, agent: AgentId) -> int:
    """The player whose agent this is; `UserInputError` when no player has it this turn."""
    for player in range(state.num_players):
        if agent in state.agents(player):
            return player
    raise UserInputError(f"no agent {agent!r} acts in this state (turn {state.turn})")


def candidate_diffs(state: State, agent: AgentId, actions: list[Action],
                    rng: np.random.Generator) -> tuple[int, np.ndarray, np.ndarray]:
    """(player, state vector before, (m, F) after-minus-before for each candidate action)."""
    player = agent_owner(state, agent)
    before = np.asarray(state.state_vector(player), dtype=np.float32)
    diffs = np.empty((len(actions), len(before)), dtype=np.float32)
    for i, action in enumerate(actions):
        trial = state.clone()
        trial.apply_action(agent, action, rng)
        diffs[i] = np.asarray(trial.state_vector(player), dtype=np.float32) - before
    return player, before, diffs


def agent_word(state: State, agent: AgentId) -> str:
    labels = state.agent_labels(agent)
    return labels[0] if labels else ""


def corpus_similarity(corpus: StoredCorpus, config: SimilarityConfig | None = None
                      ) -> CorpusSimilarity:
    table = corpus.decisions
    return CorpusSimilarity(
        corpus.states, corpus.actions, action_types=table["action_type"].to_numpy(),
        agent_labels=table["agent_label"].to_numpy(), utility=table["result"].to_numpy(),
        applied=table["applied"].to_numpy(), config=config)


PriorKind = Literal["value", "policy"]
"""value: the paper's mean R x U per candidate (NaN where unseeded), for virtual visits; policy:
non-negative weights over the candidates (the support of the credited pairs), for PUCT."""


class CorpusPrior:
    """`prior(state, agent, actions)` for the tree planners from corpus similarity.

    Returns None when the corpus says nothing about this agent's situation. Chance inside a trial
    `apply_action` (combat) draws from a generator made from `seed` at every call, so a prior is
    a function of its arguments: the same question gets the same answer in any process.
    """

    def __init__(self, similarity: CorpusSimilarity, *, kind: PriorKind = "value",
                 seed: int = 0) -> None:
        self.similarity = similarity
        self.kind = kind
        self.seed = seed

    def __call__(self, state: State, agent: AgentId, actions: list[Action]) -> list[float] | None:
        if not actions:
            return None
        _, before, diffs = candidate_diffs(state, agent, actions, np.random.default_rng(self.seed))
        credit = self.similarity.credit(before, diffs, agent_label=agent_word(state, agent),
                                        types=[state.action_type(a) for a in actions],
                                        details=False)
        if credit.count.sum() == 0:
            return None
        return [float(v) for v in (credit.prior if self.kind == "value" else credit.support)]


class NaiveBayesPrior:
    """Tree prior from the naive-Bayes model (Ontañón 2016): p / max p over the candidates as a
    value, or p itself as a policy."""

    def __init__(self, model: NaiveBayesActionModel, *, kind: PriorKind = "value") -> None:
        self.model = model
        self.kind = kind

    def __call__(self, state: State, agent: AgentId, actions: list[Action]) -> list[float] | None:
        if not actions:
            return None
        vec = np.asarray(state.state_vector(agent_owner(state, agent)), dtype=np.float32)
        p = self.model.candidate_probabilities(vec, agent_word(state, agent),
                                               [action_key(a.kind, a.arg) for a in actions])
        return [float(v) for v in (p / p.max() if self.kind == "value" else p)]


@dataclass(frozen=True)
class QueryRow:
    action: Action
    action_type: str
    prior: float  # NaN when no pair was credited
    pairs: int
    top: list[dict]  # the k most relevant credited pairs


def query(corpus: StoredCorpus, state: State, agent: AgentId, *, k: int = 10,
          config: SimilarityConfig | None = None, seed: int = 0) -> list[QueryRow]:
    """The most relevant recorded pairs for each legal action of `agent` in `state`."""
    similarity = corpus_similarity(corpus, config)
    actions = state.legal_actions(agent)
    _, before, diffs = candidate_diffs(state, agent, actions, np.random.default_rng(seed))
    credit = similarity.credit(before, diffs, agent_label=agent_word(state, agent),
                               types=[state.action_type(a) for a in actions])
    table = corpus.decisions
    rows = []
    for i, action in enumerate(actions):
        top = []
        for row, rel in zip(credit.pairs[i][:k], credit.relevance[i][:k], strict=True):
            rec = table.iloc[int(row)]
            top.append({"relevance": round(float(rel), 4), "game_id": rec["game_id"],
                        "turn": int(rec["turn"]), "player": int(rec["player"]),
                        "player_kind": rec["player_kind"], "agent": rec["agent_label"],
                        "action": rec["action_key"], "result": float(rec["result"])})
        rows.append(QueryRow(action=action, action_type=state.action_type(action),
                             prior=float(credit.prior[i]), pairs=int(credit.count[i]), top=top))
    return rows


def type_weights(corpus: StoredCorpus, *, agent_label: str | None = None) -> dict[str, float]:
    """Relative frequency of each action type among applied recorded actions (sums to 1)."""
    table = corpus.decisions
    table = table[table["applied"]]
    if agent_label is not None:
        table = table[table["agent_label"] == agent_label]
    counts = Counter(table["action_type"])
    total = sum(counts.values())
    if total == 0:
        raise UserInputError(f"corpus {corpus.name}: no applied decisions to weigh types by")
    return {t: c / total for t, c in counts.most_common()}


class NaiveBayesRollout:
    """Roll-out policy sampling actions from the naive-Bayes model (epsilon of them uniformly)."""

    def __init__(self, model: NaiveBayesActionModel, *, epsilon: float = 0.1) -> None:
        self.model = model
        self.epsilon = epsilon

    def choose(self, state: State, agent: AgentId, actions: list[Action],
               rng: np.random.Generator) -> Action:
        if len(actions) == 1 or rng.random() < self.epsilon:
            return actions[int(rng.integers(len(actions)))]
        vec = np.asarray(state.state_vector(agent_owner(state, agent)), dtype=np.float32)
        keys = [action_key(a.kind, a.arg) for a in actions]
        p = self.model.candidate_probabilities(vec, agent_word(state, agent), keys)
        return actions[int(rng.choice(len(actions), p=p))]

    def joint_action(self, state: State, player: int, rng: np.random.Generator
                     ) -> dict[AgentId, Action]:
        """Lets the model play a whole side, as a `Policy`."""
        return {a: self.choose(state, a, state.legal_actions(a), rng)
                for a in state.agents(player)}
