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

from typing import NamedTuple

from nlmcs.games.base import Action
from nlmcs.games.civ.tables import (  # the unit orders, also read as legal.MOVE, ...
    ATTACK,
    BUILD_CITY,
    BUILD_ROAD,
    BUSY,
    CARDINAL,
    FORTIFIED,
    FORTIFY,
    FORTIFYING,
    IRRIGATE,
    IRRIGATION,
    MINE,
    MINE_ACTION,
    MOVE,
    ROAD,
    WAIT,
)

UNIT_KINDS = ("move", "attack", "fortify", "wait", "build_city", "irrigate", "mine", "build_road")
ACTION_KINDS = (*UNIT_KINDS, "build", "research")


# --- legal actions -----------------------------------------------------------------------------
def parse_agent(agent: str) -> tuple[str, int]:
    """("unit", 17) for "unit:17"; ("", -1) for anything malformed."""
    kind, _, ident = str(agent).partition(":")
    return (kind, int(ident)) if ident.isdigit() else ("", -1)


def agent_key(s, agent: str) -> tuple[str, int]:
    """`parse_agent`, memoised on the game: roll-outs resolve the same few ids over and over."""
    keys = s.game.agent_keys
    hit = keys.get(agent)
    if hit is None:
        hit = parse_agent(agent)
        if len(keys) > 100_000:
            keys.clear()
        keys[agent] = hit
    return hit


def legal_actions(s, agent: str) -> list[Action]:
    """An agent's legal actions now; [] for an agent that does not exist (any more)."""
    kind, key = agent_key(s, agent)
    if kind == "unit":
        u = s.units.get(key)
        if u is None:
            return []
        if u.activity in BUSY:
            return [WAIT]
        return unit_actions(s, u)
    if kind == "city":
        c = s.cities.get(key)
        return [] if c is None else list(build_options(s, c).actions)
    if kind == "civ" and key < len(s.players):
        return list(civ_options(s, key))
    return []


def agents_with_actions(s, player: int) -> list[tuple[str, tuple[Action, ...] | list[Action]]]:
    """`(agent, legal actions)` for each of `player`'s agents in `State.agents` order, without
    resolving the agent names again (the random player's and the search's inner loop)."""
    out = [(f"civ:{player}", civ_options(s, player))]
    out.extend((c.aid, build_options(s, c).actions)
               for c in s.cities.values() if c.owner == player)
    out.extend((u.aid, unit_actions(s, u))
               for u in s.units.values() if u.owner == player and u.activity not in BUSY)
    return out


def unit_actions(s, u) -> list[Action]:
    """Moves and attacks to the land neighbours, then the unit's orders; `occupant` tells whose
    units stand where (one player's per tile). Most units have no enemy next to them: they may
    move to every land neighbour (a non-military unit not into an enemy city)."""
    T, m = s.tables, s.map
    k, tile = u.kind, u.tile
    occupant, me = s.occupant, u.owner + 1
    military = T.unit_military[k]
    for nt in m.land_adjacent[tile]:
        o = occupant[nt]
        if o and o != me:
            acts = _contested_moves(s, u)
            break
    else:
        if military or s.city_at.keys().isdisjoint(m.land_adjacent[tile]):
            acts = list(m.land_moves[tile])
        else:
            acts = _contested_moves(s, u)
    if T.unit_can_fortify[k] and u.activity != FORTIFIED and u.activity != FORTIFYING:
        acts.append(FORTIFY)
    if T.unit_cities[k] and can_found_city(s, tile):
        acts.append(BUILD_CITY)
    if T.unit_settlers[k]:
        if can_irrigate(s, tile):
            acts.append(IRRIGATE)
        if can_mine(s, tile):
            acts.append(MINE_ACTION)
        if can_build_road(s, tile):
            acts.append(BUILD_ROAD)
    acts.append(WAIT)
    return acts


def _contested_moves(s, u) -> list[Action]:
    """Moves and attacks of a unit with enemy units or cities next to it: attacks on enemy
    units (military units that can attack), no non-military step into an enemy city, and the
    zones of control of enemy military units."""
    occupant, me, owner = s.occupant, u.owner + 1, u.owner
    T = s.tables
    acts = []
    enemy_seen = False
    if T.unit_military[u.kind]:
        can_attack = T.unit_can_attack[u.kind]
        for d, nt in s.map.land_steps[u.tile]:
            o = occupant[nt]
            if o and o != me:
                enemy_seen = True
                if can_attack:
                    acts.append(ATTACK[d])
            else:
                acts.append(MOVE[d])
    else:
        city_at, cities = s.city_at, s.cities
        for d, nt in s.map.land_steps[u.tile]:
            o = occupant[nt]
            if o and o != me:
                enemy_seen = True
                continue
            cid = city_at.get(nt)
            if cid is not None and cities[cid].owner != owner:
                continue
            acts.append(MOVE[d])
    if enemy_seen and u.tile not in s.city_at and in_enemy_zoc(s, u.tile, owner):
        nbrs = s.map.neighbors[u.tile]
        acts = [a for a in acts if a.kind != "move" or zoc_allows(s, nbrs[a.arg], owner)]
    return acts


class BuildOptions(NamedTuple):
    """What a city may build: names, "build" actions and name -> item index."""

    names: tuple[str, ...]
    actions: tuple[Action, ...]
    index: dict[str, int]


def build_options(s, c) -> BuildOptions:
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
        hit = cache[key] = BuildOptions(tuple(names), tuple(Action("build", n) for n in names),
                                        {n: T.item_by_name[n] for n in names})
    return hit


def buildable_items(s, c) -> tuple[str, ...]:
    return build_options(s, c).names


def buildable_index(s, c) -> dict[str, int]:
    """Buildable item name -> item index (the production handler's test and lookup in one)."""
    return build_options(s, c).index


def civ_options(s, player: int) -> tuple[Action, ...]:
    """The civilization's research choices (or wait), memoised on the game by techs."""
    techs = s.players[player].techs
    cache = s.game.options_cache
    key = ("civ", techs)
    hit = cache.get(key)
    if hit is None:
        opts = [Action("research", s.tables.tech_names[t]) for t in researchable(s, player)]
        hit = cache[key] = tuple(opts) or (WAIT,)
    return hit


def researchable(s, player: int) -> tuple[int, ...]:
    """Techs `player` may research now, by index; memoised on the game by techs."""
    techs = s.players[player].techs
    cache = s.game.options_cache
    key = ("research", techs)
    hit = cache.get(key)
    if hit is None:
        T = s.tables
        hit = cache[key] = tuple(
            t for t in range(len(T.tech_names))
            if not techs >> t & 1 and all(techs >> r & 1 for r in T.tech_reqs[t]))
    return hit


def in_enemy_zoc(s, tile: int, owner: int) -> bool:
    """FreeCiv zones of control: a tile next to an enemy military unit on land."""
    occupant, me = s.occupant, owner + 1
    for nb in s.map.land_adjacent[tile]:  # units stand on land only
        o = occupant[nb]
        if o and o != me:
            units, mil = s.units, s.tables.unit_military
            if any(mil[units[i].kind] for i in s.tile_units[nb]):
                return True
    return False


def zoc_allows(s, dst: int, owner: int) -> bool:
    """For a unit leaving an enemy zone of control (FreeCiv `can_step_taken_wrt_to_zoc`): it may
    step into a city, onto its own units, or onto a tile outside every enemy zone of control."""
    if dst in s.city_at:
        return True
    if s.occupant[dst] == owner + 1:
        return True
    return not in_enemy_zoc(s, dst, owner)


def can_found_city(s, tile: int) -> bool:
    if s.map.ocean[tile]:
        return False
    return s.city_at.keys().isdisjoint(s.map.too_close[tile])


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
