"""The built-in AI, the random and the greedy players."""

from __future__ import annotations

import numpy as np
import pytest

from nlmcs.errors import UserInputError
from nlmcs.games.civ import CivConfig, CivGame
from nlmcs.games.runner import play_game
from nlmcs.paths import shipped_dir

CLASSIC = shipped_dir() / "rulesets" / "classic.json"


def test_builtin_ai_beats_random_on_a_seeded_sample():
    """A small sample of the 100-game figure (results/ai_vs_random.csv): sides alternate."""
    small_game = CivGame(CivConfig.small(ruleset=str(CLASSIC), max_turns=60))
    wins = 0
    games = 6
    for seed in range(games):
        ai = seed % 2
        pols = {ai: small_game.policy("builtin"), 1 - ai: small_game.policy("random")}
        result = play_game(small_game, pols, seed=seed)
        wins += result.winner == ai
    assert wins == games


def test_builtin_ai_expands_and_defends(default_game):
    s = default_game.new_initial_state(7)
    pols = {0: default_game.policy("builtin:normal"), 1: default_game.policy("builtin:easy")}
    play_game(default_game, pols, seed=7, max_turns=40, state=s)
    for p in (0, 1):
        cities = [c for c in s.cities.values() if c.owner == p]
        assert len(cities) >= 3
        garrisoned = sum(
            any(s.tables.unit_military[s.units[i].kind] for i in s.tile_units.get(c.tile, ()))
            for c in cities
        )
        assert garrisoned >= len(cities) - 1  # a freshly founded city may still wait for one
    improved = sum(1 for imp in s.improvements if imp)
    assert improved >= 3


def test_policies_only_choose_legal_actions(small_game):
    s = small_game.new_initial_state(3)
    rng = np.random.default_rng(0)
    for spec in ("builtin:easy", "builtin:hard", "howto", "random", "greedy"):
        pol = small_game.policy(spec)
        joint = pol.joint_action(s, 0, rng)
        assert set(joint) <= set(s.agents(0))
        for agent, act in joint.items():
            assert act in s.legal_actions(agent), (spec, agent, act)


def test_greedy_plays_a_game(small_game):
    pols = {0: small_game.policy("greedy"), 1: small_game.policy("random")}
    result = play_game(small_game, pols, seed=1, max_turns=15)
    assert result.turns == 15 and len(result.scores) == 2


def test_unknown_players_are_user_errors(small_game):
    for spec in ("builtin:godlike", "alphazero", "random:fast", "howto:fast"):
        with pytest.raises(UserInputError):
            small_game.policy(spec)


def test_more_than_two_players():
    game = CivGame(CivConfig(ruleset=str(CLASSIC), width=24, height=16, num_players=3))
    pols = {p: game.policy("builtin") for p in range(3)}
    result = play_game(game, pols, seed=2, max_turns=10)
    assert len(result.scores) == 3


def test_the_howto_player_puts_settlers_before_workers_and_waits_for_the_citizen(default_game):
    """FreeCiv's HOWTOPLAY: every city churns out settlers while land lasts (a size-1 city
    starts on them, its shields waiting for the second citizen, as FreeCiv's settlers cost one),
    and workers come once the land is taken; the built-in AI builds warriors at size 1."""
    from nlmcs.games.civ.ai import HOWTO, BuiltinAI, HowtoPlayer

    s = default_game.new_initial_state(7)
    pols = {0: default_game.policy("builtin:normal"), 1: default_game.policy("builtin:normal")}
    play_game(default_game, pols, seed=7, max_turns=3, state=s)
    rng = np.random.default_rng(0)
    small = [c for c in s.cities.values() if c.owner == 0 and c.size == 1]
    assert small
    howto, builtin = HowtoPlayer().joint_action(s, 0, rng), BuiltinAI().joint_action(s, 0, rng)
    for c in small:
        assert howto[c.aid].arg == "settlers" and builtin[c.aid].arg != "settlers"
    assert HOWTO.max_cities >= 8 and default_game.policy("howto").name == "howto"
    # a whole game: at least as many cities as the built-in AI it is made of
    a = default_game.new_initial_state(9)
    play_game(default_game, {0: HowtoPlayer(), 1: BuiltinAI()}, seed=9, max_turns=60, state=a)
    ours = [c for c in a.cities.values() if c.owner == 0]
    theirs = [c for c in a.cities.values() if c.owner == 1]
    assert len(ours) >= max(6, len(theirs))
