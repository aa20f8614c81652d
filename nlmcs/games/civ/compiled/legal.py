"""Every agent's legal actions, compiled: the same actions in the same order as
`nlmcs.games.civ.legal.agents_with_actions` (the reference), as codes (`codes`).

`player_actions` writes, for one player, the codes of its agents' actions into one flat array
with an offset per agent: the civilization first, then its cities, then its idle units, each in
the reference's order.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from nlmcs.games.civ import tables as tb
from nlmcs.games.civ.compiled import codes
from nlmcs.games.civ.compiled.arrays import map_arrays, rule_arrays, state_arrays

_IRRIGATION, _MINE, _ROAD = tb.IRRIGATION, tb.MINE, tb.ROAD
_FORTIFYING, _FORTIFIED = tb.FORTIFYING, tb.FORTIFIED
_BUSY_LOW, _BUSY_HIGH = min(tb.BUSY), max(tb.BUSY)
assert set(range(_BUSY_LOW, _BUSY_HIGH + 1)) == set(tb.BUSY)


@njit(cache=True)
def _enemy_zoc(tile, owner, neighbors, land, occupant, military):
    """A tile next to an enemy military unit (units stand on land only)."""
    me = owner + 1
    for d in range(8):
        nb = neighbors[tile, d]
        if nb >= 0 and land[nb] and occupant[nb] != 0 and occupant[nb] != me and military[nb] > 0:
            return True
    return False


@njit(cache=True)
def _unit_actions(out, n, kind, tile, owner, activity, neighbors, land, river, water_source,
                  irrigable, minable, roadable, width, height, gap, improvements, occupant,
                  military, city_owner_at, unit_military, unit_can_attack, unit_can_fortify,
                  unit_cities, unit_settlers):
    me = owner + 1
    is_military = unit_military[kind]
    contested = False
    for d in range(8):
        nb = neighbors[tile, d]
        if nb >= 0 and land[nb] and occupant[nb] != 0 and occupant[nb] != me:
            contested = True
            break
    if not contested and not is_military:
        for d in range(8):
            nb = neighbors[tile, d]
            if nb >= 0 and land[nb] and city_owner_at[nb] >= 0:
                contested = True
                break
    start = n
    if not contested:
        for d in range(8):
            nb = neighbors[tile, d]
            if nb >= 0 and land[nb]:
                out[n] = codes.MOVE0 + d
                n += 1
    else:
        enemy_seen = False
        can_attack = unit_can_attack[kind]
        for d in range(8):
            nb = neighbors[tile, d]
            if nb < 0 or not land[nb]:
                continue
            enemy = occupant[nb] != 0 and occupant[nb] != me
            if is_military:
                if enemy:
                    enemy_seen = True
                    if can_attack:
                        out[n] = codes.ATTACK0 + d
                        n += 1
                else:
                    out[n] = codes.MOVE0 + d
                    n += 1
            else:
                if enemy:
                    enemy_seen = True
                    continue
                if city_owner_at[nb] >= 0 and city_owner_at[nb] != owner:
                    continue
                out[n] = codes.MOVE0 + d
                n += 1
        if (enemy_seen and city_owner_at[tile] < 0
                and _enemy_zoc(tile, owner, neighbors, land, occupant, military)):
            kept = start
            for i in range(start, n):
                code = out[i]
                if code < codes.ATTACK0:  # a move: allowed into a city, onto our own units,
                    dst = neighbors[tile, code - codes.MOVE0]  # or out of every enemy zone
                    if not (city_owner_at[dst] >= 0 or occupant[dst] == me
                            or not _enemy_zoc(dst, owner, neighbors, land, occupant, military)):
                        continue
                out[kept] = code
                kept += 1
            n = kept
    if unit_can_fortify[kind] and activity != _FORTIFIED and activity != _FORTIFYING:
        out[n] = codes.FORTIFY
        n += 1
    no_city_here = city_owner_at[tile] < 0
    if unit_cities[kind] and land[tile]:
        x, y = tile % width, tile // width
        free = True
        for yy in range(max(0, y - gap), min(height, y + gap + 1)):
            for xx in range(max(0, x - gap), min(width, x + gap + 1)):
                if city_owner_at[yy * width + xx] >= 0:
                    free = False
        if free:
            out[n] = codes.BUILD_CITY
            n += 1
    if unit_settlers[kind]:
        imp = improvements[tile]
        if irrigable[tile] and not imp & _IRRIGATION and no_city_here:
            ok = water_source[tile]
            for d in range(0, 8, 2):  # the cardinal directions
                nb = neighbors[tile, d]
                if nb >= 0 and improvements[nb] & _IRRIGATION:
                    ok = True
            if ok:
                out[n] = codes.IRRIGATE
                n += 1
        if minable[tile] and not imp & _MINE and no_city_here:
            out[n] = codes.MINE
            n += 1
        if roadable[tile] and not imp & _ROAD and not river[tile] and no_city_here:
            out[n] = codes.BUILD_ROAD
            n += 1
    out[n] = codes.WAIT
    return n + 1


@njit(cache=True)
def player_actions(player, unit_owner, unit_kind, unit_tile, unit_activity, city_owner,
                   city_buildings, techs, neighbors, land, river, water_source, irrigable,
                   minable, roadable, width, height, gap, improvements, occupant, military,
                   city_owner_at, unit_military, unit_can_attack, unit_can_fortify, unit_cities,
                   unit_settlers, item_tech, n_units, tech_reqs, research0):
    """(codes, offsets, rows): agent a's actions are codes[offsets[a]:offsets[a + 1]]; rows[a]
    is -1 for the civilization, else the city's or unit's row (cities first, then units; a
    unit's row is its index plus the number of cities)."""
    n_cities = city_owner.shape[0]
    n_items = item_tech.shape[0]
    n_techs = techs.shape[1]
    size = n_techs + 1 + n_cities * n_items + unit_owner.shape[0] * 22
    out = np.empty(size, np.int64)
    offsets = np.empty(1 + n_cities + unit_owner.shape[0] + 1, np.int64)
    rows = np.empty(offsets.shape[0] - 1, np.int64)
    n = 0
    a = 0
    offsets[0] = 0
    # the civilization: research choices, or wait
    for t in range(n_techs):
        if techs[player, t]:
            continue
        ok = True
        for r in tech_reqs[t]:
            if r >= 0 and not techs[player, r]:
                ok = False
        if ok:
            out[n] = research0 + t
            n += 1
    if n == 0:
        out[n] = codes.WAIT
        n += 1
    rows[a] = -1
    a += 1
    offsets[a] = n
    for c in range(n_cities):
        if city_owner[c] != player:
            continue
        for i in range(n_items):
            tech = item_tech[i]
            if tech >= 0 and not techs[player, tech]:
                continue
            if i >= n_units and city_buildings[c, i - n_units]:
                continue
            out[n] = codes.BUILD0 + i
            n += 1
        rows[a] = c
        a += 1
        offsets[a] = n
    for u in range(unit_owner.shape[0]):
        if unit_owner[u] != player or _BUSY_LOW <= unit_activity[u] <= _BUSY_HIGH:
            continue
        n = _unit_actions(out, n, unit_kind[u], unit_tile[u], player, unit_activity[u],
                          neighbors, land, river, water_source, irrigable, minable, roadable,
                          width, height, gap, improvements, occupant, military, city_owner_at,
                          unit_military, unit_can_attack, unit_can_fortify, unit_cities,
                          unit_settlers)
        rows[a] = n_cities + u
        a += 1
        offsets[a] = n
    return out[:n], offsets[:a + 1], rows[:a]


def agents_with_actions(s, player: int) -> list[tuple[str, list]]:
    """`legal.agents_with_actions(s, player)` computed by the compiled kernel from `s`'s arrays
    (the differential tests' and the benchmark's entry point)."""
    arrays = state_arrays(s)
    return decode(s, arrays, player, *actions_of(s, arrays, player))


def actions_of(s, st, player: int):
    """The kernel's (codes, offsets, rows) for `player` in state arrays `st` of `s`."""
    m, r = map_arrays(s.map, s.tables), rule_arrays(s.game)
    return player_actions(player, st.unit_owner, st.unit_kind, st.unit_tile, st.unit_activity,
                          st.city_owner, st.city_buildings, st.techs, m.neighbors, m.land,
                          m.river, m.water_source, m.irrigable, m.minable, m.roadable, m.width,
                          m.height, m.min_dist_gap, st.improvements, st.occupant, st.military,
                          st.city_owner_at, r.unit_military, r.unit_can_attack,
                          r.unit_can_fortify, r.unit_cities, r.unit_settlers, r.item_tech,
                          r.n_units, r.tech_reqs, codes.research0(s.tables))  # fmt: skip


def decode(s, st, player: int, out, offsets, rows) -> list[tuple[str, list]]:
    """The kernel's codes as (agent id, [Action, ...]) pairs."""
    table = codes.action_table(s.tables)
    n_cities = st.city_id.shape[0]
    agents = []
    for a, row in enumerate(rows.tolist()):
        if row < 0:
            agent = f"civ:{player}"
        elif row < n_cities:
            agent = f"city:{int(st.city_id[row])}"
        else:
            agent = f"unit:{int(st.unit_id[row - n_cities])}"
        agents.append((agent, [table[c] for c in out[offsets[a]:offsets[a + 1]].tolist()]))
    return agents
