"""Numbers about a state: the FreeCiv-style score, reward totals and the state vector.

The state vector is a fixed, named list of float features seen from one player's side (own and
enemy unit counts by type, cities, citizens, yields, techs, terrain under own units, improvements
worked, ...). The corpus miner compares these vectors with cosine similarity (Dobre & Lascarides
2015), so the order is frozen in `feature_names` and stored with every recorded game.
"""

from __future__ import annotations

import numpy as np

from nlmcs.games.civ.tables import BUSY, FORTIFIED, FORTIFYING, IRRIGATION, MINE, ROAD, Tables


def feature_names(T: Tables) -> list[str]:
    names = ["turn_fraction"]
    for u in T.unit_names:
        key = u.replace(" ", "_")
        names += [f"own_{key}", f"enemy_{key}"]
    names += ["own_cities", "enemy_cities", "own_citizens", "enemy_citizens",
              "own_food", "own_shields", "own_trade", "enemy_food", "enemy_shields", "enemy_trade",
              "own_techs", "enemy_techs", "own_gold", "enemy_gold", "own_bulbs",
              "own_score", "enemy_score"]
    names += [f"own_units_on_{t}" for t in T.terrain_names]
    names += ["own_units_on_river", "own_units_in_cities", "own_units_fortified",
              "own_units_veteran", "own_units_wounded", "own_units_working",
              "own_units_near_enemy", "worked_irrigation", "worked_mine", "worked_road",
              "worked_special", "worked_river", "worked_ocean", "own_barracks", "own_granary",
              "own_walls", "enemy_walls", "own_unhappy", "own_growing_cities",
              "own_starving_cities", "own_building_units", "own_building_improvements",
              "enemy_units_near_own_cities", "nearest_enemy_city_distance"]
    return names


def score(s, player: int) -> float:
    """FreeCiv's civilization score, the parts this game has: one per citizen, two per tech,
    a tenth per unit built and a third per enemy unit killed."""
    pl = s.players[player]
    citizens = sum(c.size for c in s.cities.values() if c.owner == player)
    return citizens + 2 * pl.techs.bit_count() + pl.built / 10 + pl.killed / 3


def stats(s, player: int) -> dict[str, float]:
    pl = s.players[player]
    mine = [c for c in s.cities.values() if c.owner == player]
    return {
        "score": score(s, player),
        "units": float(sum(1 for u in s.units.values() if u.owner == player)),
        "cities": float(len(mine)),
        "techs": float(pl.techs.bit_count()),
        "food": float(sum(c.surplus_food for c in mine)),
        "shields": float(sum(c.surplus_shield for c in mine)),
        "trade": float(sum(c.trade for c in mine)),
        "gold": float(pl.gold),
    }


def state_vector(s, player: int) -> np.ndarray:
    T = s.tables
    m = s.map
    nu = T.n_units
    nt = len(T.terrain_names)
    own_u = [0] * nu
    enemy_u = [0] * nu
    on_terrain = [0] * nt
    river = in_city = fortified = veteran = wounded = working = near_enemy = 0
    rules = T.ruleset.units
    w = m.width
    enemy_tiles = []
    for u in s.units.values():
        if u.owner == player:
            own_u[u.kind] += 1
            on_terrain[m.terr[u.tile]] += 1
            river += m.riv[u.tile]
            in_city += u.tile in s.city_at
            fortified += u.activity in (FORTIFYING, FORTIFIED)  # a fortify order counts at once
            veteran += u.vet > 0
            wounded += u.hp < rules[u.kind].hp
            working += u.activity in BUSY
        else:
            enemy_u[u.kind] += 1
            enemy_tiles.append(u.tile)
    enemy_set = set(enemy_tiles)
    if enemy_set:
        for u in s.units.values():
            if u.owner == player and any(nb in enemy_set for nb in m.neighbors[u.tile]):
                near_enemy += 1
    own = [c for c in s.cities.values() if c.owner == player]
    enemy = [c for c in s.cities.values() if c.owner != player]
    worked = [0] * 6
    for c in own:
        for t in c.worked[1:]:
            imp = s.improvements[t]
            worked[0] += bool(imp & IRRIGATION)
            worked[1] += bool(imp & MINE)
            worked[2] += bool(imp & ROAD)
            worked[3] += m.res[t] >= 0
            worked[4] += m.riv[t]
            worked[5] += m.ocean[t]
    threat = 0
    for c in own:
        cx, cy = c.tile % w, c.tile // w
        threat += sum(1 for t in enemy_tiles if max(abs(t % w - cx), abs(t // w - cy)) <= 3)
    nearest = 0.0
    if enemy:
        own_tiles = [u.tile for u in s.units.values() if u.owner == player]
        if own_tiles:
            nearest = min(max(abs(a % w - c.tile % w), abs(a // w - c.tile // w))
                          for a in own_tiles for c in enemy) / max(w, m.height)
    pl = s.players[player]
    others = [p for p in range(len(s.players)) if p != player]
    enemy_score = max((score(s, p) for p in others), default=0.0)
    enemy_techs = max((s.players[p].techs.bit_count() for p in others), default=0)
    enemy_gold = max((s.players[p].gold for p in others), default=0)

    def bsum(cities, bit):
        return sum(c.buildings >> bit & 1 for c in cities)

    vec = [s.turn / max(1, s.max_turns)]
    for k in range(nu):
        vec += [own_u[k], enemy_u[k]]
    vec += [len(own), len(enemy), sum(c.size for c in own), sum(c.size for c in enemy),
            sum(c.surplus_food for c in own), sum(c.surplus_shield for c in own),
            sum(c.trade for c in own), sum(c.surplus_food for c in enemy),
            sum(c.surplus_shield for c in enemy), sum(c.trade for c in enemy),
            pl.techs.bit_count(), enemy_techs, pl.gold, enemy_gold, pl.bulbs,
            score(s, player), enemy_score]
    vec += on_terrain
    vec += [river, in_city, fortified, veteran, wounded, working, near_enemy, *worked,
            bsum(own, T.barracks), bsum(own, T.granary), bsum(own, T.walls), bsum(enemy, T.walls),
            sum(c.unhappy for c in own), sum(1 for c in own if c.surplus_food > 0),
            sum(1 for c in own if c.surplus_food < 0), sum(1 for c in own if c.build < nu),
            sum(1 for c in own if c.build >= nu), threat, nearest]
    return np.asarray(vec, dtype=np.float32)
