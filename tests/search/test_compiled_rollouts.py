"""Tree searches hand the rest of a roll-out to the compiled engine once the searching player
only draws uniform roll-out moves, and the learned methods play their whole roll-outs on its
board (`compiled.board_state`); the search must not notice: the same rewards, the same moves,
the same learned weights, step after step, as on the Python reference."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from nlmcs.experiments.positions import start_position
from nlmcs.games.civ import CivConfig, CivGame
from nlmcs.methods import make_planner
from nlmcs.search.config import SearchConfig


def _steps(method: str, engine: str, opponent: str, steps: int = 3, **options) -> list:
    game = CivGame(CivConfig.preset("small", max_turns=40))
    state = start_position(game, seed=2, turns=12)
    cfg = SearchConfig(rollouts=40, depth=8, engine=engine, opponent=opponent, **options)
    planner = make_planner(method, game=game, search_config=cfg, seed=5)
    rng = np.random.default_rng(1)
    out = []
    for _ in range(steps):
        move = planner.choose(state, 0, rng)
        stats = dict(planner.last_stats)
        stats.pop("seconds")
        out.append((sorted((a, repr(x)) for a, x in move.items()), stats))
        state.apply_joint_actions({0: move, 1: game.policy(opponent).joint_action(state, 1, rng)},
                                  rng)
    core = getattr(planner, "core", None)
    if core is not None and hasattr(core.evaluator, "net"):  # the learned methods' weights
        out.append([w.tolist() for w in core.evaluator.net.learned()[:3]])
    return out


@pytest.mark.parametrize("method,opponent", [("uct", "builtin"), ("flat-ucb", "builtin"),
                                             ("uct", "random")])
def test_a_tree_search_plays_the_same_on_either_engine(method, opponent):
    python = _steps(method, "python", opponent)
    assert python == _steps(method, "compiled", opponent)
    assert all(stats["mean_reward"] is not None for _, stats in python)


@pytest.mark.parametrize("method,opponent,options", [
    ("text", "builtin", {}), ("text", "random", {"rollout": "typed"}),
    ("linear", "builtin", {}), ("random-text", "builtin:hard", {"early_q": "expected"})])
def test_a_learned_search_plays_the_same_on_the_board(method, opponent, options, monkeypatch):
    from nlmcs.games.civ.compiled.board_state import BoardState

    python = _steps(method, "python", opponent, **options)
    turns = []
    real, played = BoardState.play_turn, BoardState.turns_played
    monkeypatch.setattr(BoardState, "play_turn",
                        lambda self, *a: turns.append(1) or real(self, *a))
    monkeypatch.setattr(BoardState, "turns_played",  # turns compiled code played on it
                        lambda self: turns.append(1) or played(self))
    assert python == _steps(method, "compiled", opponent, **options)
    assert len(turns) > 3 * 40  # every roll-out played on the board
    assert all(stats["mean_reward"] is not None for _, stats in python[:-1])


def test_a_learned_search_with_another_rollout_policy_stays_on_the_reference(monkeypatch):
    """A roll-out policy other than the uniform or typed one may read more of a state than a
    board state answers."""
    from nlmcs.search import rollout

    asked = []
    real = rollout.Opponents.board_state
    monkeypatch.setattr(rollout.Opponents, "board_state",
                        lambda self, *a: asked.append(1) or real(self, *a))

    class Scripted:
        def choose(self, state, agent, actions, rng):
            return actions[0]

    game = CivGame(CivConfig.preset("tiny", max_turns=20))
    state = game.new_initial_state(0)
    cfg = SearchConfig(rollouts=5, depth=4)
    for policy, expect in ((Scripted(), False), (None, True)):
        planner = make_planner("text", game=game, search_config=cfg, seed=0)
        asked.clear()  # the planner's warm-up roll-out (a fresh start) is not the search's
        if policy is not None:
            planner.core.random_policy = policy
        planner.choose(state, 0, np.random.default_rng(0))
        assert bool(asked) is expect


def test_a_typed_rollout_stays_on_the_reference(monkeypatch):
    """Only the uniform roll-out policy has a compiled twin; the engine is not asked for
    another."""
    from nlmcs.search import rollout

    asked = []
    real = rollout.Opponents.compiled

    def spy(self, state, player):
        asked.append(player)
        return real(self, state, player)

    monkeypatch.setattr(rollout.Opponents, "compiled", spy)
    game = CivGame(CivConfig.preset("tiny", max_turns=20))
    state = game.new_initial_state(0)
    for kind, expect in (("typed", False), ("uniform", True)):
        asked.clear()
        cfg = dataclasses.replace(SearchConfig(rollouts=5, depth=4), rollout=kind)
        make_planner("uct", game=game, search_config=cfg, seed=0).choose(
            state, 0, np.random.default_rng(0))
        assert bool(asked) is expect


def _agent_q(ev, state, agent, actions):
    """E[Q] of one agent's candidates, as the roll-outs ask it."""
    return ev.q_values(state, ((agent, actions),), sampled=False, rng=None)[0][0]


def test_the_value_of_a_board_agents_candidates_is_kept_until_a_weight_changes():
    """E[Q] of an agent's candidates on a board is asked once per situation and set of weights:
    equal to the reference state's, dropped when a weight changes."""
    from nlmcs.model.evaluator import _signatures

    game = CivGame(CivConfig.preset("small", max_turns=40))
    state = start_position(game, seed=2, turns=12)
    planner = make_planner("text", game=game, search_config=SearchConfig(rollouts=20, depth=4),
                           seed=0)
    planner.choose(state, 0, np.random.default_rng(0))  # weights learned from 20 roll-outs
    ev = planner.core.evaluator
    board = game.compiled_states(state, [None, game.policy("builtin")], 0).state(state)
    same = board.clone()  # another state in the same situation
    for (agent, actions), (_, ref_actions) in zip(board.agent_actions(0), state.agent_actions(0),
                                                  strict=True):
        q = _agent_q(ev, board, agent, actions)
        assert np.array_equal(q, ev.net.expected_q(_signatures(state, agent, ref_actions)))
        assert _agent_q(ev, same, agent, dict(same.agent_actions(0))[agent]) is q
    agent, actions = board.agent_actions(0)[-1]
    q = _agent_q(ev, board, agent, actions)
    ev.net.weights_changed()
    again = _agent_q(ev, board, agent, actions)
    assert again is not q and np.array_equal(again, q)


def test_a_steps_roll_outs_start_from_one_packed_board(monkeypatch):
    """The root of a real step goes onto a board once and each roll-out copies it; the next
    step (the same state object, played on in place) is packed anew."""
    from nlmcs.games.civ.compiled.board_state import BoardGame

    packed = []
    real = BoardGame.packed
    monkeypatch.setattr(BoardGame, "packed", lambda self, s: packed.append(s.turn) or real(self, s))
    game = CivGame(CivConfig.preset("small", max_turns=40))
    state = start_position(game, seed=2, turns=12)
    planner = make_planner("text", game=game, search_config=SearchConfig(rollouts=20, depth=4),
                           seed=0)
    rng = np.random.default_rng(0)
    for _ in range(2):
        move = planner.choose(state, 0, rng)
        state.apply_joint_actions({0: move, 1: game.policy("builtin").joint_action(state, 1, rng)},
                                  rng)
    assert packed == [12, 13]


def test_another_root_at_the_same_step_is_packed_anew():
    """The packed root is kept for the root object itself: another state asked for with the
    same step and seed (a planner called again after a failed step) gets its own board."""
    from nlmcs.search.rollout import Opponents

    game = CivGame(CivConfig.preset("small", max_turns=40))
    opponents = Opponents(game, "builtin", "compiled")
    first = start_position(game, seed=2, turns=12)
    later = start_position(game, seed=2, turns=14)
    a = opponents.board_state(first, 0, (3, 5))
    assert opponents.board_state(first, 0, (3, 5)).turn == a.turn == 12
    assert opponents.board_state(later, 0, (3, 5)).turn == 14
    assert opponents.board_state(first, 0, (4, 5)).turn == 12
