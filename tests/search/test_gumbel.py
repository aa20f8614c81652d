"""Gumbel root selection with sequential halving: the rounds split the budget as the paper does,
the halving keeps the better half by g + log p + sigma(Q), and a search at a small budget finds
the move that scores where the prior points elsewhere."""

import numpy as np
import pytest
from toy_game import ToyGame

from nlmcs.games.base import Action
from nlmcs.search.config import SearchConfig
from nlmcs.search.gumbel import GumbelRoot, round_ends, rounds
from nlmcs.search.tree import Node
from nlmcs.search.uct import UCTPlanner


def test_rounds_split_the_budget_over_log2_of_the_moves():
    assert rounds(30, 8) == [10, 10, 10]
    assert rounds(31, 8) == [10, 10, 11]
    assert rounds(12, 5) == [4, 4, 4]  # ceil(log2 5) = 3 rounds
    assert rounds(7, 1) == [7] and rounds(7, 2) == [7]


def test_halving_keeps_the_better_half_by_noise_prior_and_value():
    children = {Action(f"a{i}"): Node(p=p) for i, p in enumerate((0.4, 0.3, 0.2, 0.1))}
    root = GumbelRoot(children, k=4, rng=np.random.default_rng(0), c_visit=50, c_scale=1)
    assert len(root.left) == 4
    assert [root.forced() for _ in range(8)] == root.left * 2  # every move left, in turn
    for action, child in children.items():  # one move clearly best by its roll-outs
        for _ in range(2):
            child.add(1.0 if action == Action("a3") else 0.0)
    root.halve()
    assert len(root.left) == 2 and Action("a3") in root.left
    root.halve()
    assert root.left == [Action("a3")] and root.choice() == Action("a3")
    assert round_ends(30, [root]) == {29}  # one move left: a single round


def test_k_limits_the_moves_sampled_from_the_prior():
    children = {Action(f"a{i}"): Node(p=0.1) for i in range(10)}
    root = GumbelRoot(children, k=3, rng=np.random.default_rng(1), c_visit=50, c_scale=1)
    assert len(root.left) == 3 and len(set(root.left)) == 3


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_small_budget_finds_the_scoring_move_the_prior_advises_against(seed):
    game = ToyGame(units=1, max_turns=10)  # roll-outs end before the game: a score ratio

    def prior(state, agent, actions):  # the prior favours waiting
        return [0.7 if a.kind == "wait" else 0.1 for a in actions]

    config = SearchConfig(rollouts=16, depth=2, root="gumbel", gumbel_k=4, prior_mode="puct")
    planner = UCTPlanner(game=game, config=config, seed=seed, prior=prior)
    scoring = {"grassland": "irrigate", "hills": "mine"}
    state = next(s for s in map(game.new_initial_state, range(50))
                 if s.state_labels("unit:0:0")[0] in scoring)  # a settler that can score
    unit = "unit:0:0"
    move = planner.choose(state, 0, np.random.default_rng(seed))
    assert move[unit] == Action(scoring[state.state_labels(unit)[0]])
    # 16 roll-outs over 4 moves: a round of 2 each, then the better 2 get 4 more each
    tried = sorted(c.real for c in planner.roots[unit].children.values())
    assert tried == [2, 2, 6, 6]


def test_the_same_seed_gives_the_same_moves_and_tree_mode_is_unchanged():
    game = ToyGame(units=2, max_turns=3)
    prior = lambda state, agent, actions: [1.0] * len(actions)  # noqa: E731
    state = game.new_initial_state(3)
    moves = []
    for _ in range(2):
        planner = UCTPlanner(game=game, config=SearchConfig(rollouts=12, depth=2, root="gumbel"),
                             seed=4, prior=prior)
        moves.append(planner.choose(state.clone(), 0, np.random.default_rng(0)))
    assert moves[0] == moves[1]
    # without a prior, the Gumbel root has nothing to sample from: the tree's own rule plays
    plain = UCTPlanner(game=game, config=SearchConfig(rollouts=12, depth=2, root="gumbel"),
                       seed=4)
    tree = UCTPlanner(game=game, config=SearchConfig(rollouts=12, depth=2), seed=4)
    assert plain.choose(state.clone(), 0, np.random.default_rng(0)) == tree.choose(
        state.clone(), 0, np.random.default_rng(0))
