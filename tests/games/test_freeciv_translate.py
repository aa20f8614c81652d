"""The FreeCiv bridge's translation (server view -> our state) and orders (our move -> requests),
on a hand-made view, so they run without a server; tests/games/test_freeciv_protocol.py plays
the real thing."""

from __future__ import annotations

import numpy as np
import pytest

from nlmcs.games.base import Action
from nlmcs.games.freeciv.client import View
from nlmcs.games.freeciv.constants import ENUMS
from nlmcs.games.freeciv.orders import DIRECTIONS, fixed_rules, requests
from nlmcs.games.freeciv.translate import translate

W, H = 16, 12
ME, AI = 0, 1


def bits(*ids: int, size: int = 16) -> bytes:
    out = bytearray(size)
    for i in ids:
        out[i // 8] |= 1 << (i % 8)
    return bytes(out)


def at(x: int, y: int) -> int:
    return y * W + x


@pytest.fixture
def view() -> View:
    v = View(player_id=ME)
    v.latest["PACKET_MAP_INFO"] = {"xsize": W, "ysize": H}
    v.latest["PACKET_GAME_INFO"] = {"turn": 5}
    v.terrains = {0: {"rule_name": "Grassland"}, 1: {"rule_name": "Ocean"},
                  2: {"rule_name": "Lake"}, 3: {"rule_name": "Hills"}}
    v.extras = {0: {"rule_name": "River"}, 1: {"rule_name": "Irrigation"},
                2: {"rule_name": "Mine"}, 3: {"rule_name": "Road"}, 4: {"rule_name": "Wheat"}}
    v.unit_types = {0: {"rule_name": "Settlers"}, 1: {"rule_name": "Warriors"},
                    2: {"rule_name": "Explorer"}}
    v.buildings = {0: {"rule_name": "Barracks"}, 1: {"rule_name": "Palace"}}
    v.techs = {0: {"rule_name": "None"}, 1: {"rule_name": "Bronze Working"},
               2: {"rule_name": "Alphabet"}}
    for y in range(2, 9):  # a known patch; the rest of the map was never seen
        for x in range(2, 9):
            v.tiles[at(x, y)] = {"tile": at(x, y), "known": 2, "terrain": 0, "resource": 128,
                                 "extras": bits()}
    v.tiles[at(2, 2)]["terrain"] = 1  # ocean
    v.tiles[at(8, 8)]["terrain"] = 2  # a lake: ocean for us
    v.tiles[at(5, 5)].update(extras=bits(0, 3), resource=4)  # river, road, wheat
    v.tiles[at(6, 5)].update(terrain=3, extras=bits(2))  # a mined hill
    v.players = {ME: {"playerno": ME, "is_alive": True, "gold": 40, "score": 3},
                 AI: {"playerno": AI, "is_alive": True, "gold": 0, "score": 0}}
    v.research = {ME: {"id": ME, "inventions": "021" + "0" * 10, "researching": 2,
                       "bulbs_researched": 7}}
    v.cities = {50: {"id": 50, "owner": ME, "tile": at(5, 5), "size": 3, "food_stock": 9,
                     "shield_stock": 4, "production_kind": ENUMS["VUT_UTYPE"],
                     "production_value": 1, "improvements": bits(0, 1, size=25),
                     "turn_founded": 1}}
    v.units = {
        60: {"id": 60, "owner": ME, "type": 0, "tile": at(4, 4), "hp": 20, "veteran": 0,
             "activity": ENUMS["ACTIVITY_IDLE"], "activity_count": 0, "homecity": 50},
        61: {"id": 61, "owner": ME, "type": 2, "tile": at(4, 5), "hp": 10, "veteran": 0,
             "activity": 0, "activity_count": 0, "homecity": 0},  # an explorer
        62: {"id": 62, "owner": ME, "type": 1, "tile": at(3, 3), "hp": 10, "veteran": 0,
             "activity": ENUMS["ACTIVITY_SENTRY"], "activity_count": 0, "homecity": 0},
        63: {"id": 63, "owner": ME, "type": 0, "tile": at(3, 4), "hp": 20, "veteran": 0,
             "activity": ENUMS["ACTIVITY_MINE"], "activity_count": 10, "homecity": 0},
    }
    return v


def test_the_view_becomes_our_state_and_the_gaps_are_counted(view):
    tr = translate(view, max_turns=100)
    s, gaps = tr.state, tr.gaps
    assert tr.players == [ME, AI] and s.turn == 5 and s.map.width == W
    names = [t.name for t in s.tables.ruleset.terrains]
    assert names[s.map.terr[at(2, 2)]] == "ocean" and names[s.map.terr[at(8, 8)]] == "ocean"
    assert names[s.map.terr[at(6, 5)]] == "hills" and names[s.map.terr[at(0, 0)]] == "tundra"
    assert s.map.riv[at(5, 5)] and s.tables.resource_names[s.map.res[at(5, 5)]] == "wheat"
    assert s.improvements[at(6, 5)] != 0  # the mine
    city = s.cities[50]
    assert (city.size, city.food, city.shields, city.capital) == (3, 9, 4, True)
    assert s.tables.item_names[city.build] == "warriors"
    assert city.buildings == 1 << s.tables.building_names.index("barracks")
    assert sorted(u.id for u in s.units.values() if u.owner == 0) == [60, 62, 63]
    assert s.tables.unit_names[s.units[60].kind] == "settlers" and s.units[60].home == 50
    p = s.players[0]
    assert p.techs == 1 << s.tables.tech_names.index("bronze working")
    assert s.tables.tech_names[p.researching] == "alphabet" and (p.bulbs, p.gold) == (7, 40)
    assert gaps["unknown tile (guessed tundra)"] == W * H - 49
    assert gaps["terrain lake as ocean"] == 1
    assert gaps["unit explorer left out"] == 1 and gaps["activity as idle"] == 1
    assert gaps["activity mining as idle (grassland cannot be mined)"] == 1  # FreeCiv: forest
    # Nothing of the AI is in sight: a guessed city on the never-seen tile farthest from us.
    (guess,) = [c for c in s.cities.values() if c.owner == 1]
    assert guess.tile not in view.tiles and not s.is_terminal()
    assert gaps["unseen opponent: a city guessed on the farthest unknown tile"] == 1


def test_a_seen_opponent_gets_no_guess(view):
    view.units[70] = {"id": 70, "owner": AI, "type": 1, "tile": at(7, 7), "hp": 10,
                      "veteran": 1, "activity": 0, "activity_count": 0, "homecity": 0}
    view.cities[80] = {"id": 80, "owner": AI, "tile": at(7, 3), "size": 2,
                       "improvements": bits(size=25)}  # seen from outside (short info)
    tr = translate(view, max_turns=100)
    assert [c.id for c in tr.state.cities.values() if c.owner == 1] == [80]
    assert tr.state.units[70].owner == 1 and tr.state.units[70].vet == 1
    assert tr.gaps["production of a city seen from outside as warriors"] == 1
    assert "unseen opponent: a city guessed on the farthest unknown tile" not in tr.gaps


def test_our_moves_become_the_servers_requests(view):
    tr = translate(view, max_turns=100)
    rng = np.random.default_rng(0)
    joint = {"unit:60": Action("move", 2), "city:50": Action("build", "settlers"),
             "civ:0": Action("research", "alphabet"), "unit:62": Action("wait")}
    out = dict(requests(tr, view, joint, rng))
    orders = out["PACKET_UNIT_ORDERS"]
    assert orders["unit_id"] == 60 and orders["dir"] == [ENUMS["DIR8_EAST"]] * orders["length"]
    assert orders["length"] >= 1 and orders["dest_tile"] == at(4 + orders["length"], 4)
    assert out["PACKET_CITY_CHANGE"] == {"city_id": 50, "production_kind": ENUMS["VUT_UTYPE"],
                                         "production_value": 0}
    assert out["PACKET_PLAYER_RESEARCH"] == {"tech": 2}
    assert len(out) == 3  # waiting sends nothing
    found = requests(tr, view, {"unit:60": Action("build_city")}, rng)
    assert found == [("PACKET_UNIT_DO_ACTION", {
        "actor_id": 60, "target_id": at(4, 4), "sub_tgt_id": 0, "name": "nlmcs 60",
        "action_type": ENUMS["ACTION_FOUND_CITY"]})]
    work = requests(tr, view, {"unit:60": Action("irrigate")}, rng)
    assert work == [("PACKET_UNIT_CHANGE_ACTIVITY", {
        "unit_id": 60, "activity": ENUMS["ACTIVITY_IRRIGATE"], "target": 1})]


def test_directions_map_to_freecivs_compass():
    # ours: north first, clockwise; FreeCiv: NW, N, NE, W, E, SW, S, SE
    assert DIRECTIONS == (1, 2, 4, 7, 6, 5, 3, 0)


def test_units_our_engine_lacks_explore_on_the_servers_rule(view):
    tr = translate(view, max_turns=100)
    assert fixed_rules(tr, view) == [("PACKET_UNIT_CHANGE_ACTIVITY", {
        "unit_id": 61, "activity": ENUMS["ACTIVITY_EXPLORE"], "target": -1})]
    view.units[61]["activity"] = ENUMS["ACTIVITY_EXPLORE"]  # already exploring: nothing to send
    assert fixed_rules(tr, view) == []


def test_barbarians_are_not_players_and_research_is_found_by_team(view):
    view.players[2] = {"playerno": 2, "is_alive": True, "barbarian_type": 1}
    view.players[ME]["team"] = 4  # research is pooled per team
    view.research = {4: view.research[ME]}
    tr = translate(view, max_turns=100)
    assert tr.players == [ME, AI]
    assert tr.state.tables.tech_names[tr.state.players[0].researching] == "alphabet"


def test_a_city_seen_from_outside_after_full_info_keeps_no_stale_fields():
    v = View()
    v.update("PACKET_CITY_INFO", {"id": 5, "owner": ME, "tile": 1, "size": 3, "food_stock": 9,
                                  "production_kind": ENUMS["VUT_UTYPE"]})
    v.update("PACKET_CITY_SHORT_INFO", {"id": 5, "owner": AI, "tile": 1, "size": 2})
    assert v.cities[5] == {"id": 5, "owner": AI, "tile": 1, "size": 2,
                           "_packet": "PACKET_CITY_SHORT_INFO"}


def test_the_real_game_aims_at_monarchy_and_changes_government_when_it_is_known(view):
    """What our engine does not model (FreeCiv's HOWTOPLAY): the research goal, then a
    revolution; our engine's research choices wait until the goal is known."""
    from nlmcs.games.freeciv.orders import GOAL

    view.techs[3] = {"rule_name": "Monarchy"}
    view.governments = {0: {"rule_name": "Anarchy"}, 1: {"rule_name": "Despotism"},
                        2: {"rule_name": "Monarchy"}}
    view.players[ME].update(government=1, target_government=1)
    tr = translate(view, max_turns=100)
    rng = np.random.default_rng(0)
    assert GOAL == "monarchy"
    research = {"civ:0": Action("research", "alphabet")}
    assert requests(tr, view, research, rng) == []  # the goal leads
    assert ("PACKET_PLAYER_TECH_GOAL", {"tech": 3}) in fixed_rules(tr, view)
    view.research[ME]["tech_goal"] = 3
    assert not any(p == "PACKET_PLAYER_TECH_GOAL" for p, _ in fixed_rules(tr, view))
    view.research[ME]["inventions"] = "0212" + "0" * 9  # Monarchy known
    assert ("PACKET_PLAYER_CHANGE_GOVERNMENT", {"government": 2}) in fixed_rules(tr, view)
    assert requests(tr, view, research, rng) == [("PACKET_PLAYER_RESEARCH", {"tech": 2})]
    view.players[ME].update(government=0, target_government=2)  # the revolution is under way
    assert not any(p == "PACKET_PLAYER_CHANGE_GOVERNMENT" for p, _ in fixed_rules(tr, view))


def test_our_workers_go_on_freecivs_auto_worker_and_no_planner_orders_them(view):
    view.unit_types[3] = {"rule_name": "Workers"}
    view.units[64] = {"id": 64, "owner": ME, "type": 3, "tile": at(5, 6), "hp": 10,
                      "veteran": 0, "activity": 0, "activity_count": 0, "homecity": 50}
    view.units[65] = {"id": 65, "owner": AI, "type": 3, "tile": at(7, 7), "hp": 10,
                      "veteran": 0, "activity": 0, "activity_count": 0, "homecity": 0}
    tr = translate(view, max_turns=100)
    auto = [f for p, f in fixed_rules(tr, view) if p == "PACKET_UNIT_AUTOSETTLERS"]
    assert auto == [{"unit_id": 64}]  # ours only, not the settlers
    rng = np.random.default_rng(0)
    assert requests(tr, view, {"unit:64": Action("irrigate")}, rng) == []
    view.units[64]["ai"] = True  # on the auto-worker already: nothing more to send
    assert not any(p == "PACKET_UNIT_AUTOSETTLERS" for p, _ in fixed_rules(tr, view))


def test_our_government_picks_the_rules_our_state_plays_by(view):
    view.governments = {0: {"rule_name": "Anarchy"}, 1: {"rule_name": "Despotism"},
                        2: {"rule_name": "Monarchy"}}
    view.players[ME]["government"] = 1
    despot = translate(view, max_turns=100)
    assert despot.state.game.ruleset.name == "classic"
    view.players[ME]["government"] = 2  # the revolution is over
    monarchy = translate(view, max_turns=100, game=despot.state.game)
    game = monarchy.state.game
    assert game is not despot.state.game and game.ruleset.name == "classic-monarchy"
    # Monarchy's effects: no tile penalty, less corruption, a higher science rate
    before, after = despot.state.game.ruleset.params, game.ruleset.params
    assert (before["tile_penalty_above"], after["tile_penalty_above"]) == (2, 0)
    assert (before["science_pct"], after["science_pct"]) == (60, 70)
    # a wheat river tile under Monarchy yields its full food: the city grows faster for us too
    city = next(iter(monarchy.state.cities.values()))
    assert city.surplus_food > next(iter(despot.state.cities.values())).surplus_food
    assert translate(view, max_turns=100, game=game).state.game is game  # kept while it holds
    view.players[ME]["government"] = 0
    anarchy = translate(view, max_turns=100, game=game)
    assert anarchy.state.game.ruleset.name == "classic"
    assert anarchy.gaps["government anarchy as despotism"] == 1


def test_the_servers_wrapping_map_wraps_ours_and_a_move_across_the_seam_is_one_step(view):
    """FreeCiv's WRAPX (`topology_id` bit 1): a unit on the west edge steps onto the east edge
    in one order, as the server moves it."""
    for y in range(2, 9):
        view.tiles[at(0, y)] = {"tile": at(0, y), "known": 2, "terrain": 0, "resource": 128,
                                "extras": bits()}
    view.units[64] = {"id": 64, "owner": ME, "type": 1, "tile": at(0, 6), "hp": 10,
                      "veteran": 0, "activity": 0, "activity_count": 0, "homecity": 0}
    flat = translate(view, max_turns=100)
    assert not flat.state.map.wrap_x
    assert Action("move", 6) not in flat.state.legal_actions("unit:64")
    view.latest["PACKET_MAP_INFO"]["topology_id"] = ENUMS["TF_WRAPX"]
    tr = translate(view, max_turns=100)
    assert tr.state.map.wrap_x and tr.state.game.config.wrap_x
    assert Action("move", 6) in tr.state.legal_actions("unit:64")
    out = requests(tr, view, {"unit:64": Action("move", 6)}, np.random.default_rng(0))
    orders = dict(out)["PACKET_UNIT_ORDERS"]
    assert orders["length"] == 1 and orders["dir"] == [ENUMS["DIR8_WEST"]]
    assert orders["dest_tile"] == at(W - 1, 6)
