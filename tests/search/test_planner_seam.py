"""The seam every planner shares: the method table, typed options, the one roll-out loop, and a
search package that imports without the heavy libraries."""

from __future__ import annotations

import subprocess
import sys
import typing

import numpy as np
import pytest
from toy_game import ToyGame, make_manual

from nlmcs.errors import UserInputError
from nlmcs.methods import METHODS, PAPER_METHODS, CorpusOptions, get_method, make_planner
from nlmcs.model.config import ModelConfig, ModelKind
from nlmcs.search.config import SearchConfig
from nlmcs.search.rollout import Opponents, rollout, rollout_rng

HEAVY = ("sklearn", "torch", "spacy", "pandas", "corpus.naive_bayes", "nlmcs.model.network")


def _loaded_after(code: str) -> list[str]:
    probe = f"{code}\nimport sys\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_search_package_imports_without_heavy_libraries():
    code = ("import nlmcs.search.mc, nlmcs.search.uct, nlmcs.search.flat_ucb, "
            "nlmcs.methods, nlmcs.search.workers")  # fmt: skip
    assert _loaded_after(code) == []


def test_cli_parser_loads_neither_numpy_nor_the_model():
    code = "import nlmcs.cli\nnlmcs.cli.build_parser()"
    assert _loaded_after(code) == []
    numpy_probe = code + "\nimport sys\nassert 'numpy' not in sys.modules, 'numpy loaded'"
    subprocess.run([sys.executable, "-c", numpy_probe], check=True)


def test_method_table_speaks_one_vocabulary():
    kinds = set(typing.get_args(ModelKind))
    for method in METHODS.values():
        if method.name == "q0":  # the learning control: the MC loop with no model at all
            assert method.planner == "mc" and method.model is None and method.reads == "nothing"
        elif method.planner == "mc":
            assert method.model in kinds
            # every MC method but the controls (the random twin, the unrelated text, the
            # mismatched manual) and the corpus and text-prior hybrids is named for its model
            assert method.name in (method.model, f"{method.model}-meaning",
                                   f"{method.model}-{method.script}") or method.reads in (
                "random-twin", "unrelated", "mismatched") or (
                method.corpus and method.name == f"{method.model}-corpus") or (
                method.text_prior and method.name == f"{method.model}-prior")
        elif method.meaning:  # the trees read through the zero-shot meaning prior
            assert method.model is None and method.reads in ("manual", "random-twin")
            assert ("random" in method.name) == (method.reads == "random-twin")
        elif method.text_prior:  # the trees read only through the reader's prior
            assert method.model is None and method.reads in ("manual", "random-twin",
                                                             "mismatched")
            assert ("random-text" in method.name) == (method.reads == "random-twin")
        else:
            assert method.model is None and method.reads == "nothing"
    assert set(PAPER_METHODS) <= set(METHODS)
    with pytest.raises(UserInputError, match="unknown method 'nope'"):
        get_method("nope")


@pytest.mark.parametrize("method", PAPER_METHODS + ("flat-ucb", "q0"))
def test_each_method_builds_the_planner_its_table_row_names(method):
    game = ToyGame(units=1, max_turns=2)
    planner = make_planner(method, game=game, manual=make_manual(),
                           search_config=SearchConfig(rollouts=2, depth=1),
                           model_config=ModelConfig(min_count=1))  # fmt: skip
    row = METHODS[method]
    expected = {"mc": "MCPlanner", "uct": "UCTPlanner", "flat-ucb": "FlatUCBPlanner"}
    assert type(planner).__name__ == expected[row.planner]
    if method == "q0":
        assert type(planner.core.evaluator).__name__ == "ConstantEvaluator"
    elif row.planner == "mc":
        net = planner.core.evaluator.net
        assert net.config.kind == row.model
        assert (net.index is not None) == (row.reads != "nothing")
        if row.reads == "random-twin":
            assert net.index.name == "toy-random"
    move = planner.choose(game.new_initial_state(0), 0, np.random.default_rng(0))
    assert set(move) == set(game.new_initial_state(0).agents(0))
    planner.close()


@pytest.mark.parametrize("bad", [{"prior": "magic"}, {"utility": "two"},
                                 {"rollout_policy": "x"}, {"pool_size": 0}])  # fmt: skip
def test_corpus_options_refuse_unknown_values(bad):
    with pytest.raises(UserInputError, match="corpus"):
        CorpusOptions(**bad)


def test_rollout_plays_at_most_depth_turns_and_stops_at_the_end():
    game = ToyGame(units=1, max_turns=5)
    root = game.new_initial_state(0)
    seen = []

    def choose(state, depth):
        seen.append((state.turn, depth))
        return {a: state.legal_actions(a)[0] for a in state.agents(0)}

    opponents = Opponents(game, "builtin")
    r = rollout(root, 0, choose, config=SearchConfig(depth=3), opponents=opponents,
                rng=rollout_rng(0, 0, 0))
    assert seen == [(0, 0), (1, 1), (2, 2)] and root.turn == 0  # the root is never touched
    assert 0.0 <= r <= 1.0
    seen.clear()
    r = rollout(root, 0, choose, config=SearchConfig(depth=50), opponents=opponents,
                rng=rollout_rng(0, 0, 1))
    assert len(seen) == 5 and r in (0.0, 1.0, 0.5)  # the game ended after max_turns


def test_opponents_are_made_once_per_player():
    game = ToyGame(units=1)
    made = []
    real = game.policy
    game.policy = lambda spec: made.append(spec) or real(spec)
    opponents = Opponents(game, "builtin")
    state = game.new_initial_state(0)
    first = opponents.of(state, 0)
    assert list(first) == [1] and opponents.of(state, 0)[1] is first[1]
    assert list(opponents.of(state, 1)) == [0]
    assert made == ["builtin", "builtin"]


def test_rollouts_of_a_seed_draw_the_same_chance():
    a, b = rollout_rng(3, 1, 7), rollout_rng(3, 1, 7)
    assert a.random() == b.random()
    assert rollout_rng(3, 1, 8).random() != rollout_rng(3, 1, 7).random()
