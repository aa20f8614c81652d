"""A map that wraps east to west (FreeCiv's WRAPX, the topology the real server plays): its two
edges meet for moves, city radii, city spacing, distances and the JSON state; a flat map keeps
its edges. tests/games/test_civ_compiled.py plays wrapped maps on both engines."""

from __future__ import annotations

import numpy as np
import pytest

from nlmcs.errors import UserInputError
from nlmcs.games.base import Action
from nlmcs.games.civ import CivConfig, CivGame, legal, serialize
from nlmcs.games.civ.cities import capital_tiles, corruption_pct
from nlmcs.games.civ.mapgen import build_map
from nlmcs.games.civ.scenario import place_city, place_unit, state_from_picture, tile_at
from nlmcs.games.civ.serialize import StateFileError

WEST = 6  # our directions: north first, clockwise


def _state(game, wrap: bool):
    return state_from_picture(game, ["gggggggg"] * 5, wrap_x=wrap)


@pytest.mark.parametrize("wrap", [True, False])
def test_a_unit_on_the_west_edge_steps_onto_the_east_edge_only_when_the_map_wraps(
        small_game, wrap):
    s = _state(small_game, wrap)
    u = place_unit(s, 0, "warriors", 0, 2)
    moves = {a.arg for a in legal.unit_actions(s, u) if a.kind == "move"}
    assert (WEST in moves) == wrap
    if wrap:
        assert s.apply_action(u.aid, Action("move", WEST), np.random.default_rng(0))
        assert s.units[u.id].tile == tile_at(s, 7, 2)
        assert s.map.dist(tile_at(s, 0, 2), tile_at(s, 7, 2)) == 1
    else:
        assert s.map.dist(tile_at(s, 0, 2), tile_at(s, 7, 2)) == 7


@pytest.mark.parametrize("wrap", [True, False])
def test_a_city_on_the_seam_works_and_blocks_tiles_across_it(small_game, wrap):
    s = _state(small_game, wrap)
    city = place_city(s, 0, 0, 2)
    across = {tile_at(s, 7, 2), tile_at(s, 6, 2), tile_at(s, 7, 1)}
    assert across <= set(s.map.radius[city.tile]) if wrap else not across & set(
        s.map.radius[city.tile])
    assert len(set(s.map.radius[city.tile])) == len(s.map.radius[city.tile])  # no tile twice
    assert legal.can_found_city(s, tile_at(s, 7, 2)) != wrap  # citymindist counts across


def test_corruption_counts_the_distance_to_the_capital_the_short_way_round(small_game):
    pcts = {}
    for wrap in (True, False):
        s = _state(small_game, wrap)
        place_city(s, 0, 0, 2).capital = True
        far = place_city(s, 0, 6, 2)
        pcts[wrap] = corruption_pct(s, far, capital_tiles(s)[0])
    assert pcts[True] < pcts[False]  # two tiles round the seam against six across the map


def test_the_json_state_keeps_the_wrap_and_refuses_a_bad_one(small_game):
    s = _state(small_game, True)
    data = serialize.state_to_json(s)
    assert data["map"]["wrap_x"] is True
    back = small_game.state_from_json(data)
    assert back.map.wrap_x and back.map.neighbors == s.map.neighbors
    flat = serialize.state_to_json(_state(small_game, False))
    assert "wrap_x" not in flat["map"]  # a flat map's state reads as it did before wraps
    assert not small_game.state_from_json(flat).map.wrap_x
    data["map"]["wrap_x"] = "yes"
    with pytest.raises(StateFileError, match="map.wrap_x: expected true or false"):
        small_game.state_from_json(data)


def test_a_map_too_narrow_to_wrap_is_refused_in_one_line(small_game):
    T = small_game.tables
    with pytest.raises(UserInputError, match="too narrow to wrap"):
        build_map(T, 4, 3, [0] * 12, [-1] * 12, [False] * 12, wrap_x=True)
    build_map(T, 4, 3, [0] * 12, [-1] * 12, [False] * 12)  # a flat one that narrow is fine


def test_a_generated_map_that_wraps_has_its_land_across_the_seam():
    game = CivGame(CivConfig.preset("small", wrap_x=True))
    m, starts = game.map_for_seed(3)
    w = m.width
    assert m.wrap_x and len(starts) == 2
    assert any(not m.ocean[y * w] and not m.ocean[y * w + w - 1] for y in range(m.height))
    flat = CivGame(CivConfig.preset("small")).map_for_seed(3)[0]
    assert not flat.wrap_x
    assert any(not flat.ocean[t] for t in range(flat.n))
    assert all(flat.ocean[y * w] for y in range(m.height))  # the flat continent keeps off the edge
    # plain games record what they recorded before maps could wrap
    assert "wrap_x" not in CivConfig.preset("small").to_dict()
    assert CivConfig.preset("small", wrap_x=True).to_dict()["wrap_x"] is True
