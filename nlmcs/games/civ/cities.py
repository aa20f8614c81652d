"""The end of a turn: unit work and healing, the city governor, growth, production and research.

Numbers follow FreeCiv: a city of size n needs `granary_food_ini + granary_food_inc * (n - 1)` food
to grow, each citizen eats `food_cost`, a granary keeps part of the box, the city centre gets its
terrain's irrigation bonus and a road for free (none on a river without Bridge Building),
despotism takes one from any tile output above two and wastes trade with distance from the
capital, and each city supports a few units for free before they cost a shield each.
"""

from __future__ import annotations

from operator import itemgetter

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


def work_ranks(s, tile: int) -> tuple[tuple, tuple]:
    """A worked tile's two sort keys for the governor, `(score, food, -tile, tile, output)` and
    `(food, score, -tile, tile, output)`. `-tile` breaks ties, so either orders tiles totally."""
    o = tile_output(s, tile, False, s.improvements[tile])
    score = o[0] * 4 + o[1] * 3 + o[2] * 2
    return (score, o[0], -tile, tile, o), (o[0], score, -tile, tile, o)


def ranked_tiles(s, centre: int) -> tuple[tuple, tuple]:
    """The tiles around a city at `centre` (not the centre), best first by score and by food
    (`work_ranks`); memoised on the shared map by the improvements in the city radius."""
    radius = s.map.radius[centre]
    key = (centre, itemgetter(*radius)(s.improvements))
    cache = s.map.rank_cache
    hit = cache.get(key)
    if hit is None:
        if len(cache) > 10_000:
            cache.clear()
        ranks = [work_ranks(s, t) for t in radius[1:]]
        hit = cache[key] = (tuple(sorted((r[0] for r in ranks), reverse=True)),
                            tuple(sorted((r[1] for r in ranks), reverse=True)))
    return hit


def governor(s, c, capitals: dict[int, int] | None = None) -> None:
    """Pick the tiles the city works: the centre, then free tiles one by one, by food while the
    city would not grow, else by a weighted sum (food 4, shields 3, trade 2). Unhappy citizens
    (beyond the content base, less martial law) become entertainers. `capitals`: `capital_tiles`,
    when the caller has it."""
    p = s.params
    units, mil = s.units, s.tables.unit_military
    military = sum(1 for uid in s.tile_units.get(c.tile, ()) if mil[units[uid].kind])
    c.unhappy = max(0, c.size - p["content_base"] - min(p["martial_law_max"], military))
    workers = c.size - c.unhappy
    # Not free: city centres, tiles another city works, tiles picked here, and (tested below)
    # tiles with enemy units on them.
    taken = set(s.city_at)
    for other in s.cities.values():
        if other is not c:
            taken.update(other.worked)
    f, sh, tr = tile_output(s, c.tile, True)
    by_score, by_food = ranked_tiles(s, c.tile)
    occupant, me = s.occupant, c.owner + 1
    worked = [c.tile]
    eat = c.size * p["food_cost"]
    for _ in range(workers):
        pick = None
        for rank in by_food if f - eat < 2 else by_score:
            t = rank[3]
            if t not in taken and (not occupant[t] or occupant[t] == me):
                pick = rank
                break
        if pick is None:
            break  # no free tile left
        taken.add(t)
        worked.append(t)
        o = pick[4]
        f, sh, tr = f + o[0], sh + o[1], tr + o[2]
    c.worked = tuple(worked)
    c.surplus_food = f - c.size * p["food_cost"]
    c.surplus_shield = sh
    if capitals is None:
        capitals = capital_tiles(s)
    c.trade = tr - tr * corruption_pct(s, c, capitals.get(c.owner)) // 100
    c.dirty = False


def capital_tiles(s) -> dict[int, int]:
    """Each player's capital tile (the first capital city, should a loaded state hold two)."""
    out: dict[int, int] = {}
    for x in s.cities.values():
        if x.capital and x.owner not in out:
            out[x.owner] = x.tile
    return out


def corruption_pct(s, c, capital: int | None) -> int:
    """FreeCiv trade waste under despotism: a base share plus a share per tile of distance from the
    capital (in 1/100 %), cut by the palace in the capital itself; capped at 100."""
    p = s.params
    dist = max(s.map.width, s.map.height) if capital is None else s.map.dist(capital, c.tile)
    pct = p["corruption_pct"] + p["corruption_per_distance"] * dist // 100
    if c.capital:
        pct -= pct * p["capital_corruption_cut_pct"] // 100
    return min(100, pct)


def end_turn(s, rng: np.random.Generator) -> None:
    _units_end_turn(s)
    T = s.tables
    p = s.params
    # Upkeep per home city: food for settlers, a shield per unit beyond the free ones.
    food_upkeep: dict[int, int] = {}
    shield_units: dict[int, int] = {}
    up_food, up_shield = T.unit_upkeep_food, T.unit_upkeep_shield
    for u in s.units.values():
        home = u.home
        if home >= 0:
            k = u.kind
            if up_food[k]:
                food_upkeep[home] = food_upkeep.get(home, 0) + up_food[k]
            if up_shield[k]:
                shield_units[home] = shield_units.get(home, 0) + up_shield[k]
    science_pct = p["science_pct"]
    free_upkeep = p["free_upkeep"]
    cities, players, turn = s.cities, s.players, s.turn
    capitals = None  # owner -> capital tile; no city changes hands or status in here
    for c in list(cities.values()):
        if c.id not in cities:
            continue
        if c.dirty or (turn + c.id) % 5 == 0:  # also refresh now and then (martial law, enemies)
            if capitals is None:
                capitals = capital_tiles(s)
            governor(s, c, capitals)
        player = players[c.owner]
        science = c.trade * science_pct // 100
        player.bulbs += science
        upkeep = building_upkeep(s, c.buildings)
        player.gold = max(0, player.gold + c.trade - science - upkeep)
        _grow(s, c, c.surplus_food - food_upkeep.get(c.id, 0))
        shields = c.surplus_shield - max(0, shield_units.get(c.id, 0) - free_upkeep)
        _produce(s, c, max(0, shields))
    for pl in players:
        t = pl.researching
        if t >= 0 and pl.bulbs >= T.tech_cost[t]:
            pl.bulbs -= T.tech_cost[t]
            pl.techs |= 1 << t
            pl.researching = -1


def building_upkeep(s, buildings: int) -> int:
    """Gold per turn for a city's buildings bitmask; memoised on the game (few masks occur)."""
    cache = s.game.options_cache
    key = ("upkeep", buildings)
    hit = cache.get(key)
    if hit is None:
        hit = cache[key] = sum(b.upkeep for i, b in enumerate(s.tables.ruleset.buildings)
                               if buildings >> i & 1)
    return hit


def _units_end_turn(s) -> None:
    p = s.params
    T = s.tables
    frac = p["hp_regen_pct"]
    max_hp = T.unit_hp
    adjacent, occupant = s.map.adjacent, s.occupant
    for u in s.units.values():
        act = u.activity
        if act == FORTIFYING:
            u.activity = FORTIFIED
        elif act in BUSY:
            me = u.owner + 1
            if any(occupant[nb] and occupant[nb] != me for nb in adjacent[u.tile]):
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
        hp = max_hp[u.kind]
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
    c.food += surplus
    box = granary_size(s, c.size)
    if 0 <= c.food < box:
        return
    keep = p["granary_keep_pct"] if c.buildings >> s.tables.granary & 1 else 0
    if c.food >= box:
        if c.size < p["max_city_size"]:
            c.size += 1
            # FreeCiv keeps only what a granary saves: min(stock, new box x savings %).
            c.food = min(c.food, granary_size(s, c.size) * keep // 100)
            c.dirty = True
        else:
            c.food = box
    else:
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
        c.build = T.default_build
    c.fresh = True
