"""Priors, queries and policies against a tiny game written to the `nlmcs.games.base` interface."""

from __future__ import annotations

import numpy as np
import pytest
from corpus_logs import game_lines, write_log

from corpus.live import (
    CorpusPrior,
    NaiveBayesRollout,
    agent_owner,
    candidate_diffs,
    corpus_similarity,
    query,
    type_weights,
)
from corpus.naive_bayes import NaiveBayesActionModel
from corpus.similarity import SimilarityConfig
from corpus.store import ingest, load_corpus
from nlmcs.errors import UserInputError
from nlmcs.games.base import Action, State

EFFECTS = {"build_city": (1, 0, 0, 0, 0, 5), "irrigate": (0, 0, 2, 0, 0, 1), "fortify": (0,) * 6}


class Farm(State):
    """Two players, each with one settlers unit; the state vector matches the test logs'."""

    def __init__(self, vec=None):
        self.turn = 0
        self.vec = {0: np.array([1, 1, 3, 1, 1, 2.0]), 1: np.array([1, 1, 1, 1, 1, 1.0])}
        if vec is not None:
            self.vec[0] = np.asarray(vec, dtype=float)

    def clone(self):
        c = Farm()
        c.turn = self.turn
        c.vec = {p: v.copy() for p, v in self.vec.items()}
        return c

    @property
    def num_players(self):
        return 2

    def agents(self, player):
        return [f"unit:{player + 1}"]

    def legal_actions(self, agent):
        return [Action("build_city"), Action("irrigate"), Action("fortify")]

    def apply_action(self, agent, action, rng):
        player = int(agent.split(":")[1]) - 1
        self.vec[player] = self.vec[player] + np.asarray(EFFECTS[action.kind])
        return True

    def end_turn(self, rng):
        self.turn += 1

    def is_terminal(self):
        return False

    def winner(self):
        return None

    def score(self, player):
        return float(self.vec[player][-1])

    def stats(self, player):
        return {"score": self.score(player)}

    def agent_labels(self, agent):
        return ("settlers",)

    def state_labels(self, agent):
        return ("grassland",)

    def action_labels(self, agent, action):
        return (action.kind.replace("_", " "),)

    def state_vector(self, player):
        return self.vec[player].astype(np.float32)

    def to_json(self):
        return {"turn": self.turn}


@pytest.fixture
def farm_corpus(tmp_path):
    ingest([write_log(tmp_path / "a.jsonl", [game_lines(f"g{i}", seed=i, turns=6)
                                             for i in range(8)])], name="farm")
    return load_corpus("farm")


def test_candidate_diffs_apply_each_action_to_a_clone():
    state = Farm()
    player, before, diffs = candidate_diffs(state, "unit:1", state.legal_actions("unit:1"),
                                            np.random.default_rng(0))
    assert player == 0
    np.testing.assert_array_equal(before, [1, 1, 3, 1, 1, 2])
    np.testing.assert_array_equal(diffs[1], EFFECTS["irrigate"])
    np.testing.assert_array_equal(state.state_vector(0), before)  # the live state is untouched
    with pytest.raises(UserInputError, match="no agent 'unit:9'"):
        agent_owner(state, "unit:9")


class Stranger(Farm):
    def agent_labels(self, agent):
        return ("catapult",)


def test_prior_values_and_silence(farm_corpus):
    prior = CorpusPrior(corpus_similarity(farm_corpus, SimilarityConfig(pool_size=1000)))
    state = Farm()
    values = prior(state, "unit:1", state.legal_actions("unit:1"))
    assert values is not None and len(values) == 3
    # recorded settlers build cities, irrigate or move (no change, credited to fortify)
    assert all(0 < v <= 1 for v in values)
    assert prior(Stranger(), "unit:1", state.legal_actions("unit:1")) is None


def test_query_lists_credited_pairs_with_relevance(farm_corpus):
    rows = query(farm_corpus, Farm(), "unit:1", k=3, config=SimilarityConfig(pool_size=50))
    assert [r.action.kind for r in rows] == ["build_city", "irrigate", "fortify"]
    assert sum(r.pairs for r in rows) == 50
    build = rows[0]
    assert build.top and all(t["agent"] == "settlers" for t in build.top)
    assert build.top[0]["action"] == "build_city"  # the exact recorded effect ranks first
    rel = [t["relevance"] for t in build.top]
    assert rel == sorted(rel, reverse=True)
    fortify = rows[2]
    assert fortify.top[0]["action"] == "move:north"  # no change, like a recorded move


def test_type_weights_are_frequencies(farm_corpus):
    w = type_weights(farm_corpus)
    assert sum(w.values()) == pytest.approx(1.0)
    assert w["research"] == pytest.approx(0.25)
    only = type_weights(farm_corpus, agent_label="settlers")
    assert set(only) <= {"build_city", "irrigate", "move"}


def test_naive_bayes_rollout_plays_legal_actions(farm_corpus):
    table = farm_corpus.decisions
    model = NaiveBayesActionModel().fit(farm_corpus.states, table["agent_label"].to_numpy(),
                                        table["action_key"].to_numpy())
    policy = NaiveBayesRollout(model, epsilon=0.0)
    rng = np.random.default_rng(0)
    state = Farm()
    picks = [policy.choose(state, "unit:1", state.legal_actions("unit:1"), rng).kind
             for _ in range(200)]
    assert set(picks) <= {"build_city", "irrigate", "fortify"}
    # fortify was never recorded for settlers: it gets only the floor probability
    assert picks.count("fortify") < 20
    joint = policy.joint_action(state, 1, rng)
    assert list(joint) == ["unit:2"]
