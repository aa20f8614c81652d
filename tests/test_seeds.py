"""The one seed tree keeps every seed the former helpers drew: stored runs pair and resume."""

import numpy as np

from nlmcs.net.spec import TrainSpec, eval_seeds
from nlmcs.reader.outcomes import map_seed
from nlmcs.seeds import chance_rng, game_seed


def test_game_seeds_are_the_ones_stored_runs_were_played_from():
    # values drawn by the helpers this module replaced (ablation, self-play, labels, judging)
    assert [game_seed(17621, i) for i in range(3)] == [84789694, 696164979, 1346072114]
    assert [game_seed(5, 2, i) for i in range(2)] == [1613061882, 535303496]
    assert [map_seed(0, i) for i in range(2)] == [556074489, 1873095018]
    assert eval_seeds(TrainSpec(eval_seed=9, eval_games=2)) == [2066282776, 683050617]


def test_salted_paths_and_nearby_run_seeds_share_no_games():
    ablation = {game_seed(s, i) for s in range(3) for i in range(200)}
    assert len(ablation) == 600  # S + i would repeat across S = 0, 1, 2
    assert not ablation & {map_seed(s, i) for s in range(3) for i in range(200)}
    assert all(0 <= x < 2**31 for x in ablation)


def test_a_games_chance_is_apart_from_its_map_stream():
    a, b = chance_rng(7).random(4), np.random.default_rng(7).random(4)
    assert not np.allclose(a, b)
    assert np.array_equal(a, chance_rng(7).random(4))


def test_every_played_game_draws_its_chance_by_the_one_rule():
    from nlmcs.games import make_game
    from nlmcs.games.runner import play_game
    from nlmcs.seeds import LEGACY_CHANCE

    game = make_game("civ", preset="tiny", max_turns=8)
    players = {0: game.policy("random"), 1: game.policy("builtin")}
    default = [play_game(game, players, seed=s).scores for s in range(3)]
    assert default == [play_game(game, players, seed=s, rng=chance_rng(s)).scores
                       for s in range(3)]
    legacy = [play_game(game, players, seed=s, rng=chance_rng(s, LEGACY_CHANCE)).scores
              for s in range(3)]
    assert legacy == [play_game(game, players, seed=s, rng=np.random.default_rng(s)).scores
                      for s in range(3)]
    assert default != legacy
