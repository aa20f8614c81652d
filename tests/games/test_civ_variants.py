"""The rule variants: a sacred terrain drawn per seed, its rule, and the plain game untouched."""

import json

import numpy as np
import pytest

from nlmcs.cli import main
from nlmcs.errors import UserInputError
from nlmcs.games import make_game
from nlmcs.games.civ import variants
from nlmcs.games.civ.ai import BuiltinAI
from nlmcs.games.civ.rules import found_city
from nlmcs.games.runner import play_game


def _game(variant="", **kw):
    return make_game("civ", preset="small", variant=variant, **kw)


def _play(game, seed, turns, *, knows_rule=False):
    policies = {0: BuiltinAI("normal", knows_rule=knows_rule), 1: game.policy("builtin")}
    state = game.new_initial_state(seed)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 1]))
    result = play_game(game, policies, seed=seed, max_turns=turns, state=state, rng=rng)
    return state, result


def _land_tile(state, terrain, *, free=True):
    m = state.map
    for t in range(m.n):
        if m.terr[t] == terrain and (not free or t not in state.city_at):
            return t
    raise AssertionError("no such tile")


def test_no_variant_plays_exactly_the_old_game_and_records_the_old_config():
    plain, explicit = make_game("civ", preset="small"), _game("")
    assert "variant" not in plain.config.to_dict()
    for seed in (1, 2):
        a, ra = _play(plain, seed, 30)
        b, rb = _play(explicit, seed, 30)
        assert a.map.sacred == b.map.sacred == -1
        assert a.to_json() == b.to_json() and ra.scores == rb.scores
        assert "sacred" not in a.to_json()["map"]
        # the rule-knowing AI is the plain AI in a plain game
        c, rc = _play(plain, seed, 30, knows_rule=True)
        assert c.to_json() == a.to_json()


def test_the_variant_leaves_map_starts_and_opening_as_they_were():
    plain, variant = _game(""), _game(variants.SACRED)
    for seed in range(5):
        m0, s0 = plain.map_for_seed(seed)
        m1, s1 = variant.map_for_seed(seed)
        assert m0.terr == m1.terr and s0 == s1
        a = plain.new_initial_state(seed).to_json()
        b = variant.new_initial_state(seed).to_json()
        assert b["map"].pop("sacred") in variant.tables.terrain_names
        assert a == b


def test_sacred_terrain_is_a_function_of_the_seed_and_a_land_terrain_on_the_map():
    game = _game(variants.SACRED)
    drawn = set()
    for seed in range(40):
        m, _ = game.map_for_seed(seed)
        again = _game(variants.SACRED_END).map_for_seed(seed)[0]
        assert m.sacred == again.sacred == variants.sacred_terrain(game.tables, m, seed)
        assert not game.tables.terrain_ocean[m.sacred]
        assert sum(1 for t in m.terr if t == m.sacred) >= variants.MIN_TILES
        wrong = variants.mismatched_terrain(game.tables, m, seed)
        assert wrong != m.sacred and wrong in variants.candidates(game.tables, m)
        drawn.add(m.sacred)
    assert len(drawn) >= 5  # the seed moves it


def test_sacred_terrain_survives_clone_and_json():
    game = _game(variants.SACRED)
    state, _ = _play(game, 3, 12)
    sacred = state.map.sacred
    assert state.clone().map.sacred == sacred
    data = json.loads(json.dumps(state.to_json()))
    assert data["map"]["sacred"] == game.tables.terrain_names[sacred]
    back = game.state_from_json(data)
    assert back.map.sacred == sacred and back.to_json() == state.to_json()
    data["map"]["sacred"] = "ocean"
    with pytest.raises(UserInputError, match="map.sacred"):
        game.state_from_json(data)


@pytest.mark.parametrize("variant", ["", variants.SACRED, variants.SACRED_END])
def test_founding_bonus_applies_exactly_on_the_sacred_terrain(variant):
    game = _game(variant)
    state = game.new_initial_state(4)
    sacred = game.map_for_seed(4)[0].sacred if variant else \
        _game(variants.SACRED).map_for_seed(4)[0].sacred
    other = next(t for t in variants.candidates(game.tables, state.map) if t != sacred)
    on = found_city(state, 0, _land_tile(state, sacred))
    off = found_city(state, 0, _land_tile(state, other))
    assert on.size == (1 + variants.EXTRA_CITIZENS if variant == variants.SACRED else 1)
    assert off.size == 1


def test_end_points_count_only_once_the_game_is_over():
    game = _game(variants.SACRED_END, max_turns=5)
    state = game.new_initial_state(4)
    sacred = state.map.sacred
    found_city(state, 0, _land_tile(state, sacred))
    before = state.score(0)
    assert before == state.score(1) + 1  # one citizen, no bonus yet
    state.turn = state.max_turns
    state.check_over()
    assert state.is_terminal()
    assert state.score(0) == before + variants.END_POINTS
    plain = _game("", max_turns=5).new_initial_state(4)
    found_city(plain, 0, _land_tile(plain, sacred))
    plain.turn = plain.max_turns
    plain.check_over()
    assert plain.score(0) == before


def test_unknown_variant_is_one_clear_line(capsys):
    with pytest.raises(UserInputError, match="variant='holy': choose from \"\", sacred-terrain"):
        make_game("civ", variant="holy")
    for argv in (["game", "play", "--variant", "holy", "--turns", "1"],
                 ["play", "--variant", "holy", "--method", "uct", "--steps", "1"],
                 ["manual", "show", "--variant", "holy"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and "'holy'" in err and err.count("\n") == 1


def test_the_rule_knowing_ai_founds_on_the_sacred_terrain():
    game = _game(variants.SACRED)
    on = {True: 0, False: 0}
    for seed in range(8):
        for knows in (True, False):
            state, _ = _play(game, seed, 25, knows_rule=knows)
            on[knows] += sum(1 for c in state.cities.values()
                             if c.owner == 0 and state.map.terr[c.tile] == state.map.sacred)
    assert on[True] >= on[False] + 6
