"""Which actions each agent may take now, and the tests behind them.

Action kinds (also the action types typed roll-outs sample from):
- units: "move" (arg: direction 0..7, N clockwise), "attack" (arg: direction), "fortify", "wait",
  "build_city", "irrigate", "mine", "build_road"
- cities: "build" (arg: item name, e.g. "warriors", "city walls")
- the civilization: "research" (arg: tech name, e.g. "bronze working"), "wait"

City and research options depend only on bitmasks (techs, buildings), so they are memoised on the
game; unit actions look at the eight neighbouring tiles.
"""

from __future__ import annotations

from nlmcs.games.base import Action
from nlmcs.games.civ.tables import BUSY, CARDINAL, FORTIFIED, FORTIFYING, IRRIGATION, MINE, ROAD

MOVE = tuple(Action("move", d) for d in range(8))
ATTACK = tuple(Action("attack", d) for d in range(8))
WAIT = Action("wait")
FORTIFY = Action("fortify")
BUILD_CITY = Action("build_city")
IRRIGATE = Action("irrigate")
MINE_ACTION = Action("mine")
BUILD_ROAD = Action("build_road")
UNIT_KINDS = ("move", "attack", "fortify", "wait", "build_city", "irrigate", "mine", "build_road")
ACTION_KINDS = (*UNIT_KINDS, "build", "research")


# --- legal actions -----------------------------------------------------------------------------
def parse_agent(agent: str) -> tuple[str, int]:
    """("unit", 17) for "unit:17"; ("", -1) for anything malformed."""
    kind, _, ident = str(agent).partition(":")
    return (kind, int(ident)) if ident.isdigit() else ("", -1)


def legal_actions(s, agent: str) -> list[Action]:
    """An agent's legal actions now; [] for an agent that does not exist (any more)."""
    kind, key = parse_agent(agent)
    if kind == "unit":
        u = s.units.get(key)
        if u is None:
            return []
        if u.activity in BUSY:
            return [WAIT]
        return unit_actions(s, u)
    if kind == "city":
        c = s.cities.get(key)
        return [] if c is None else city_actions(s, c)
    if kind == "civ" and key < len(s.players):
        return civ_actions(s, key)
    return []


def unit_actions(s, u) -> list[Action]:
    m, T = s.map, s.tables
    k = u.kind
    military = T.unit_military[k]
    can_attack = military and T.ruleset.units[k].attack > 0
    ocean, tile_units, units, city_at = m.ocean, s.tile_units, s.units, s.city_at
    owner = u.owner
    acts = []
    enemy_seen = False
    for d, nt in enumerate(m.neighbors[u.tile]):
        if nt < 0 or ocean[nt]:
            continue
        stack = tile_units.get(nt)
        if stack and units[stack[0]].owner != owner:
            enemy_seen = True
            if can_attack:
                acts.append(ATTACK[d])
            continue
        if not military:
            cid = city_at.get(nt)
            if cid is not None and s.cities[cid].owner != owner:
                continue
        acts.append(MOVE[d])
    if enemy_seen and u.tile not in city_at and in_enemy_zoc(s, u.tile, owner):
        nbrs = m.neighbors[u.tile]
        acts = [a for a in acts if a.kind != "move" or zoc_allows(s, nbrs[a.arg], owner)]
    if T.unit_can_fortify[k] and u.activity != FORTIFIED and u.activity != FORTIFYING:
        acts.append(FORTIFY)
    if T.unit_cities[k] and can_found_city(s, u.tile):
        acts.append(BUILD_CITY)
    if T.unit_settlers[k]:
        if can_irrigate(s, u.tile):
            acts.append(IRRIGATE)
        if can_mine(s, u.tile):
            acts.append(MINE_ACTION)
        if can_build_road(s, u.tile):
            acts.append(BUILD_ROAD)
    acts.append(WAIT)
    return acts


def _build_options(s, c) -> tuple[tuple[str, ...], tuple[Action, ...]]:
    """Items a city can build; depends only on (techs, buildings), so memoised on the game."""
    techs = s.players[c.owner].techs
    key = (techs, c.buildings)
    cache = s.game.options_cache
    hit = cache.get(key)
    if hit is None:
        T = s.tables
        names = []
        for i, name in enumerate(T.item_names):
            tech = T.item_tech[i]
            if tech >= 0 and not techs >> tech & 1:
                continue
            if i >= T.n_units and c.buildings >> (i - T.n_units) & 1:
                continue
            names.append(name)
        hit = cache[key] = (tuple(names), tuple(Action("build", n) for n in names))
    return hit


def city_actions(s, c) -> list[Action]:
    return list(_build_options(s, c)[1])


def buildable_items(s, c) -> tuple[str, ...]:
    return _build_options(s, c)[0]


def civ_actions(s, player: int) -> list[Action]:
    techs = s.players[player].techs
    cache = s.game.options_cache
    key = ("civ", techs)
    hit = cache.get(key)
    if hit is None:
        opts = [Action("research", s.tables.tech_names[t]) for t in researchable(s, player)]
        hit = cache[key] = tuple(opts) or (WAIT,)
    return list(hit)


def researchable(s, player: int) -> list[int]:
    techs = s.players[player].techs
    T = s.tables
    return [t for t in range(len(T.tech_names))
            if not techs >> t & 1 and all(techs >> r & 1 for r in T.tech_reqs[t])]


def in_enemy_zoc(s, tile: int, owner: int) -> bool:
    """FreeCiv zones of control: a tile next to an enemy military unit on land."""
    tu, units, mil = s.tile_units, s.units, s.tables.unit_military
    for nb in s.map.neighbors[tile]:
        if nb >= 0:
            stack = tu.get(nb)
            if stack and units[stack[0]].owner != owner and any(mil[units[i].kind] for i in stack):
                return True
    return False


def zoc_allows(s, dst: int, owner: int) -> bool:
    """For a unit leaving an enemy zone of control (FreeCiv `can_step_taken_wrt_to_zoc`): it may
    step into a city, onto its own units, or onto a tile outside every enemy zone of control."""
    if dst in s.city_at:
        return True
    stack = s.tile_units.get(dst)
    if stack and s.units[stack[0]].owner == owner:
        return True
    return not in_enemy_zoc(s, dst, owner)


def can_found_city(s, tile: int) -> bool:
    if s.map.ocean[tile]:
        return False
    dist = s.params["citymindist"]
    w = s.map.width
    x, y = tile % w, tile // w
    return all(max(abs(ct % w - x), abs(ct // w - y)) >= dist for ct in s.city_at)


def can_irrigate(s, tile: int) -> bool:
    m = s.map
    ter = s.tables.ruleset.terrains[m.terr[tile]]
    imp = s.improvements[tile]
    if ter.irrigation_food == 0 or imp & IRRIGATION or tile in s.city_at:
        return False
    if m.water_source[tile]:
        return True
    nb = m.neighbors[tile]
    return any(nb[d] >= 0 and s.improvements[nb[d]] & IRRIGATION for d in CARDINAL)


def can_mine(s, tile: int) -> bool:
    ter = s.tables.ruleset.terrains[s.map.terr[tile]]
    return ter.mining_shield > 0 and not s.improvements[tile] & MINE and tile not in s.city_at


def can_build_road(s, tile: int) -> bool:
    # Roads on river tiles need Bridge Building, which this tech tree does not reach.
    ter = s.tables.ruleset.terrains[s.map.terr[tile]]
    return (ter.road_time > 0 and not s.improvements[tile] & ROAD and not s.map.riv[tile]
            and tile not in s.city_at)
