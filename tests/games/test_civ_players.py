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
    for spec in ("builtin:easy", "builtin:hard", "random", "greedy"):
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
    for spec in ("builtin:godlike", "alphazero", "random:fast"):
        with pytest.raises(UserInputError):
            small_game.policy(spec)


def test_more_than_two_players():
    game = CivGame(CivConfig(ruleset=str(CLASSIC), width=24, height=16, num_players=3))
    pols = {p: game.policy("builtin") for p in range(3)}
    result = play_game(game, pols, seed=2, max_turns=10)
    assert len(result.scores) == 3
