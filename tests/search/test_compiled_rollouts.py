"""Tree searches hand the rest of a roll-out to the compiled engine once the searching player
only draws uniform roll-out moves; the search must not notice: the same rewards, the same
moves, step after step, as on the Python reference."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from nlmcs.experiments.positions import start_position
from nlmcs.games.civ import CivConfig, CivGame
from nlmcs.search.config import SearchConfig
from nlmcs.search.methods import make_planner


def _steps(method: str, engine: str, opponent: str, steps: int = 3) -> list:
    game = CivGame(CivConfig.preset("small", max_turns=40))
    state = start_position(game, seed=2, turns=12)
    cfg = SearchConfig(rollouts=40, depth=8, engine=engine, opponent=opponent)
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
    return out


@pytest.mark.parametrize("method,opponent", [("uct", "builtin"), ("flat-ucb", "builtin"),
                                             ("uct", "random")])
def test_a_tree_search_plays_the_same_on_either_engine(method, opponent):
    python = _steps(method, "python", opponent)
    assert python == _steps(method, "compiled", opponent)
    assert all(stats["mean_reward"] is not None for _, stats in python)


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
