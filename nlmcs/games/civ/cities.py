"""The end of a turn: unit work and healing, the city governor, growth, production and research.

Numbers follow FreeCiv: a city of size n needs `granary_food_ini + granary_food_inc * (n - 1)` food
to grow, each citizen eats `food_cost`, a granary keeps part of the box, the city centre gets its
terrain's irrigation bonus and a road for free (none on a river without Bridge Building),
despotism takes one from any tile output above two and wastes trade with distance from the
capital, and each city supports a few units for free before they cost a shield each.
"""

from __future__ import annotations

import numpy as np

from nlmcs.games.civ.tables import (
    BUSY,
    FORTIFIED,
    FORTIFYING,
    IDLE,
    IRRIGATING,
    IRRIGATION,
    MINE,
    MINING,
    ROAD,
    ROADING,
)

WORK = {IRRIGATING: IRRIGATION, MINING: MINE, ROADING: ROAD}


def tile_output(s, tile: int, center: bool = False, imp: int | None = None) -> tuple[int, int, int]:
    """(food, shield, trade) of a worked tile; memoised on the shared map. `imp` overrides the
    tile's improvements (0 gives the bare terrain's output)."""
    if imp is None:
        imp = s.improvements[tile]
    key = tile * 16 + imp * 2 + center
    cache = s.map.tile_cache
    out = cache.get(key)
    if out is not None:
        return out
    m, p = s.map, s.params
    ter = s.tables.ruleset.terrains[m.terr[tile]]
    f, sh, tr = ter.food, ter.shield, ter.trade
    r = m.res[tile]
    if r >= 0:
        res = s.tables.ruleset.resources[r]
        f, sh, tr = f + res.food, sh + res.shield, tr + res.trade
    if m.riv[tile]:
        tr += p["river_trade"]
    if imp & IRRIGATION or (center and not imp & MINE):
        f += ter.irrigation_food
    if imp & MINE:
        sh += ter.mining_shield
    if imp & ROAD or (center and not m.riv[tile]):  # no free road on a river (no bridges)
        tr += ter.road_trade
    cut = p["tile_penalty_above"]
    if cut:
        f, sh, tr = (v - 1 if v > cut else v for v in (f, sh, tr))
    if center:
        f = max(f, p["min_city_center_food"])
        sh = max(sh, p["min_city_center_shield"])
        tr = max(tr, p["min_city_center_trade"])
    out = (f, sh, tr)
    cache[key] = out
    return out


def granary_size(s, size: int) -> int:
    p = s.params
    return p["granary_food_ini"] + p["granary_food_inc"] * (size - 1)


def governor(s, c) -> None:
    """Pick the tiles the city works: the centre, then free tiles one by one, by food while the
    city would not grow, else by a weighted sum (food 4, shields 3, trade 2). Unhappy citizens
    (beyond the content base, less martial law) become entertainers."""
    p = s.params
    T = s.tables
    military = sum(1 for uid in s.tile_units.get(c.tile, ()) if T.unit_military[s.units[uid].kind])
    c.unhappy = max(0, c.size - p["content_base"] - min(p["martial_law_max"], military))
    workers = c.size - c.unhappy
    taken = set()
    for other in s.cities.values():
        if other.id != c.id:
            taken.update(other.worked)
    f, sh, tr = tile_output(s, c.tile, True)
    cand = []
    tu, units = s.tile_units, s.units
    for t in s.map.radius[c.tile][1:]:
        if t in taken or t in s.city_at:
            continue
        stack = tu.get(t)
        if stack and units[stack[0]].owner != c.owner:
            continue
        o = tile_output(s, t)
        cand.append((o[0] * 4 + o[1] * 3 + o[2] * 2, o[0], -t, t, o))
    cand.sort(reverse=True)
    by_food = sorted(cand, key=lambda x: (x[1], x[0], x[2]), reverse=True)
    worked = [c.tile]
    used: set[int] = set()
    eat = c.size * p["food_cost"]
    for _ in range(min(workers, len(cand))):
        pool = by_food if f - eat < 2 else cand
        pick = next(x for x in pool if x[3] not in used)
        t, o = pick[3], pick[4]
        used.add(t)
        worked.append(t)
        f, sh, tr = f + o[0], sh + o[1], tr + o[2]
    c.worked = tuple(worked)
    c.surplus_food = f - c.size * p["food_cost"]
    c.surplus_shield = sh
    c.trade = tr - tr * corruption_pct(s, c) // 100
    c.dirty = False


def corruption_pct(s, c) -> int:
    """FreeCiv trade waste under despotism: a base share plus a share per tile of distance from the
    capital (in 1/100 %), cut by the palace in the capital itself; capped at 100."""
    p = s.params
    w = s.map.width
    capital = next((x.tile for x in s.cities.values() if x.owner == c.owner and x.capital), None)
    if capital is None:
        dist = max(w, s.map.height)
    else:
        dist = max(abs(capital % w - c.tile % w), abs(capital // w - c.tile // w))
    pct = p["corruption_pct"] + p["corruption_per_distance"] * dist // 100
    if c.capital:
        pct -= pct * p["capital_corruption_cut_pct"] // 100
    return min(100, pct)


def end_turn(s, rng: np.random.Generator) -> None:
    _units_end_turn(s)
    T = s.tables
    p = s.params
    units_rules = T.ruleset.units
    # Upkeep per home city: food for settlers, a shield per unit beyond the free ones.
    food_upkeep: dict[int, int] = {}
    shield_units: dict[int, int] = {}
    for u in s.units.values():
        if u.home >= 0:
            ut = units_rules[u.kind]
            if ut.upkeep_food:
                food_upkeep[u.home] = food_upkeep.get(u.home, 0) + ut.upkeep_food
            if ut.upkeep_shield:
                shield_units[u.home] = shield_units.get(u.home, 0) + ut.upkeep_shield
    science_pct = p["science_pct"]
    building_upkeep = [b.upkeep for b in T.ruleset.buildings]
    for c in list(s.cities.values()):
        if c.id not in s.cities:
            continue
        if c.dirty or (s.turn + c.id) % 5 == 0:  # also refresh now and then (martial law, enemies)
            governor(s, c)
        player = s.players[c.owner]
        science = c.trade * science_pct // 100
        player.bulbs += science
        upkeep = sum(v for i, v in enumerate(building_upkeep) if c.buildings >> i & 1)
        player.gold = max(0, player.gold + c.trade - science - upkeep)
        _grow(s, c, c.surplus_food - food_upkeep.get(c.id, 0))
        shields = c.surplus_shield - max(0, shield_units.get(c.id, 0) - p["free_upkeep"])
        _produce(s, c, max(0, shields))
    for pl in s.players:
        t = pl.researching
        if t >= 0 and pl.bulbs >= T.tech_cost[t]:
            pl.bulbs -= T.tech_cost[t]
            pl.techs |= 1 << t
            pl.researching = -1


def _units_end_turn(s) -> None:
    p = s.params
    T = s.tables
    frac = p["hp_regen_pct"]
    rules = T.ruleset.units
    nbrs, tu, units = s.map.neighbors, s.tile_units, s.units
    for u in units.values():
        act = u.activity
        if act == FORTIFYING:
            u.activity = FORTIFIED
        elif act in BUSY:
            if any(nb >= 0 and (st := tu.get(nb)) and units[st[0]].owner != u.owner
                   for nb in nbrs[u.tile]):
                u.activity = IDLE  # work interrupted by an enemy next to the unit
            else:
                u.progress += 1
                ter = T.ruleset.terrains[s.map.terr[u.tile]]
                need = {IRRIGATING: ter.irrigation_time, MINING: ter.mining_time,
                        ROADING: ter.road_time}[act]
                if u.progress >= need:
                    _finish_work(s, u.tile, WORK[act])
                    u.activity = IDLE
                    u.progress = 0
        hp = rules[u.kind].hp
        if u.hp < hp:
            cid = s.city_at.get(u.tile)
            if cid is not None and s.cities[cid].owner == u.owner:
                city = s.cities[cid]
                gain = hp if city.buildings >> T.barracks & 1 else max(1, hp // 3)
            else:
                gain = max(1, hp * frac // 100)
            u.hp = min(hp, u.hp + gain)


def _finish_work(s, tile: int, bit: int) -> None:
    imp = s.improvements[tile]
    if bit == IRRIGATION:
        imp &= ~MINE
    elif bit == MINE:
        imp &= ~IRRIGATION
    s.improvements[tile] = imp | bit
    for cid in (s.city_at.get(t) for t in s.map.radius[tile]):
        if cid is not None:
            s.cities[cid].dirty = True


def _grow(s, c, surplus: int) -> None:
    p = s.params
    granary = c.buildings >> s.tables.granary & 1
    keep = p["granary_keep_pct"] if granary else 0
    c.food += surplus
    box = granary_size(s, c.size)
    if c.food >= box:
        if c.size < p["max_city_size"]:
            c.size += 1
            # FreeCiv keeps only what a granary saves: min(stock, new box x savings %).
            c.food = min(c.food, granary_size(s, c.size) * keep // 100)
            c.dirty = True
        else:
            c.food = box
    elif c.food < 0:
        # Famine: a settler living off the city starves first, else the city shrinks.
        for u in s.units.values():
            if u.home == c.id and s.tables.ruleset.units[u.kind].upkeep_food:
                s.remove_unit(u)
                s.players[u.owner].lost += 1
                c.food = 0
                return
        if c.size > 1:
            c.size -= 1
            c.dirty = True
        c.food = granary_size(s, c.size) * keep // 100 if c.size > 1 else 0


def _produce(s, c, shields: int) -> None:
    T = s.tables
    c.shields += shields
    item = c.build
    cost = T.item_costs[item]
    c.fresh = False
    if c.shields < cost:
        return
    if item < T.n_units:
        ut = T.ruleset.units[item]
        if ut.pop_cost and c.size <= ut.pop_cost:
            return  # waits until the city can spare the citizens
        if s.owner_at(c.tile) not in (-1, c.owner):
            return
        c.shields -= cost
        vet = 0
        if T.unit_military[item] and c.buildings >> T.barracks & 1:
            vet = s.params["barracks_veteran"]
        s.add_unit(c.owner, item, c.tile, vet=vet, home=c.id)
        s.players[c.owner].built += 1
        if ut.pop_cost:
            c.size -= ut.pop_cost
            c.dirty = True
    else:
        bit = item - T.n_units
        c.shields -= cost
        c.buildings |= 1 << bit
        c.build = T.unit_names.index("warriors") if "warriors" in T.unit_names else 0
    c.fresh = True
