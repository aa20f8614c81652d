"""How a prior informs the tree planners: the paper's virtual visits, and PUCT's policy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from toy_game import ToyGame

from nlmcs.games.base import Action
from nlmcs.search.config import SearchConfig
from nlmcs.search.flat_ucb import FlatUCBPlanner
from nlmcs.search.tree import (
    Node,
    final_choice,
    pick,
    policy,
    puct,
    seeded_children,
    selection,
    ucb1,
)
from nlmcs.search.uct import UCTPlanner


def _prefer(kind: str, weight: float = 1.0):
    def prior(state, agent, actions):
        return [weight if a.kind == kind else math.nan for a in actions]
    return prior


def test_policy_normalises_mixes_a_floor_and_reads_nan_as_no_support():
    p = policy([3.0, 1.0, math.nan, 0.0], 4, floor=0.2)
    np.testing.assert_allclose(p, [0.8 * 0.75 + 0.05, 0.8 * 0.25 + 0.05, 0.05, 0.05])
    assert p.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(policy(None, 3, floor=0.1), [1 / 3] * 3)  # no opinion: uniform


def test_puct_scores_an_unvisited_child_at_its_parents_mean():
    parent = Node()
    for r in (0.2, 0.4):
        parent.add(r)
    favoured, other = Node(p=0.9), Node(p=0.1)
    assert puct(parent, favoured, 1.0) == pytest.approx(0.3 + 0.9 * math.sqrt(2))
    assert puct(parent, favoured, 1.0) > puct(parent, other, 1.0)
    other.add(1.0)  # a visit with a high reward: Q now counts, the bonus shrinks with 1 + n
    assert puct(parent, other, 1.0) == pytest.approx(1.0 + 0.1 * math.sqrt(2) / 2)
    assert ucb1(parent, Node(), 1.0) == math.inf  # UCB1 tries every child first


def test_the_prior_mode_picks_the_rule_and_how_children_start():
    game = ToyGame(units=1)
    state = game.new_initial_state(0)
    actions = state.legal_actions("unit:0:0")
    prior = _prefer("mine", 0.9)
    paper = SearchConfig(prior_mode="visits", prior_visits=10)
    kids = seeded_children(state, "unit:0:0", actions, prior, paper)
    assert kids[Action("mine")].n == 10 and kids[Action("mine")].mean == pytest.approx(0.9)
    assert all(c.n == 0 for a, c in kids.items() if a.kind != "mine")
    assert selection(paper, prior) == (ucb1, paper.uct_c)
    pol = SearchConfig(prior_mode="puct", prior_floor=0.2, puct_c=2.0)
    kids = seeded_children(state, "unit:0:0", actions, prior, pol)
    assert all(c.n == 0 and c.total == 0 for c in kids.values())  # no fake visits
    assert kids[Action("mine")].p == pytest.approx(0.8 + 0.2 / len(actions))
    assert sum(c.p for c in kids.values()) == pytest.approx(1.0)
    assert selection(pol, prior) == (puct, 2.0)
    assert selection(pol, None) == (ucb1, pol.uct_c)  # no prior: plain UCB1
    rng = np.random.default_rng(0)
    assert pick(Node(), actions, kids, 2.0, rng, puct) == Action("mine")


def test_uct_under_puct_keeps_statistics_on_the_reward_scale():
    game = ToyGame(units=1, max_turns=3)
    state = game.new_initial_state(0)
    cfg = SearchConfig(rollouts=12, depth=2, opponent="random", prior_mode="puct")
    planner = UCTPlanner(game=game, config=cfg, seed=0, prior=_prefer("wait"))
    move = planner.choose(state, 0, np.random.default_rng(0))
    root = planner.roots["unit:0:0"]
    assert sum(c.n for c in root.children.values()) == cfg.rollouts  # real visits only
    assert all(c.n == c.real and 0.0 <= c.mean <= 1.0 for c in root.children.values())
    assert max(root.children.values(), key=lambda c: c.n) is root.children[Action("wait")]
    assert move["unit:0:0"] == Action("wait")


def test_flat_ucb_under_puct_plays_its_most_visited_arm():
    game = ToyGame(units=1, max_turns=3)
    state = game.new_initial_state(0)
    cfg = SearchConfig(rollouts=10, depth=1, opponent="random", puct_c=5.0, log_decisions=True)
    planner = FlatUCBPlanner(game=game, config=cfg, seed=0, prior=_prefer("move"))
    move = planner.choose(state, 0, np.random.default_rng(0))
    arms = {c["action"][0]: c for c in planner.last_log[1]["candidates"]}
    assert move["unit:0:0"] == Action("move", "north")
    assert arms["move"]["visits"] == max(c["visits"] for c in arms.values())
    assert arms["move"]["p"] > 0.9


def test_uct_under_visits_never_plays_a_move_it_did_not_try():
    # A prior of 0.0 on "wait" seeds it with 10 virtual visits and no real one; 8 roll-outs
    # leave every tried move with fewer visits than that, so counting virtual visits plays "wait".
    game = ToyGame(units=1, max_turns=3)
    state = game.new_initial_state(0)
    cfg = SearchConfig(rollouts=8, depth=2, opponent="random", prior_mode="visits",
                       prior_visits=10)
    planner = UCTPlanner(game=game, config=cfg, seed=0, prior=_prefer("wait", 0.0))
    move = planner.choose(state, 0, np.random.default_rng(0))
    for agent, root in planner.roots.items():
        assert root.children[Action("wait")].real == 0  # the prior kept it untried
        chosen = root.children[move[agent]]
        assert chosen.real == max(c.real for c in root.children.values()) > 0


def test_the_final_choice_counts_real_visits_only():
    untried = Node(10, 0.0)  # a "visits" prior of 0.0: ten virtual visits, none real
    often, seldom = Node(), Node()
    for r in (0.2, 0.3, 0.1):
        often.add(r)
    seldom.add(0.9)
    kids = {Action("wait"): untried, Action("mine"): seldom, Action("irrigate"): often}
    assert final_choice(kids, by_visits=True) == Action("irrigate")
    assert final_choice(kids, by_visits=False) == Action("mine")
    tie = Node()
    for r in (0.5, 0.5, 0.5):
        tie.add(r)
    kids[Action("move", "north")] = tie  # as many real visits as "irrigate", higher mean
    assert final_choice(kids, by_visits=True) == Action("move", "north")
    fresh = {Action("wait"): Node(10, 9.0), Action("mine"): Node()}  # no roll-outs at all
    assert final_choice(fresh, by_visits=True) == Action("wait")


def test_a_scripted_player_steers_the_tree_as_prior_and_roll_out_policy():
    """uct-howto's parts: the script's move gets the prior's mass and is the roll-outs' move;
    the script is asked once per state and turn for a whole side."""
    from nlmcs.games.civ import CivConfig, CivGame
    from nlmcs.methods import make_planner
    from nlmcs.search.policies import ScriptedPrior, ScriptedRollout

    game = CivGame(CivConfig.preset("tiny", max_turns=6))
    state = game.new_initial_state(2)
    asked = []

    class Counting:
        def __init__(self):
            self.inner = game.policy("howto")

        def joint_action(self, s, player, rng):
            asked.append(player)
            return self.inner.joint_action(s, player, rng)

    script = game.policy("howto").joint_action(state, 0, np.random.default_rng(0))
    prior, roll = ScriptedPrior(Counting()), ScriptedRollout(Counting())
    for agent, actions in state.agent_actions(0):
        p = prior(state, agent, list(actions))
        assert p == [1.0 if a == script[agent] else 0.0 for a in actions]
        assert roll.choose(state, agent, actions, np.random.default_rng(1)) == script[agent]
    assert asked == [0, 0]  # once for the prior, once for the roll-outs, for all agents
    planner = make_planner("uct-howto", game=game, seed=0,
                           search_config=SearchConfig(rollouts=6, depth=2))
    assert planner.config.prior_mode == "puct" and isinstance(planner.prior, ScriptedPrior)
    move = planner.choose(state, 0, np.random.default_rng(0))
    assert all(move[a] in state.legal_actions(a) for a in move)


def test_the_mc_search_explores_by_the_script_without_a_prior():
    """text-howto: the script is the MC search's roll-out policy (its exploring moves); unlike
    a tree, the MC search takes no prior from it."""
    from nlmcs.games.civ import CivConfig, CivGame
    from nlmcs.methods import make_planner
    from nlmcs.search.policies import ScriptedRollout

    game = CivGame(CivConfig.preset("tiny", max_turns=4))
    for name in ("text-howto", "random-text-howto"):
        planner = make_planner(name, game=game, seed=0,
                               search_config=SearchConfig(rollouts=4, depth=2))
        assert isinstance(planner.core.random_policy, ScriptedRollout)
        assert planner.core.prior is None
        planner.close()
