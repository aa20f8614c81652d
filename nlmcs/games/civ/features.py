"""Numbers about a state: the FreeCiv-style score, reward totals and the state vector.

The state vector is a list of named float features seen from one player's side (own and enemy
unit counts by type, cities, citizens, yields, techs, terrain under own units, improvements
worked, ...). The corpus miner compares these vectors with cosine similarity (Dobre & Lascarides
2015), so their order is stored with every recorded game. Each feature is a `(name, extractor)`
pair in one list (`extractors`), so names and values cannot drift apart; the extractors read a
`Summary` gathered in one pass over the state.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from nlmcs.games.civ.objects import City
from nlmcs.games.civ.tables import BUSY, FORTIFIED, FORTIFYING, IRRIGATION, MINE, ROAD, Tables


def score(s, player: int) -> float:
    """FreeCiv's civilization score, the parts this game has: one per citizen, two per tech,
    a tenth per unit built and a third per enemy unit killed; in the sacred-terrain-end variant,
    once the game is over, points per own city on the sacred terrain (`variants.end_points`)."""
    pl = s.players[player]
    citizens = sum(c.size for c in s.cities.values() if c.owner == player)
    total = citizens + 2 * pl.techs.bit_count() + pl.built / 10 + pl.killed / 3
    if s._over and s.game.sacred_end:
        from nlmcs.games.civ.variants import end_points

        total += end_points(s, player)
    return total


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


@dataclass
class Summary:
    """What one pass over the state gathers for `player` (the extractors' input)."""

    s: object  # the CivState
    player: int
    own_units: list[int]  # per unit kind
    enemy_units: list[int]
    on_terrain: list[int]  # own units per terrain
    unit_flags: dict[str, int]  # own units on a river, in cities, fortified, ...
    own: CitySums
    enemy: CitySums
    worked: dict[str, int]  # worked tiles with irrigation, mine, road, special, river, ocean
    threat: int  # enemy units within 3 tiles of own cities (counted per city)
    nearest: float  # nearest own unit to an enemy city, as a fraction of the map size

    @property
    def pl(self):
        return self.s.players[self.player]

    def others(self) -> list[int]:
        return [p for p in range(len(self.s.players)) if p != self.player]


UNIT_FLAGS = ("river", "in_cities", "fortified", "veteran", "wounded", "working", "near_enemy")
WORKED = ("irrigation", "mine", "road", "special", "river", "ocean")


class CitySums:
    """One side's cities and the totals the extractors read, added up in one pass (a vector
    per decision is most of what recording a game costs)."""

    __slots__ = ("cities", "citizens", "food", "shields", "trade", "unhappy", "growing",
                 "starving", "building_units", "buildings")

    def __init__(self, cities: list[City], T: Tables):
        self.cities = cities
        self.citizens = self.food = self.shields = self.trade = self.unhappy = 0
        self.growing = self.starving = self.building_units = 0
        self.buildings = dict.fromkeys((T.barracks, T.granary, T.walls), 0)
        for c in cities:
            self.citizens += c.size
            self.food += c.surplus_food
            self.shields += c.surplus_shield
            self.trade += c.trade
            self.unhappy += c.unhappy
            self.growing += c.surplus_food > 0
            self.starving += c.surplus_food < 0
            self.building_units += c.build < T.n_units
            for bit in self.buildings:
                self.buildings[bit] += c.buildings >> bit & 1

    def __len__(self) -> int:
        return len(self.cities)


def summarize(s, player: int) -> Summary:
    T, m = s.tables, s.map
    own_u, enemy_u = [0] * T.n_units, [0] * T.n_units
    on_terrain = [0] * len(T.terrain_names)
    hp = [u.hp for u in T.ruleset.units]
    w = m.width
    own_tiles, enemy_tiles = [], []
    terr, riv, city_at = m.terr, m.riv, s.city_at
    river = in_cities = fortified = veteran = wounded = working = near_enemy = 0
    for u in s.units.values():
        if u.owner == player:
            t = u.tile
            own_tiles.append(t)
            own_u[u.kind] += 1
            on_terrain[terr[t]] += 1
            river += riv[t]
            in_cities += t in city_at
            fortified += u.activity in (FORTIFYING, FORTIFIED)  # an order counts at once
            veteran += u.vet > 0
            wounded += u.hp < hp[u.kind]
            working += u.activity in BUSY
        else:
            enemy_u[u.kind] += 1
            enemy_tiles.append(u.tile)
    if enemy_tiles:
        enemy_set, neighbors = set(enemy_tiles), m.neighbors
        near_enemy = sum(1 for t in own_tiles if not enemy_set.isdisjoint(neighbors[t]))
    flags = dict(zip(UNIT_FLAGS, (river, in_cities, fortified, veteran, wounded, working,
                                  near_enemy), strict=True))
    own = [c for c in s.cities.values() if c.owner == player]
    enemy = [c for c in s.cities.values() if c.owner != player]
    irrigated = mined = roads = special = rivers = ocean = 0
    imps, res, sea = s.improvements, m.res, m.ocean
    for c in own:
        for t in c.worked[1:]:
            imp = imps[t]
            irrigated += bool(imp & IRRIGATION)
            mined += bool(imp & MINE)
            roads += bool(imp & ROAD)
            special += res[t] >= 0
            rivers += riv[t]
            ocean += sea[t]
    worked = dict(zip(WORKED, (irrigated, mined, roads, special, rivers, ocean), strict=True))
    threat = 0
    if enemy_tiles:
        apart = m.apart
        enemy_xy = [(t % w, t // w) for t in enemy_tiles]
        for c in own:
            cx, cy = c.tile % w, c.tile // w
            ax = apart[cx]
            threat += sum(1 for x, y in enemy_xy if ax[x] <= 3 and -3 <= y - cy <= 3)
    nearest = 0.0
    if enemy and own_tiles:
        apart = m.apart
        city_xy = [(apart[c.tile % w], c.tile // w) for c in enemy]
        nearest = min(max(ax[a % w], abs(a // w - y))
                      for a in set(own_tiles) for ax, y in city_xy) / max(w, m.height)
    return Summary(s, player, own_u, enemy_u, on_terrain, flags, CitySums(own, T),
                   CitySums(enemy, T), worked, threat, nearest)


Extractor = Callable[[Summary], float]


def extractors(T: Tables) -> list[tuple[str, Extractor]]:
    """Every state feature as (name, extractor), in the stored order."""
    out: list[tuple[str, Extractor]] = [
        ("turn_fraction", lambda x: x.s.turn / max(1, x.s.max_turns))]
    for k, u in enumerate(T.unit_names):
        key = u.replace(" ", "_")
        out += [(f"own_{key}", lambda x, k=k: x.own_units[k]),
                (f"enemy_{key}", lambda x, k=k: x.enemy_units[k])]
    out += [
        ("own_cities", lambda x: len(x.own)),
        ("enemy_cities", lambda x: len(x.enemy)),
        ("own_citizens", lambda x: x.own.citizens),
        ("enemy_citizens", lambda x: x.enemy.citizens),
        ("own_food", lambda x: x.own.food),
        ("own_shields", lambda x: x.own.shields),
        ("own_trade", lambda x: x.own.trade),
        ("enemy_food", lambda x: x.enemy.food),
        ("enemy_shields", lambda x: x.enemy.shields),
        ("enemy_trade", lambda x: x.enemy.trade),
        ("own_techs", lambda x: x.pl.techs.bit_count()),
        ("enemy_techs", lambda x: max((x.s.players[p].techs.bit_count() for p in x.others()),
                                      default=0)),
        ("own_gold", lambda x: x.pl.gold),
        ("enemy_gold", lambda x: max((x.s.players[p].gold for p in x.others()), default=0)),
        ("own_bulbs", lambda x: x.pl.bulbs),
        ("own_score", lambda x: score(x.s, x.player)),
        ("enemy_score", lambda x: max((score(x.s, p) for p in x.others()), default=0.0)),
    ]  # fmt: skip
    out += [(f"own_units_on_{t}", lambda x, i=i: x.on_terrain[i])
            for i, t in enumerate(T.terrain_names)]
    out += [(f"own_units_{'on_' if f == 'river' else ''}{f}", lambda x, f=f: x.unit_flags[f])
            for f in UNIT_FLAGS]
    out += [(f"worked_{f}", lambda x, f=f: x.worked[f]) for f in WORKED]
    out += [
        ("own_barracks", lambda x: x.own.buildings[T.barracks]),
        ("own_granary", lambda x: x.own.buildings[T.granary]),
        ("own_walls", lambda x: x.own.buildings[T.walls]),
        ("enemy_walls", lambda x: x.enemy.buildings[T.walls]),
        ("own_unhappy", lambda x: x.own.unhappy),
        ("own_growing_cities", lambda x: x.own.growing),
        ("own_starving_cities", lambda x: x.own.starving),
        ("own_building_units", lambda x: x.own.building_units),
        ("own_building_improvements", lambda x: len(x.own) - x.own.building_units),
        ("enemy_units_near_own_cities", lambda x: x.threat),
        ("nearest_enemy_city_distance", lambda x: x.nearest),
    ]  # fmt: skip
    return out


def feature_names(T: Tables) -> list[str]:
    return [name for name, _ in extractors(T)]


def state_vector(s, player: int, features: list[tuple[str, Extractor]]) -> np.ndarray:
    """The features of `player`'s side of `s`, as float32 in the order of `features`."""
    x = summarize(s, player)
    return np.fromiter((f(x) for _, f in features), dtype=np.float32, count=len(features))
