"""FreeCiv details the engine once got wrong: city defence losses, river city centres, martial law,
fortify features, order-independent labels, JSON activities, and the AI's shared site cache."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from nlmcs.games.base import Action
from nlmcs.games.civ import ai
from nlmcs.games.civ.cities import tile_output
from nlmcs.games.civ.convert import convert_freeciv_ruleset
from nlmcs.games.civ.ruleset import load_ruleset
from nlmcs.games.civ.scenario import place_city, place_unit, state_from_picture, tile_at
from nlmcs.games.civ.serialize import StateFileError
from nlmcs.games.civ.tables import IRRIGATION, ROAD
from nlmcs.paths import shipped_dir

CLASSIC = shipped_dir() / "rulesets" / "classic.json"
FREECIV_CLASSIC = Path("/usr/share/games/freeciv/classic")
RNG = np.random.default_rng(0)


def _won_attack(s, attacker, direction: int):
    """A clone of `s` in which `attacker` attacked and survived (tries seeds until it does)."""
    for seed in range(100):
        t = s.clone()
        rng = np.random.default_rng(seed)
        assert t.apply_action(attacker.aid, Action("attack", direction), rng)
        if attacker.id in t.units:
            return t
    raise AssertionError("the attacker never won")


@pytest.mark.parametrize(("size", "walls", "size_after"), [(1, False, 1), (3, True, 3),
                                                           (3, False, 2)])  # fmt: skip
def test_lost_city_defence_costs_a_citizen_only_above_size_one_without_walls(
        small_game, size, walls, size_after):
    s = state_from_picture(small_game, ["ggggg"] * 5)
    city = place_city(s, 1, 2, 2, size=size, buildings=("city walls",) if walls else ())
    place_unit(s, 1, "warriors", 2, 2)
    place_unit(s, 1, "warriors", 2, 2)
    attacker = place_unit(s, 0, "catapult", 1, 2, vet=3)
    t = _won_attack(s, attacker, 2)
    assert city.id in t.cities  # never destroyed because a defender died
    assert t.cities[city.id].size == size_after
    assert len(t.tile_units[city.tile]) == 1  # only the best defender died inside the city


def test_site_values_depend_on_terrain_only(small_game):
    s = small_game.new_initial_state(1)
    s.map.ai_cache.clear()
    before = list(ai.site_values(s)[0])
    land = [t for t in range(s.map.n) if not s.map.ocean[t]]
    for t in land[::3]:
        s.improvements[t] |= IRRIGATION | ROAD
    s.map.ai_cache.clear()
    assert list(ai.site_values(s)[0]) == before


def test_river_city_centre_gets_no_free_road(small_game):
    s = state_from_picture(small_game, ["gGgg", "gggg", "gggg"])
    river, dry = tile_at(s, 1, 0), tile_at(s, 0, 2)
    assert tile_output(s, river, True)[2] == tile_output(s, river)[2]  # river trade, no road
    assert tile_output(s, dry, True)[2] == tile_output(s, dry)[2] + 1  # the free road's +1
    place_city(s, 0, 1, 0)
    for x in (2, 3):
        s.improvements[tile_at(s, x, 0)] |= ROAD
    place_unit(s, 1, "warriors", 3, 2)
    w = place_unit(s, 0, "warriors", 1, 0)
    assert s.apply_action(w.aid, Action("move", 2), RNG)
    assert w.tile == tile_at(s, 2, 0)  # a full move: no road leaves the river city


def test_classic_martial_law_under_despotism_reaches_100(small_game):
    assert load_ruleset(CLASSIC).params["martial_law_max"] == 100
    s = state_from_picture(small_game, ["ggggg"] * 5)
    city = place_city(s, 0, 2, 2, size=8)
    for _ in range(5):
        place_unit(s, 0, "warriors", 2, 2)
    place_unit(s, 1, "warriors", 4, 4)
    s.end_turn(RNG)
    assert city.unhappy == 0  # 8 citizens - 4 content - 5 under martial law


@pytest.mark.skipif(not FREECIV_CLASSIC.is_dir(), reason="FreeCiv data not installed")
def test_converter_reads_martial_law_max_from_effects(tmp_path):
    rules = tmp_path / "classic"
    shutil.copytree(FREECIV_CLASSIC, rules)
    effects = rules / "effects.ruleset"
    text = effects.read_text()
    head, sep, tail = text.partition("[effect_martial_law_max_1]")
    assert sep and '"Despotism"' in tail.split("[effect", 1)[0]
    effects.write_text(head + sep + tail.replace("value   = 100", "value   = 7", 1))
    assert convert_freeciv_ruleset(rules, name="classic")["params"]["martial_law_max"] == 7


def test_a_fortify_order_counts_as_fortified(small_game):
    s = state_from_picture(small_game, ["ggggg"] * 3)
    w = place_unit(s, 0, "warriors", 0, 0)
    place_unit(s, 1, "warriors", 4, 2)
    names = small_game.state_feature_names()
    before = dict(zip(names, s.state_vector(0), strict=True))["own_units_fortified"]
    assert s.apply_action(w.aid, Action("fortify"), RNG)
    after = dict(zip(names, s.state_vector(0), strict=True))["own_units_fortified"]
    assert (before, after) == (0, 1)


def test_attack_label_names_the_best_defender_whatever_the_stack_order(small_game):
    s = state_from_picture(small_game, ["ggggg"] * 3)
    place_unit(s, 0, "warriors", 0, 1)
    phalanx = place_unit(s, 0, "phalanx", 2, 1)
    place_unit(s, 0, "warriors", 1, 1)
    s.move_unit(phalanx, tile_at(s, 1, 1))  # the phalanx is second in the stack
    attacker = place_unit(s, 1, "archers", 2, 2)
    label = s.action_labels(attacker.aid, Action("attack", 7))
    back = small_game.state_from_json(json.loads(json.dumps(s.to_json())))
    assert label == ("attack", "northwest", "enemy", "grassland", "phalanx")
    assert back.action_labels(attacker.aid, Action("attack", 7)) == label


@pytest.mark.parametrize(("unit", "terrain", "activity", "message"), [
    ("settlers", "m", "irrigating", "cannot be irrigated"),
    ("settlers", "g", "mining", "cannot be mined"),
    ("settlers", "G", "roading", "no road"),
    ("warriors", "g", "irrigating", "cannot work tiles"),
    ("settlers", "g", "fortified", "cannot fortify"),
])  # fmt: skip
def test_impossible_activities_are_refused(small_game, unit, terrain, activity, message):
    s = state_from_picture(small_game, ["ggggg", f"g{terrain}ggg", "ggggg"])
    place_unit(s, 0, unit, 1, 1)
    place_unit(s, 1, "warriors", 4, 2)
    data = s.to_json()
    small_game.state_from_json(data)  # idle: fine
    data["units"][0]["activity"] = activity
    with pytest.raises(StateFileError, match=rf"units\[0\]\.activity: .*{message}"):
        small_game.state_from_json(data)


def test_possible_activities_still_load(small_game):
    s = state_from_picture(small_game, ["ggggg", "ghggg", "ggggg"])
    place_unit(s, 0, "settlers", 1, 1)
    place_unit(s, 0, "warriors", 1, 1)
    place_unit(s, 1, "warriors", 4, 2)
    data = s.to_json()
    for activity in ("irrigating", "mining", "roading"):
        data["units"][0]["activity"] = activity
        data["units"][1]["activity"] = "fortifying"
        assert small_game.state_from_json(data).to_json() == data
