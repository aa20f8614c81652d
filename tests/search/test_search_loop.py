import numpy as np
import pytest
from toy_game import ToyGame, make_manual

from nlmcs.errors import UserInputError
from nlmcs.games.base import Action, step
from nlmcs.methods import METHODS, PAPER_METHODS, make_planner
from nlmcs.model.config import ModelConfig
from nlmcs.search.config import SearchConfig
from nlmcs.search.evaluator import ConstantEvaluator
from nlmcs.search.mc import MCPlanner
from nlmcs.search.mc_rollouts import RolloutCore, epsilon_greedy
from nlmcs.search.policies import TypedRollout
from nlmcs.search.rollout import reward
from nlmcs.search.uct import UCTPlanner


def _play(planner, game, seed=1):
    state = game.new_initial_state(seed)
    rng = np.random.default_rng(seed)
    moves = []
    while not state.is_terminal():
        move = planner.choose(state, 0, rng)
        moves.append(sorted(move.items()))
        step(state, 0, move, {1: game.policy("builtin")}, rng)
    planner.close()
    return state, moves


def test_epsilon_greedy_breaks_ties_at_random():
    rng = np.random.default_rng(0)
    picks = {epsilon_greedy(np.array([1.0, 1.0, 0.0]), 0.0, rng) for _ in range(50)}
    assert picks == {0, 1}
    assert epsilon_greedy(np.array([0.0, 2.0]), 0.0, rng) == 1
    assert epsilon_greedy(np.array([0.0, 2.0]), 1.0, rng) is None


def _eager_joint_move(core, state, player, eps, rng, datapoints):
    """The roll-out step as it was before Q was asked agent by agent: every agent's Q first."""
    candidates = [(a, state.legal_actions(a)) for a in state.agents(player)]
    qs, _ = core.evaluator.q_values(state, candidates, sampled=False, rng=rng)
    joint = {}
    for (agent, actions), q in zip(candidates, qs, strict=True):
        k = epsilon_greedy(q, eps, rng)
        action = (core.random_policy.choose(state, agent, actions, rng) if k is None
                  else actions[k])
        joint[agent] = action
        datapoints.append(core.evaluator.datapoint(state, agent, action, rng))
    return joint


@pytest.mark.parametrize("eps", [0.0, 0.3, 1.0])
def test_q_asked_only_of_agents_that_exploit_plays_the_same_moves(eps):
    # Q is computed per agent and only when the agent does not explore; the draws (explore,
    # ties, random moves, datapoints) must come in the same order as when all Q came first.
    game = ToyGame(units=3, max_turns=6)
    planner = make_planner("text", game=game, manual=make_manual(),
                           model_config=ModelConfig(min_count=1, alpha=0.05),
                           search_config=SearchConfig(rollouts=6, depth=3, batch=3), seed=0)
    core = planner.core
    state = game.new_initial_state(4)
    planner.choose(state, 0, np.random.default_rng(0))  # learned, non-zero weights
    net = core.evaluator.net
    net.w[:] += np.random.default_rng(1).normal(0, 0.01, size=net.w.shape)
    net.weights_changed()
    asked = []
    q_values = core.evaluator.q_values

    def counted(s, candidates, *, sampled, rng):  # the roll-outs ask E[Q] agent by agent
        if not sampled and len(candidates) == 1:
            asked.extend(agent for agent, _ in candidates)
        return q_values(s, candidates, sampled=sampled, rng=rng)

    core.evaluator.q_values = counted
    for seed in range(20):
        lazy_dp, eager_dp = [], []
        lazy = core.joint_move(state, 0, eps, np.random.default_rng(seed), learn=True,
                               datapoints=lazy_dp)
        eager = _eager_joint_move(core, state, 0, eps, np.random.default_rng(seed), eager_dp)
        assert lazy == eager
        assert [(d.sig, d.y, d.z) for d in lazy_dp] == [(d.sig, d.y, d.z) for d in eager_dp]
    n_agents = 20 * len(state.agents(0))
    assert len(asked) == {0.0: n_agents, 1.0: 0}.get(eps, len(asked))
    assert eps != 0.3 or 0 < len(asked) < n_agents
    planner.close()


def test_reward_is_win_loss_or_score_ratio():
    game = ToyGame(max_turns=1)
    state = game.new_initial_state(0)
    state.scores = [3.0, 1.0]
    assert reward(state, 0) == pytest.approx(0.75)
    state.turn = 1
    assert reward(state, 0) == 1.0 and reward(state, 1) == 0.0
    state.scores = [0.0, 0.0]
    assert reward(state, 0, "weighted", {"score": 1.0, "units": 1.0}) == pytest.approx(0.5)


def test_typed_rollout_draws_a_type_first():
    state = ToyGame().new_initial_state(0)
    actions = [Action("move", d) for d in "abcdefgh"] + [Action("mine")]
    rng = np.random.default_rng(0)
    picks = [TypedRollout().choose(state, "unit:0:0", actions, rng).kind for _ in range(400)]
    assert 0.4 < picks.count("mine") / 400 < 0.6
    weighted = TypedRollout({"move": 0.0, "mine": 1.0})
    assert {weighted.choose(state, "unit:0:0", actions, rng).kind for _ in range(20)} == {"mine"}


def test_loop_runs_with_a_trivial_evaluator():
    # Q = 0 everywhere: roll-outs move at random, and the real move is the first joint move of
    # the best roll-out (the first of the best, in roll-out order) at every step of the game.
    game = ToyGame(units=2, max_turns=3)
    cfg = SearchConfig(rollouts=8, depth=3, batch=3)
    planner = MCPlanner(game=game, evaluator=ConstantEvaluator(), config=cfg, seed=0)
    replay = RolloutCore(game, ConstantEvaluator(), cfg)
    state, rng = game.new_initial_state(1), np.random.default_rng(1)
    for t in range(game.max_turns):
        results = [replay.run(state.clone(), 0, t, 0, k) for k in range(cfg.rollouts)]
        assert len({tuple(sorted(r.first.items())) for r in results}) > 1  # a choice to make
        move = planner.choose(state, 0, rng)
        best = max(results, key=lambda r: r.reward)
        assert move == best.first
        stats = planner.last_stats
        assert stats["step"] == t and stats["best_reward"] == best.reward
        assert stats["mean_reward"] == pytest.approx(np.mean([r.reward for r in results]))
        step(state, 0, move, {1: game.policy("builtin")}, rng)
    assert state.is_terminal()
    planner.close()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_learned_search_beats_random_choice_on_the_toy_game(seed):
    # Roll-outs of two turns end before the game does, so their reward (the score ratio) tells
    # which moves score; a roll-out to the end of a four-turn game against the built-in player
    # is always lost (reward 0) and teaches nothing.
    game = ToyGame(units=2, max_turns=4)
    cfg = SearchConfig(rollouts=60, depth=2, batch=5)
    learned = make_planner("linear", game=game, search_config=cfg,
                           model_config=ModelConfig(alpha=0.05), seed=0)  # fmt: skip
    state, _ = _play(learned, game, seed=seed)
    const = MCPlanner(game=game, evaluator=ConstantEvaluator(),
                      config=SearchConfig(rollouts=1, depth=1), seed=0)  # fmt: skip
    base, _ = _play(const, game, seed=seed)
    assert state.scores[0] > base.scores[0]
    assert state.scores[0] >= 9.0  # scores on at least three of its eight unit-turns


@pytest.mark.parametrize("method", PAPER_METHODS)
def test_each_method_plays_a_short_game_to_the_end(method):
    assert method in METHODS
    game = ToyGame(units=2, max_turns=3)
    cfg = SearchConfig(rollouts=12, depth=3, batch=4, log_decisions=True)
    planner = make_planner(method, game=game, manual=make_manual(), search_config=cfg,
                           model_config=ModelConfig(min_count=1), seed=0)  # fmt: skip
    state, moves = _play(planner, game)
    assert state.is_terminal() and len(moves) == 3
    log = planner.last_log
    assert {r["agent"] for r in log} == set(state.agents(0))
    if method in ("text", "random-text", "relevance-only"):
        rec = next(r for r in log if r["agent"] == "unit:0:0")
        assert abs(sum(s["p"] for s in rec["sentences"]) - 1.0) < 1e-3
        assert "sampled_sentence" in rec
        assert len(rec["candidates"]) == 4 and all("q" in c for c in rec["candidates"])
        if method != "relevance-only" and rec["sampled_sentence"] >= 0:
            assert rec["word_labels"]


def test_unknown_method_is_a_user_error():
    with pytest.raises(UserInputError, match="unknown method"):
        make_planner("nope", game=ToyGame())


@pytest.mark.parametrize(("model_kw", "real_move"), [
    ({}, "best-rollout"),
    ({"persist": "hidden", "center": True, "hidden_update": "consistent", "hidden_alpha": 0.01},
     "best-rollout"),
    ({"persist": "hidden"}, "mean-q"),
    ({"kind": "nonlinear"}, "best-rollout"),  # the kinds without text, on their own tables
    ({"kind": "linear", "persist": "hidden"}, "mean-q"),
])
def test_same_seed_same_game_whatever_the_number_of_workers(model_kw, real_move):
    # depth > learn_steps, so the late (non-learning) steps, which rank by cached E[Q], run too;
    # 3 workers with batches of 4 also gives a worker an empty share of some batches; with
    # persistent weights the workers must also learn each step's last batch; with "mean-q" the
    # real move is read from the weights the parent copies back from a worker
    game = ToyGame(units=2, max_turns=12)
    runs = []
    for workers in (1, 3):
        cfg = SearchConfig(rollouts=16, depth=6, batch=4, workers=workers, learn_steps=1,
                           real_move=real_move)
        planner = make_planner(model_kw.get("kind", "text"), game=game, manual=make_manual(),
                               search_config=cfg,
                               model_config=ModelConfig(min_count=1, **model_kw), seed=7)
        assert planner.core.evaluator.net.tables is not None
        state, rng = game.new_initial_state(3), np.random.default_rng(3)
        moves, rewards = [], []
        for _ in range(3):
            move = planner.choose(state, 0, rng)
            moves.append(sorted(move.items()))
            rewards.append(planner.last_stats["mean_reward"])
            step(state, 0, move, {1: game.policy("builtin")}, rng)
        net = planner.core.evaluator.net
        runs.append((moves, rewards, np.concatenate([net.u, net.v, net.w])))
        planner.close()
    for other in runs[1:]:
        assert runs[0][0] == other[0] and runs[0][1] == other[1]
        assert np.array_equal(runs[0][2], other[2])


def test_uct_prior_seeds_new_children():
    game = ToyGame(units=1, max_turns=2)
    seen = []

    def prior(state, agent, actions):
        seen.append(agent)
        return [1.0 if a.kind == "wait" else 0.0 for a in actions]

    planner = UCTPlanner(game=game, config=SearchConfig(rollouts=5, depth=1, prior_visits=10,
                                                        prior_mode="visits"),
                         seed=0, prior=prior)
    state = game.new_initial_state(0)
    move = planner.choose(state, 0, np.random.default_rng(0))
    root = planner.roots["unit:0:0"]
    wait = root.children[Action("wait")]
    assert wait.n >= 10 and wait.total >= 10.0
    assert seen and move["unit:0:0"] == Action("wait")


@pytest.mark.parametrize(
    "search_kw, model_kw",
    [({"early_q": "sampled", "late_q": "sampled"}, {}), ({"early_q": "sampled"}, {}),
     ({"real_move": "mean-q", "rollout": "typed", "reward": "weighted"},
      {"hidden_update": "consistent"})],
)  # fmt: skip
def test_search_options_play_to_the_end(search_kw, model_kw):
    game = ToyGame(units=2, max_turns=5)
    cfg = SearchConfig(rollouts=8, depth=3, batch=4, **search_kw)
    planner = make_planner("text", game=game, manual=make_manual(), search_config=cfg,
                           model_config=ModelConfig(min_count=1, **model_kw), seed=0)  # fmt: skip
    planner.choose(game.new_initial_state(1), 0, np.random.default_rng(0))
    assert np.abs(planner.core.evaluator.net.w).sum() > 0  # it learned from the first step
    state, moves = _play(planner, game)
    assert state.is_terminal() and len(moves) == 5


def test_weights_are_reset_at_every_real_step():
    game = ToyGame(units=2, max_turns=6)
    cfg = SearchConfig(rollouts=8, depth=3, batch=4)
    planner = make_planner("text", game=game, manual=make_manual(), search_config=cfg,
                           model_config=ModelConfig(min_count=1), seed=0)  # fmt: skip
    net = planner.core.evaluator.net
    state = game.new_initial_state(1)
    planner.choose(state, 0, np.random.default_rng(0))
    first = net.w.copy()
    assert np.abs(first).sum() > 0
    planner.choose(state, 0, np.random.default_rng(0))  # same state, next step: fresh weights
    # Different roll-out seeds (step 1) but learning restarted from zero, not from `first`.
    planner.executor.begin_step(state, 0, 0, planner.seed)
    assert not net.w.any() and not net.u.any() and not net.v.any()
    for lo in (0, 4):
        planner.executor.apply(planner.executor.run_batch([lo, lo + 1, lo + 2, lo + 3]))
    assert np.array_equal(net.w, first)  # step 0 replayed from zero gives the same weights


class _Stats:
    """A two-player position whose only facts are `stats`."""

    num_players = 2

    def __init__(self, food):
        self.food = food

    def is_terminal(self):
        return False

    def stats(self, player):
        return {"food": self.food[player]}


@pytest.mark.parametrize("food", [(-2.0, 3.0), (3.0, -2.0), (-1.0, -1.0), (4.0, 1.0)])
def test_weighted_reward_stays_in_unit_interval_with_negative_stats(food):
    for player in (0, 1):
        r = reward(_Stats(food), player, "weighted", {"food": 1.0})
        assert 0.0 <= r <= 1.0
    assert reward(_Stats((-2.0, 3.0)), 1, "weighted", {"food": 1.0}) == 1.0


def test_random_text_resolves_the_twin_of_any_manual_reference(tmp_path):
    from nlmcs.model.manuals import random_twin

    manual = make_manual()
    assert random_twin("guide") == "guide-random"
    assert random_twin(tmp_path / "guide") == tmp_path / "guide-random"
    twin = random_twin(manual)  # not stored: shuffled in memory
    assert twin.name == "toy-random"
    assert sorted(twin.tokens["lower"]) == sorted(manual.tokens["lower"])
    assert list(twin.tokens["lower"]) != list(manual.tokens["lower"])
