"""The runner plays exactly what `State.apply_joint_actions` would, and tells its hooks."""

from __future__ import annotations

import numpy as np

from nlmcs.games.runner import GameHook, play_game
from nlmcs.seeds import chance_rng


class Spy(GameHook):
    def __init__(self):
        self.calls = []

    def on_start(self, game, state, seed, players_meta):
        self.calls.append(("start", seed, tuple(m["kind"] for m in players_meta)))

    def on_turn(self, state):
        self.calls.append(("turn", state.turn))

    def on_decision(self, before, state, turn, player, agent, action, applied, after):
        assert before.shape == after.shape
        self.calls.append(("decision", turn, player, agent))

    def on_end(self, state, result):
        self.calls.append(("end", result.turns))


def test_runner_matches_apply_joint_actions(small_game):
    spy = Spy()
    pols = {0: small_game.policy("builtin"), 1: small_game.policy("random")}
    played = small_game.new_initial_state(4)
    play_game(small_game, pols, seed=4, max_turns=12, hooks=[spy], state=played)

    replay = small_game.new_initial_state(4)
    rng = chance_rng(4)  # the game's chance, as play_game draws it
    for _ in range(12):
        joint = {p: pols[p].joint_action(replay, p, rng) for p in (0, 1)}
        replay.apply_joint_actions(joint, rng)
    assert replay.to_json() == played.to_json()

    assert spy.calls[0] == ("start", 4, ("builtin", "random"))
    assert spy.calls[-1] == ("end", 12)
    assert [c[1] for c in spy.calls if c[0] == "turn"] == list(range(12))
    # players alternate who moves first: on odd turns player 1's decisions come first
    for turn in (0, 1):
        players = [c[2] for c in spy.calls if c[0] == "decision" and c[1] == turn]
        assert players[0] == turn % 2 and players == sorted(players, reverse=turn % 2 == 1)


def test_unnamed_policies_are_recorded_as_search(small_game):
    class Planner:
        def joint_action(self, state, player, rng):
            return {}

    spy = Spy()
    play_game(small_game, {0: Planner(), 1: small_game.policy("random")}, seed=0, max_turns=1,
              hooks=[spy])
    assert spy.calls[0] == ("start", 0, ("search", "random"))


def test_hooks_hear_each_choice_before_any_action_is_played(small_game, monkeypatch):
    from nlmcs.games.civ.state import CivState

    class Order(GameHook):
        def __init__(self):
            self.events = []

        def on_turn(self, state):
            self.events.append(("turn", state.turn))

        def on_choice(self, state, player, actions):
            self.events.append(("choice", player, state.turn))

        def on_turn_end(self, state):
            self.events.append(("turn end", state.turn))

    vectors = []
    monkeypatch.setattr(CivState, "state_vector",
                        lambda self, p: vectors.append(p) or np.zeros(1, np.float32))
    order = Order()
    pols = {0: small_game.policy("builtin"), 1: small_game.policy("random")}
    result = play_game(small_game, pols, seed=2, max_turns=2, hooks=[order])
    assert order.events == [("turn", 0), ("choice", 0, 0), ("choice", 1, 0), ("turn end", 1),
                            ("turn", 1), ("choice", 0, 1), ("choice", 1, 1), ("turn end", 2)]
    assert vectors == []  # no hook watches decisions: the loop computes no state vectors
    assert (result.played, result.turns, result.finished, result.winner) == (2, 2, False, None)


class Vectors(GameHook):
    def __init__(self):
        self.seen = []

    def on_decision(self, before, state, turn, player, agent, action, applied, after):
        self.seen.append((turn, player, agent, before.copy(), after.copy()))


def test_each_decision_gets_its_players_vectors_around_it(small_game):
    # The loop hands a decision's vector after it on as the next one's before: the same values
    # as computing both around every decision, across players and turns (3 players, so the
    # player changes within a turn twice).
    game = type(small_game)(small_game.config.__class__.preset(
        "small", ruleset=small_game.config.ruleset, num_players=3))
    pols = {0: game.policy("builtin"), 1: game.policy("random"), 2: game.policy("builtin:hard")}
    hook = Vectors()
    play_game(game, pols, seed=2, max_turns=15, hooks=[hook])

    replay = game.new_initial_state(2)
    rng = chance_rng(2)
    want = []
    for _ in range(15):
        joint = {p: pols[p].joint_action(replay, p, rng) for p in range(3)}
        turn = replay.turn
        for p in replay.player_order():
            for agent, action in joint[p].items():
                before = replay.state_vector(p)
                replay.apply_action(agent, action, rng)
                want.append((turn, p, agent, before, replay.state_vector(p)))
        replay.end_turn(rng)
    assert len(hook.seen) == len(want) > 100
    for got, exp in zip(hook.seen, want, strict=True):
        assert got[:3] == exp[:3]
        assert np.array_equal(got[3], exp[3]) and np.array_equal(got[4], exp[4]), got[:3]
    # the vectors do change between decisions (a test of reuse needs them to)
    assert sum(not np.array_equal(g[3], g[4]) for g in hook.seen) > 10
