"""A civ state as flat numpy arrays, the form the compiled kernels read.

`MapArrays` holds what never changes on a map (neighbours, sea, rivers, what each tile's terrain
allows), built once per map; `RuleArrays` the ruleset's per-unit, per-item and per-tech columns,
once per game; `StateArrays` what changes: units and cities as columns in the reference
engine's dict order (so agents come out in the order `CivState.agents` lists them), tile
layers (improvements, whose units stand where, military units per tile, cities per tile) and
per-player techs, as booleans so a ruleset may have any number of techs.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from nlmcs.games.civ.tables import Tables

_MAPS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class MapArrays:
    width: int
    height: int
    neighbors: np.ndarray  # (n, 8) int32, N clockwise, -1 off the map
    land: np.ndarray  # (n,) bool
    river: np.ndarray  # (n,) bool
    water_source: np.ndarray  # (n,) bool: irrigation needs no irrigated neighbour here
    irrigable: np.ndarray  # (n,) bool: the terrain gives food when irrigated
    minable: np.ndarray  # (n,) bool
    roadable: np.ndarray  # (n,) bool
    min_dist_gap: int  # a city needs no other city within this Chebyshev distance


def map_arrays(m, tables: Tables) -> MapArrays:
    """The arrays of map `m` (a `MapData`), built on first use and kept while the map lives."""
    hit = _MAPS.get(m)
    if hit is None:
        terrains = tables.ruleset.terrains
        terr = np.asarray(m.terr, dtype=np.int64)
        per_terrain = lambda f: np.array([f(t) for t in terrains], dtype=bool)[terr]  # noqa: E731
        hit = _MAPS[m] = MapArrays(
            width=m.width, height=m.height,
            neighbors=np.asarray(m.neighbors, dtype=np.int32).reshape(m.n, 8),
            land=~np.asarray(m.ocean, dtype=bool),
            river=np.asarray(m.riv, dtype=bool),
            water_source=np.asarray(m.water_source, dtype=bool),
            irrigable=per_terrain(lambda t: t.irrigation_food != 0),
            minable=per_terrain(lambda t: t.mining_shield > 0),
            roadable=per_terrain(lambda t: t.road_time > 0),
            min_dist_gap=tables.ruleset.params["citymindist"] - 1,
        )  # fmt: skip
    return hit


@dataclass(frozen=True)
class RuleArrays:
    unit_military: np.ndarray  # (unit kinds,) bool
    unit_can_attack: np.ndarray
    unit_can_fortify: np.ndarray
    unit_cities: np.ndarray  # founds cities
    unit_settlers: np.ndarray  # irrigates, mines, builds roads
    item_tech: np.ndarray  # (items,) int64: tech needed, -1 for none
    n_units: int
    tech_reqs: np.ndarray  # (techs, most reqs) int64, -1 padded


def rule_arrays(game) -> RuleArrays:
    """The ruleset's columns of `game` (a `CivGame`), built once per game."""
    hit = getattr(game, "_rule_arrays", None)
    if hit is None:
        tables = game.tables
        width = max((len(r) for r in tables.tech_reqs), default=0)
        reqs = np.full((len(tables.tech_names), max(width, 1)), -1, dtype=np.int64)
        for t, r in enumerate(tables.tech_reqs):
            reqs[t, :len(r)] = r
        hit = game._rule_arrays = RuleArrays(
            unit_military=np.asarray(tables.unit_military, dtype=bool),
            unit_can_attack=np.asarray(tables.unit_can_attack, dtype=bool),
            unit_can_fortify=np.asarray(tables.unit_can_fortify, dtype=bool),
            unit_cities=np.asarray(tables.unit_cities, dtype=bool),
            unit_settlers=np.asarray(tables.unit_settlers, dtype=bool),
            item_tech=np.asarray(tables.item_tech, dtype=np.int64),
            n_units=tables.n_units, tech_reqs=reqs,
        )  # fmt: skip
    return hit


@dataclass
class StateArrays:
    """What changes in a game, as arrays. Unit and city rows follow the reference's dict order."""

    unit_id: np.ndarray  # (units,) int64
    unit_owner: np.ndarray
    unit_kind: np.ndarray
    unit_tile: np.ndarray
    unit_activity: np.ndarray
    city_id: np.ndarray  # (cities,) int64
    city_owner: np.ndarray
    city_tile: np.ndarray
    city_buildings: np.ndarray  # (cities, buildings) bool
    improvements: np.ndarray  # (n,) uint8 bits, tables.IRRIGATION | MINE | ROAD
    occupant: np.ndarray  # (n,) uint8: owner + 1 of the units on the tile, 0 where none
    military: np.ndarray  # (n,) int32: military units on the tile
    city_owner_at: np.ndarray  # (n,) int64: owner of the city on the tile, -1 where none
    techs: np.ndarray  # (players, techs) bool


def state_arrays(s) -> StateArrays:
    """The arrays of a reference `CivState` (a copy: changing them does not change `s`)."""
    T = s.tables
    units, cities = list(s.units.values()), list(s.cities.values())
    mil = T.unit_military
    military = np.zeros(s.map.n, dtype=np.int32)
    for u in units:
        if mil[u.kind]:
            military[u.tile] += 1
    city_owner_at = np.full(s.map.n, -1, dtype=np.int64)
    for c in cities:
        city_owner_at[c.tile] = c.owner
    n_buildings, n_techs = len(T.building_names), len(T.tech_names)
    col = lambda rows, f: np.fromiter((f(r) for r in rows), np.int64, len(rows))  # noqa: E731
    return StateArrays(
        unit_id=col(units, lambda u: u.id), unit_owner=col(units, lambda u: u.owner),
        unit_kind=col(units, lambda u: u.kind), unit_tile=col(units, lambda u: u.tile),
        unit_activity=col(units, lambda u: u.activity),
        city_id=col(cities, lambda c: c.id), city_owner=col(cities, lambda c: c.owner),
        city_tile=col(cities, lambda c: c.tile),
        city_buildings=np.array([[c.buildings >> b & 1 for b in range(n_buildings)]
                                 for c in cities], dtype=bool).reshape(len(cities), n_buildings),
        improvements=np.frombuffer(bytes(s.improvements), dtype=np.uint8).copy(),
        occupant=np.frombuffer(bytes(s.occupant), dtype=np.uint8).copy(),
        military=military, city_owner_at=city_owner_at,
        techs=np.array([[p.techs >> t & 1 for t in range(n_techs)] for p in s.players],
                       dtype=bool).reshape(len(s.players), n_techs),
    )  # fmt: skip
