"""The narrow seams between the search and what it consults: a value model answers four
questions, replication and explanations are capabilities asked for by type, and a tree's prior
and leaf are typed objects (nothing hung on a function)."""

from __future__ import annotations

import math
import pickle
import typing

import numpy as np
import pytest
from toy_game import ToyGame, make_manual

from nlmcs.errors import UserInputError
from nlmcs.methods import make_planner
from nlmcs.model.config import ModelConfig
from nlmcs.search.config import SearchConfig
from nlmcs.search.evaluator import (
    ConstantEvaluator,
    Evaluator,
    Explains,
    Replica,
    WarmsUp,
)
from nlmcs.search.mc import MCPlanner
from nlmcs.search.tree import ExplainedPrior, ProductPrior, prior_explanation


def _methods(protocol) -> set[str]:
    return {n for n in protocol.__dict__ if not n.startswith("_") and callable(
        getattr(protocol, n))} - set(typing.Protocol.__dict__)


def test_what_the_loop_asks_of_a_model_is_four_methods():
    assert _methods(Evaluator) == {"reset", "q_values", "datapoint", "learn"}
    assert _methods(WarmsUp) == {"warm_up"} and _methods(Explains) == {"explain"}
    const = ConstantEvaluator()
    assert isinstance(const, Evaluator)
    assert not isinstance(const, Replica | Explains | WarmsUp)


def test_a_roll_out_hands_on_a_replicas_prepared_form_else_its_datapoints():
    # Whether the evaluator replicates is kept per evaluator: one swapped in is asked again.
    game = ToyGame(units=1, max_turns=2)
    core = MCPlanner(game=game, evaluator=ConstantEvaluator(),
                     config=SearchConfig(rollouts=2, depth=1, workers=1), seed=0).core
    assert core.prepared(["a", "b"]) == ["a", "b"]  # no replica: the datapoints as they are
    text = make_planner("text", game=game, manual=make_manual(),
                        search_config=SearchConfig(rollouts=2, depth=1),
                        model_config=ModelConfig(min_count=1))
    core.evaluator = text.core.evaluator
    assert core.prepared([]) is None  # a replica's prepared form: nothing to learn from
    core.evaluator = ConstantEvaluator()
    assert core.prepared(["a"]) == ["a"]
    text.close()


def test_the_text_network_offers_every_capability():
    planner = make_planner("text", game=ToyGame(units=1, max_turns=2), manual=make_manual(),
                           search_config=SearchConfig(rollouts=2, depth=1),
                           model_config=ModelConfig(min_count=1))
    ev = planner.core.evaluator
    assert all(isinstance(ev, p) for p in (Evaluator, Replica, Explains, WarmsUp))
    planner.close()


def test_a_model_that_cannot_replicate_searches_in_one_process_only():
    game = ToyGame(units=1, max_turns=3)
    with pytest.raises(UserInputError, match="--workers 2: ConstantEvaluator cannot be copied"):
        MCPlanner(game=game, evaluator=ConstantEvaluator(),
                  config=SearchConfig(rollouts=2, depth=1, workers=2), seed=0)
    planner = MCPlanner(game=game, evaluator=ConstantEvaluator(),
                        config=SearchConfig(rollouts=2, depth=1, workers=1, log_decisions=True),
                        seed=0)
    move = planner.choose(game.new_initial_state(0), 0, np.random.default_rng(0))
    assert set(move) == set(game.new_initial_state(0).agents(0))
    # it explains nothing, and the decision log still holds the move and the candidates' Q
    assert planner.last_log and all("sentences" not in r and r["candidates"]
                                    for r in planner.last_log)
    planner.close()


class Reads:
    """A prior that says what it read."""

    def __call__(self, state, agent, actions):
        return [1.0] + [0.0] * (len(actions) - 1)

    def explain(self, state, agent, actions):
        return {"read": agent}


def _plain(state, agent, actions):
    return [math.nan] * len(actions)


def test_a_product_of_priors_explains_itself_by_the_part_that_reads():
    game = ToyGame(units=1, max_turns=2)
    state = game.new_initial_state(0)
    agent, actions = state.agent_actions(0)[0]
    both = ProductPrior((_plain, Reads()), "policy", 0.1)
    assert isinstance(both, ExplainedPrior)
    assert prior_explanation(both, state, agent, actions) == {"read": agent}
    assert prior_explanation(ProductPrior((_plain,), "policy", 0.1), state, agent, actions) == {}
    assert prior_explanation(_plain, state, agent, actions) == {}  # a plain function explains none
    p = both(state, agent, list(actions))
    assert p.sum() == pytest.approx(1.0) and p[0] == p.max()
    # the value kind is scaled to [0, 1]; a product travels to other processes
    value = ProductPrior((Reads(),), "value", 0.1)
    assert pickle.loads(pickle.dumps(value))(state, agent, list(actions)).max() == 1.0
