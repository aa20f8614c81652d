"""uct-corpus, flat-ucb and flat-ucb-corpus on the toy game, with a corpus of its built-in play."""

from __future__ import annotations

import json
import math
import pickle

import numpy as np
import pytest
from toy_game import ToyGame, make_manual

from corpus.live import NaiveBayesRollout
from corpus.store import ingest, load_corpus
from nlmcs.errors import UserInputError
from nlmcs.games.base import Action, step
from nlmcs.games.runner import GameHook, play_game
from nlmcs.methods import CorpusOptions, make_planner
from nlmcs.model.config import ModelConfig
from nlmcs.search.config import SearchConfig
from nlmcs.search.evaluator import ConstantEvaluator
from nlmcs.search.flat_ucb import FlatUCBPlanner
from nlmcs.search.mc_rollouts import RolloutCore
from nlmcs.search.uct import UCTPlanner


class _LogHook(GameHook):
    """Writes the nlmcs-corpus/1 lines of one toy game (the civ engine has its own recorder)."""

    def __init__(self, lines: list[str], game_id: str):
        self.lines = lines
        self.game_id = game_id

    def on_start(self, game, state, seed, players_meta):
        self.lines.append(json.dumps({
            "type": "game", "format": "nlmcs-corpus/1", "game_id": self.game_id, "game": "toy",
            "ruleset": "toy", "ruleset_sha256": "", "seed": seed, "config": {},
            "players": players_meta, "state_features": game.state_feature_names()}))

    def on_turn(self, state):
        self.lines.append(json.dumps({"type": "turn", "game_id": self.game_id,
                                      "turn": state.turn, "state": state.to_json()}))

    def on_decision(self, before, state, turn, player, agent, action, applied, after):
        self.lines.append(json.dumps({
            "type": "decision", "game_id": self.game_id, "turn": turn, "player": player,
            "agent": agent, "agent_labels": list(state.agent_labels(agent)),
            "action": {"kind": action.kind, "arg": action.arg}, "action_type": action.kind,
            "applied": applied, "state_vector": [float(x) for x in before],
            "after_vector": [float(x) for x in after]}))

    def on_end(self, state, result):
        self.lines.append(json.dumps({"type": "result", "game_id": self.game_id,
                                      "turns": result.turns, "winner": result.winner,
                                      "scores": result.scores}))


@pytest.fixture
def toy_corpus(tmp_path, monkeypatch):
    monkeypatch.setenv("NLMCS_DATA", str(tmp_path / "data"))
    game = ToyGame(units=2, max_turns=6)
    lines: list[str] = []
    for seed in range(6):
        play_game(game, {0: game.policy("builtin"), 1: game.policy("random")}, seed=seed,
                  hooks=[_LogHook(lines, f"toy-{seed}")])
    log = tmp_path / "toy.jsonl"
    log.write_text("\n".join(lines) + "\n")
    ingest([log], name="toy")
    return game, load_corpus("toy")


def _config(**kw):
    return SearchConfig(**{"rollouts": 40, "depth": 3, "opponent": "random", **kw})


def test_flat_ucb_finds_the_scoring_action():
    game = ToyGame(units=1, max_turns=4)
    state = game.new_initial_state(0)
    state.terrain[0][0] = 0  # grassland: irrigate scores
    planner = make_planner("flat-ucb", game=game, search_config=_config(rollouts=60), seed=1)
    assert isinstance(planner, FlatUCBPlanner)
    move = planner.choose(state, 0, np.random.default_rng(0))
    assert move["unit:0:0"] == Action("irrigate")
    assert set(move) == set(state.agents(0))


def test_paper_mode_seeds_flat_ucb_arms_with_ten_visits(toy_corpus):
    game, corpus = toy_corpus
    planner = make_planner("flat-ucb-corpus", game=game,
                           search_config=_config(prior_mode="visits"), seed=0,
                           corpus=CorpusOptions(corpus=corpus.directory))
    state = game.new_initial_state(3)
    arms = planner.arms(state, "unit:0:0")
    seeded = [n for n in arms.values() if n.n > 0]
    assert seeded and all(n.n == 10 for n in seeded)  # prior_visits virtual visits
    assert all(0.0 <= n.mean <= 1.0 for n in seeded)
    move = planner.choose(state, 0, np.random.default_rng(0))
    assert all(a in state.legal_actions(agent) for agent, a in move.items())


def test_uct_corpus_leaves_unseeded_children_empty(toy_corpus):
    game, corpus = toy_corpus
    calls = []

    def prior(state, agent, actions):
        calls.append(agent)
        return [0.9] + [math.nan] * (len(actions) - 1)

    planner = UCTPlanner(game=game, config=_config(rollouts=5, prior_mode="visits"), seed=0,
                         prior=prior)
    state = game.new_initial_state(1)
    planner.choose(state, 0, np.random.default_rng(0))
    root = planner.roots["unit:0:0"]
    first, *rest = root.children.values()
    assert first.n >= 10 and first.total >= 9.0
    assert all(c.n < 10 for c in rest) and calls
    real = make_planner("uct-corpus", game=game, search_config=_config(rollouts=10), seed=0,
                        corpus=CorpusOptions(corpus="toy", utility="result"))
    move = real.choose(state, 0, np.random.default_rng(0))
    assert set(move) == set(state.agents(0))


def test_typed_rollouts_take_corpus_type_weights(toy_corpus):
    game, corpus = toy_corpus
    planner = make_planner("flat-ucb-corpus", game=game, search_config=_config(rollout="typed"),
                           seed=0, corpus=CorpusOptions(corpus="toy"))
    weights = planner.random_policy.type_weights
    assert weights and abs(sum(weights.values()) - 1) < 1e-9
    assert set(weights) <= {"irrigate", "mine", "wait", "move", "research"}
    plain = make_planner("flat-ucb", game=game, search_config=_config(rollout="typed"), seed=0,
                         corpus=CorpusOptions(corpus="toy"))
    assert plain.random_policy.type_weights is None  # only the corpus methods read the corpus
    nb = make_planner("uct-corpus", game=game, search_config=_config(rollouts=5), seed=0,
                      corpus=CorpusOptions(corpus="toy", rollout_policy="naive-bayes",
                                           prior="naive-bayes"))
    move = nb.choose(game.new_initial_state(2), 0, np.random.default_rng(0))
    assert len(move) == 3


def test_corpus_of_another_feature_list_is_refused(toy_corpus, monkeypatch):
    game, corpus = toy_corpus
    monkeypatch.setattr(game, "state_feature_names", lambda: ["score", "turn", "gold"])
    with pytest.raises(UserInputError, match="other state features"):
        make_planner("uct-corpus", game=game, search_config=_config(), seed=0,
                     corpus=CorpusOptions(corpus="toy"))


def test_text_corpus_plays_legal_moves_and_repeats_itself_for_a_seed(toy_corpus):
    game, corpus = toy_corpus

    def play(seed: int) -> list[dict]:
        planner = make_planner("text-corpus", game=game, manual=make_manual(), seed=seed,
                               corpus=CorpusOptions(corpus=corpus.directory),
                               search_config=_config(rollouts=6, depth=2, batch=3),
                               model_config=ModelConfig(min_count=1))
        assert planner.core.prior is not None and planner.core.prior.kind == "policy"
        state, rng, moves = game.new_initial_state(4), np.random.default_rng(seed), []
        for _ in range(3):
            move = planner.choose(state, 0, rng)
            assert set(move) == set(state.agents(0))
            assert all(a in state.legal_actions(agent) for agent, a in move.items())
            moves.append(move)
            step(state, 0, move, {1: game.policy("random")}, rng)
        planner.close()
        return moves

    assert play(7) == play(7)


def test_text_corpus_rollouts_explore_with_the_corpus_rollout_policy(toy_corpus, monkeypatch):
    game, corpus = toy_corpus
    calls = []
    original = NaiveBayesRollout.choose

    def counted(self, state, agent, actions, rng):
        calls.append(agent)
        return original(self, state, agent, actions, rng)

    monkeypatch.setattr(NaiveBayesRollout, "choose", counted)
    cfg = _config(rollouts=6, depth=3, batch=3, epsilon_low=1.0, epsilon_high=1.0)
    planner = make_planner("text-corpus", game=game, manual=make_manual(), seed=0,
                           corpus=CorpusOptions(corpus=corpus.directory,
                                                rollout_policy="naive-bayes"),
                           search_config=cfg, model_config=ModelConfig(min_count=1))
    assert isinstance(planner.core.random_policy, NaiveBayesRollout)
    shipped = pickle.loads(pickle.dumps(planner.core))  # as a worker process receives it
    assert isinstance(shipped.random_policy, NaiveBayesRollout)
    planner.choose(game.new_initial_state(4), 0, np.random.default_rng(0))
    # every move explores; below the root (biased by the corpus prior) each one is the policy's
    assert len(calls) >= cfg.rollouts * len(game.new_initial_state(4).agents(0))
    planner.close()


def test_root_bias_steers_the_first_move_of_every_rollout():
    game = ToyGame(units=1, max_turns=4)
    state = game.new_initial_state(0)
    cfg = _config(depth=1, prior_floor=0.1)

    def first_moves(prior) -> list[Action]:
        core = RolloutCore(game, ConstantEvaluator(), cfg, prior=prior)
        return [core.run(state, 0, 0, 5, k).first["unit:0:0"] for k in range(40)]

    def prefer_mine(state, agent, actions):
        return [1.0 if a.kind == "mine" else 0.0 for a in actions]

    biased = first_moves(prefer_mine)
    assert sum(a == Action("mine") for a in biased) >= 36  # Q ties; the prior breaks them
    plain = first_moves(None)
    assert sum(a == Action("mine") for a in plain) < 20  # uniform without a prior


def test_root_bias_is_recomputed_at_every_real_step_of_a_game_played_in_place():
    # the real game advances one state object, so the cached prior must follow the step
    game = ToyGame(units=1, max_turns=4)
    state, rng = game.new_initial_state(0), np.random.default_rng(0)
    seen: list[int] = []

    def prior(s, agent, actions):
        seen.append(s.turn)
        return [1.0] * len(actions)

    core = RolloutCore(game, ConstantEvaluator(), _config(depth=1), prior=prior)
    core.run(state, 0, 0, 5, 0)
    core.run(state, 0, 0, 5, 1)
    per_root = len(seen)
    assert per_root == len(state.agents(0))  # once per agent, not once per roll-out
    step(state, 0, {a: Action("wait") for a in state.agents(0)}, {1: game.policy("random")}, rng)
    core.run(state, 0, 1, 5, 0)
    assert len(seen) == 2 * per_root and seen[-1] == state.turn != seen[0]
