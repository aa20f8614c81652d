"""Forced playouts at the PUCT root and the pruning of their visits from self-play's targets."""

from __future__ import annotations

import math

import numpy as np
import pytest
from toy_game import ToyGame

from nlmcs.games.base import Action
from nlmcs.net.selfplay import _visit_shares
from nlmcs.net.spec import TrainSpec
from nlmcs.search.config import SearchConfig, identity_dict
from nlmcs.search.tree import Node, forced_choice, pruned_visits
from nlmcs.search.uct import UCTPlanner


def _node(real: int, mean: float, p: float) -> Node:
    node = Node(n=real, total=real * mean, p=p)
    node.real = real
    return node


def test_the_move_furthest_below_its_share_is_forced_first():
    children = {Action("a"): _node(40, 0.5, 0.8), Action("b"): _node(1, 0.4, 0.1),
                Action("c"): _node(0, 0.0, 0.1)}
    root = Node()
    root.real = 41
    options = list(children)
    # sqrt(2 * 0.1 * 41) = 2.86: b is 1.86 short, c 2.86; a has its share
    assert forced_choice(root, options, children, 2.0) == Action("c")
    children[Action("c")] = _node(3, 0.2, 0.1)
    root.real = 44  # sqrt(8.8) = 2.97: b is short, c is not
    assert forced_choice(root, options, children, 2.0) == Action("b")
    children[Action("b")] = _node(3, 0.4, 0.1)
    assert forced_choice(root, options, children, 2.0) is None


def _toy_state(game):
    return next(s for s in map(game.new_initial_state, range(50))
                if s.state_labels("unit:0:0")[0] in ("grassland", "hills"))


def _prior(state, agent, actions):  # nearly all of the prior on waiting
    return [0.97 if a.kind == "wait" else 0.001 for a in actions]


@pytest.mark.parametrize("seed", [0, 1])
def test_forced_playouts_give_every_root_move_its_share_of_a_small_budget(seed):
    game = ToyGame(units=1, max_turns=10)
    state = _toy_state(game)
    unit = "unit:0:0"

    def tried(k: float) -> dict:
        config = SearchConfig(rollouts=40, depth=2, prior_mode="puct", puct_c=0.3,
                              prior_floor=0.1, forced_k=k)
        planner = UCTPlanner(game=game, config=config, seed=seed, prior=_prior)
        planner.choose(state.clone(), 0, np.random.default_rng(seed))
        return planner.roots[unit].children

    forced, plain = tried(2.0), tried(0.0)
    for child in forced.values():
        # after the last roll-out each move has at least its share of the 39 before it, less one
        assert child.real >= math.floor(math.sqrt(2.0 * child.p * 39))
    least = min(c.real for c in plain.values())
    assert min(c.real for c in forced.values()) > least  # the plain search starves a move


def test_without_forced_playouts_the_search_and_its_identity_are_unchanged():
    game = ToyGame(units=2, max_turns=3)
    state = game.new_initial_state(3)
    moves = []
    for config in (SearchConfig(rollouts=12, depth=2, prior_mode="puct"),
                   SearchConfig(rollouts=12, depth=2, prior_mode="puct", forced_k=0.0)):
        planner = UCTPlanner(game=game, config=config, seed=4, prior=_prior)
        moves.append(planner.choose(state.clone(), 0, np.random.default_rng(0)))
    assert moves[0] == moves[1]
    assert "forced_k" not in identity_dict(SearchConfig())
    assert identity_dict(SearchConfig(forced_k=2.0))["forced_k"] == 2.0
    assert "forced_k" not in TrainSpec().identity()
    assert TrainSpec(forced_k=2.0).identity()["forced_k"] == 2.0


def test_pruning_takes_the_forced_visits_back_out_of_the_target():
    a, b, c, d = (Action(x) for x in "abcd")
    children = {a: _node(30, 0.6, 0.7), b: _node(6, 0.55, 0.1), c: _node(2, 0.1, 0.1),
                d: _node(2, 0.7, 0.1)}
    order = [a, b, c, d]
    assert list(pruned_visits(children, order, 0.0, 0.3)) == [30, 6, 2, 2]
    out = pruned_visits(children, order, 2.0, 0.3)
    # N = 40, sqrt(2 * 0.1 * 40) = 2.83 -> up to 2 visits back; the best keeps all of its own
    assert out[0] == 30
    assert out[1] == 4  # 6 - 2, and its PUCT score stays below the best's at 4 visits
    assert out[2] == 0  # down to one roll-out or none: pruned outright
    assert out[3] == 2  # a better mean than the best's: its visits are no forced ones
    # the self-play target is the pruned visits, normalised
    roots = {"unit:0:0": Node()}
    roots["unit:0:0"].children = children
    shares = _visit_shares(roots, ["unit:0:0"], [order], 2.0, 0.3)[0]
    assert np.allclose(shares, out / out.sum())
    plain = _visit_shares(roots, ["unit:0:0"], [order])[0]
    assert np.allclose(plain, np.array([30, 6, 2, 2]) / 40)
