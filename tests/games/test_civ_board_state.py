"""A learned search's roll-outs on the compiled engine's board (`compiled.board_state`) against
the Python reference: in every position of whole games, each player's agents, their actions,
and the words a text model reads of them are the reference's, and a turn played on the board
(the player's move given, the other seats choosing after it) is the reference's `base.step`."""

from __future__ import annotations

import numpy as np
import pytest

from nlmcs.games.base import step
from nlmcs.games.civ import CivConfig, CivGame, serialize
from nlmcs.games.civ.tables import ATTACK

GAMES = [("tiny", 3, 60, 2), ("small", 2, 80, 2), ("default", 1, 100, 2), ("small", 1, 50, 3)]
"""(preset, seeds, turns, players)."""


def _difference(s, b, player: int) -> str | None:
    """The first way board state `b` answers otherwise than reference state `s`."""
    want, got = s.agent_actions(player), b.agent_actions(player)
    if [a for a, _ in want] != [a for a, _ in got]:
        return f"agents {[a for a, _ in want]} != {[a for a, _ in got]}"
    for (agent, w), (_, g) in zip(want, got, strict=True):
        if list(w) != list(g):
            return f"{agent}: actions {list(w)} != {g}"
        for name, ref, board in (
                ("agent labels", s.agent_labels(agent), b.agent_labels(agent)),
                ("state labels", s.state_labels(agent), b.state_labels(agent)),
                ("action labels", s.actions_labels(agent, w), b.actions_labels(agent, g)),
                ("goal labels", s.goal_labels(agent, w), b.goal_labels(agent, g)),
                ("candidate labels", s.candidate_labels(agent, w),
                 b.candidate_labels(agent, g)),
                ("one action's labels", [s.action_labels(agent, x) for x in w],
                 [b.action_labels(agent, x) for x in g])):
            if ref != board:
                return f"{agent}: {name} {ref} != {board}"
    return None


@pytest.mark.parametrize("preset,seeds,turns,players", GAMES)
def test_a_board_state_answers_and_plays_as_the_reference(preset, seeds, turns, players):
    checked, words = 0, set()
    for seed in range(seeds):
        game = CivGame(CivConfig.preset(preset, max_turns=turns, num_players=players))
        policies = [game.policy("builtin:hard"), *[game.policy("random")] * (players - 1)]
        boards = {p: game.compiled_states(game.new_initial_state(seed), policies, p)
                  for p in range(players)}
        rng = np.random.default_rng(seed)
        s = game.new_initial_state(seed)
        while not s.is_terminal():
            for p in range(players):
                where = f"{preset} seed {seed} turn {s.turn} player {p}"
                b = boards[p].state(s)
                problem = _difference(s, b, p)
                assert problem is None, f"{where}: {problem}"
                for agent, actions in s.agent_actions(p):
                    checked += len(actions)
                    words.update(s.state_labels(agent))
                # the player's uniformly drawn move, then the others' seats, on both
                ref, draws = s.clone(), np.random.default_rng([seed, s.turn, p])
                joint = {a: acts[int(draws.integers(len(acts)))]
                         for a, acts in ref.agent_actions(p)}
                r1, r2 = np.random.default_rng([seed, p]), np.random.default_rng([seed, p])
                step(ref, p, joint, {q: policies[q] for q in range(players) if q != p}, r1)
                b.play_turn(p, joint, r2)
                assert serialize.state_to_json(b.unpacked()) == serialize.state_to_json(ref), where
                assert r1.random() == r2.random(), f"{where}: chance drawn otherwise"
                assert (b.is_terminal(), b.winner()) == (ref.is_terminal(), ref.winner())
                assert [b.score(q) for q in range(players)] == [ref.score(q)
                                                                for q in range(players)]
            s.apply_joint_actions({p: policies[p].joint_action(s, p, rng)
                                   for p in range(players)}, rng)
    assert checked > 1_000
    if preset != "default":  # the words of a city's growth, walls and wars come up
        assert {"enemy", "friendly", "growing", "fortified"} <= words, words


def test_a_board_state_gives_the_references_words_for_an_action_not_among_its_candidates():
    game = CivGame(CivConfig.preset("tiny", max_turns=20))
    s = game.new_initial_state(0)
    b = game.compiled_states(s, [None, game.policy("builtin")], 0).state(s)
    agent, actions = next((a, acts) for a, acts in s.agent_actions(0) if a.startswith("unit"))
    missing = [x for x in ATTACK if x not in actions]  # no enemy next to it at the start
    assert missing
    assert b.actions_labels(agent, missing) == s.actions_labels(agent, missing)
    assert b.action_labels(agent, missing[0]) == s.action_labels(agent, missing[0])


def test_a_player_without_a_move_waits_on_the_board_as_in_the_reference():
    game = CivGame(CivConfig.preset("small", max_turns=40))
    s = game.new_initial_state(1)
    policies = [None, game.policy("builtin")]
    b = game.compiled_states(s, policies, 0).state(s)
    for joint in ({}, {"civ:0": s.agent_actions(0)[0][1][0]}):
        ref, board = s.clone(), b.clone()
        r1, r2 = np.random.default_rng(3), np.random.default_rng(3)
        step(ref, 0, joint, {1: policies[1]}, r1)
        board.play_turn(0, joint, r2)
        assert serialize.state_to_json(board.unpacked()) == serialize.state_to_json(ref)
        assert r1.random() == r2.random()
