"""Applying actions: one dispatcher, one small handler per action type, and cities changing hands.

Every handler checks its own preconditions (the tests in `legal.py`) and returns False without
changing anything when the action is not legal now, so an action that an earlier one made illegal
is simply dropped.
"""

from __future__ import annotations

import numpy as np

from nlmcs.games.base import Action
from nlmcs.games.civ import combat
from nlmcs.games.civ.legal import (
    agent_key,
    buildable_index,
    buildable_items,
    can_build_road,
    can_found_city,
    can_irrigate,
    can_mine,
    in_enemy_zoc,
    researchable,
    zoc_allows,
)
from nlmcs.games.civ.tables import (
    BUSY,
    CARDINAL,
    FORTIFIED,
    FORTIFYING,
    IDLE,
    IRRIGATING,
    MINING,
    ROAD,
    ROADING,
)


# --- the dispatcher ----------------------------------------------------------------------------
def apply_action(s, agent: str, action: Action, rng: np.random.Generator) -> bool:
    kind, key = s.game.agent_keys.get(agent) or agent_key(s, agent)
    if kind == "unit":
        u = s.units.get(key)
        if u is None:
            return False
        if u.activity in BUSY:
            return action.kind == "wait"  # keeps working
        handler = UNIT_HANDLERS.get(action.kind)
        return False if handler is None else handler(s, u, action.arg, rng)
    if kind == "city":
        c = s.cities.get(key)
        return False if c is None or action.kind != "build" else set_production(s, c, action.arg)
    if kind == "civ":
        if not 0 <= key < len(s.players):
            return False
        if action.kind == "wait":
            return not researchable(s, key)
        return action.kind == "research" and set_research(s, key, action.arg)
    return False


# --- unit handlers -----------------------------------------------------------------------------
def _direction(arg) -> int:
    return arg if isinstance(arg, int) and not isinstance(arg, bool) and 0 <= arg < 8 else -1


def do_move(s, u, arg, rng) -> bool:
    """Move along one direction while move points last: roads and rivers (cardinal steps) cost a
    fraction of a move, so fast units and road networks go further. Stops next to an enemy, on
    entering a city, or where the next step is blocked. Entering an empty enemy city captures it.
    A unit next to an enemy may not step to another tile next to one (zones of control)."""
    d = arg if type(arg) is int and 0 <= arg < 8 else _direction(arg)
    if d < 0:
        return False
    m, T, p = s.map, s.tables, s.params
    moves = T.unit_moves[u.kind]
    military = T.unit_military[u.kind]
    owner = u.owner
    me = owner + 1
    nbrs, ocean, riv, land_adjacent = m.neighbors, m.ocean, m.riv, m.land_adjacent
    city_at, occupant, imps = s.city_at, s.occupant, s.improvements
    here = u.tile
    first = nbrs[here][d]
    if (first >= 0 and here not in city_at and in_enemy_zoc(s, here, owner)
            and not zoc_allows(s, first, owner)):
        return False  # zones of control; later steps start away from enemies (we stop next to one)
    steps = 0
    while moves > 0:
        nt = nbrs[here][d]
        if nt < 0 or ocean[nt]:
            break
        o = occupant[nt]
        if o and o != me:
            break
        cid = city_at.get(nt)
        enemy_city = cid is not None and s.cities[cid].owner != owner
        if enemy_city and not military:
            break
        # a city centre has a free road, except on a river (no Bridge Building)
        if (imps[here] & ROAD or (here in city_at and not riv[here])) and (
            imps[nt] & ROAD or (cid is not None and not riv[nt])
        ):
            cost = p["road_move_frags"]
        elif riv[here] and riv[nt] and d in CARDINAL:
            cost = p["river_move_frags"]
        else:
            cost = s.terrain_move[m.terr[nt]] * p["move_frags"]
        s.move_unit(u, nt)
        here = nt
        steps += 1
        moves -= cost
        if enemy_city:
            capture_city(s, s.cities[cid], owner)
            break
        if cid is not None:
            break
        for nb in land_adjacent[nt]:  # stop next to an enemy
            o = occupant[nb]
            if o and o != me:
                moves = 0
                break
    if steps == 0:
        return False
    u.activity = IDLE
    return True


def do_attack(s, u, arg, rng) -> bool:
    d = _direction(arg)
    T = s.tables
    if d < 0 or not T.unit_military[u.kind] or T.ruleset.units[u.kind].attack <= 0:
        return False
    nt = s.map.neighbors[u.tile][d]
    if nt < 0 or s.map.ocean[nt]:
        return False
    stack = s.tile_units.get(nt)
    if not stack or s.units[stack[0]].owner == u.owner:
        return False
    defender = combat.best_defender(s, nt)
    a = combat.attack_strength(s, u)
    dd = combat.defense_strength(s, defender)
    fp = T.ruleset.units
    att_hp, def_hp = combat.combat_rounds(rng, a / (a + dd), u.hp, defender.hp,
                                          fp[u.kind].firepower, fp[defender.kind].firepower)
    u.activity = IDLE
    raise_pct = s.params["veteran_raise_pct"]
    if def_hp <= 0:
        u.hp = att_hp
        city_id = s.city_at.get(nt)
        dead = [defender] if city_id is not None else [s.units[i] for i in stack]  # killstack
        for victim in dead:
            s.remove_unit(victim)
        s.players[u.owner].killed += len(dead)
        s.players[defender.owner].lost += len(dead)
        if city_id is not None:
            # FreeCiv "killcitizen": a lost defence costs a citizen, but never the last one, and
            # not behind City Walls (Unit_No_Lose_Pop); the city itself is never destroyed here.
            city = s.cities[city_id]
            if city.size > 1 and not city.buildings >> T.walls & 1:
                city.size -= 1
                city.dirty = True
        if u.vet + 1 < len(raise_pct) and rng.random() * 100 < raise_pct[u.vet]:
            u.vet += 1
    else:
        defender.hp = def_hp
        s.remove_unit(u)
        s.players[defender.owner].killed += 1
        s.players[u.owner].lost += 1
        if defender.vet + 1 < len(raise_pct) and rng.random() * 100 < raise_pct[defender.vet]:
            defender.vet += 1
    s.check_over()
    return True


def do_fortify(s, u, arg, rng) -> bool:
    if not s.tables.unit_can_fortify[u.kind] or u.activity in (FORTIFIED, FORTIFYING):
        return False
    u.activity = FORTIFYING
    return True


def do_wait(s, u, arg, rng) -> bool:
    return True


def do_build_city(s, u, arg, rng) -> bool:
    if not s.tables.unit_cities[u.kind] or not can_found_city(s, u.tile):
        return False
    tile, owner = u.tile, u.owner
    s.remove_unit(u)
    found_city(s, owner, tile)
    return True


def _start_work(activity, check):
    def handler(s, u, arg, rng) -> bool:
        if not s.tables.unit_settlers[u.kind] or not check(s, u.tile):
            return False
        u.activity = activity
        u.progress = 0
        return True

    return handler


UNIT_HANDLERS = {
    "move": do_move,
    "attack": do_attack,
    "fortify": do_fortify,
    "wait": do_wait,
    "build_city": do_build_city,
    "irrigate": _start_work(IRRIGATING, can_irrigate),
    "mine": _start_work(MINING, can_mine),
    "build_road": _start_work(ROADING, can_build_road),
}


# --- city and civilization handlers ------------------------------------------------------------
def set_production(s, c, name) -> bool:
    item = buildable_index(s, c).get(name) if isinstance(name, str) else None
    if item is None:
        return False
    T = s.tables
    if item != c.build:
        if not c.fresh and (item < T.n_units) != (c.build < T.n_units):
            c.shields = c.shields * (100 - s.params["change_penalty_pct"]) // 100
        c.build = item
    return True


def set_research(s, player: int, name) -> bool:
    t = s.tables.tech_by_name.get(name) if isinstance(name, str) else None
    if t is None or t not in researchable(s, player):
        return False
    s.players[player].researching = t
    return True


# --- cities changing hands ---------------------------------------------------------------------
def found_city(s, owner: int, tile: int):
    from nlmcs.games.civ.objects import City

    cid = s.next_id
    s.next_id += 1
    capital = not any(c.owner == owner and c.capital for c in s.cities.values())
    size = 1
    if s.game.sacred_citizens and s.map.terr[tile] == s.map.sacred:
        size += s.game.sacred_citizens  # the sacred-terrain variant's rule
    city = City(cid, owner, tile, size=size, build=s.tables.default_build, capital=capital,
                founded=s.turn)
    s.cities[cid] = city
    s.city_at[tile] = cid
    for other in s.cities.values():
        other.dirty = True
    return city


def capture_city(s, city, new_owner: int) -> None:
    """FreeCiv conquest: the city shrinks by one (destroyed at size 0), then changes hands."""
    old = city.owner
    city.size -= 1
    if city.size <= 0:
        destroy_city(s, city)
    else:
        city.owner = new_owner
        city.capital = False
        city.fresh = True
        city.shields = 0
        city.dirty = True
        if city.build >= 0 and s.tables.item_names[city.build] not in buildable_items(s, city):
            city.build = 0
        for u in s.units.values():
            if u.home == city.id:
                u.home = -1
    _reassign_capital(s, old)
    s.check_over()


def destroy_city(s, city) -> None:
    del s.cities[city.id]
    del s.city_at[city.tile]
    for u in s.units.values():
        if u.home == city.id:
            u.home = -1
    for other in s.cities.values():
        other.dirty = True
    _reassign_capital(s, city.owner)


def _reassign_capital(s, owner: int) -> None:
    mine = [c for c in s.cities.values() if c.owner == owner]
    if mine and not any(c.capital for c in mine):
        min(mine, key=lambda c: c.id).capital = True
