"""Flat lookup tables compiled once from a `Ruleset`, for the hot path.

The engine indexes terrains, units, buildings and techs by small integers; these tables turn the
ruleset's dataclasses into tuples so a roll-out never does a name lookup.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from nlmcs.games.base import Action
from nlmcs.games.civ.ruleset import Ruleset

IRRIGATION, MINE, ROAD = 1, 2, 4
IMPROVEMENT_BITS = (("irrigation", IRRIGATION), ("mine", MINE), ("road", ROAD))

# Unit activities. Busy units (IRRIGATING..ROADING) keep working until done or interrupted.
IDLE, FORTIFYING, FORTIFIED, IRRIGATING, MINING, ROADING = range(6)
ACTIVITY_NAMES = ("idle", "fortifying", "fortified", "irrigating", "mining", "roading")
BUSY = frozenset({IRRIGATING, MINING, ROADING})

DIRECTIONS = ("north", "northeast", "east", "southeast", "south", "southwest", "west", "northwest")
DELTAS = ((0, -1), (1, -1), (1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1))
CARDINAL = frozenset({0, 2, 4, 6})

# The unit orders, one object each, shared by the legal-action lists (see legal.py).
MOVE = tuple(Action("move", d) for d in range(8))
ATTACK = tuple(Action("attack", d) for d in range(8))
WAIT = Action("wait")
FORTIFY = Action("fortify")
BUILD_CITY = Action("build_city")
IRRIGATE = Action("irrigate")
MINE_ACTION = Action("mine")
BUILD_ROAD = Action("build_road")


@dataclass(frozen=True, slots=True)
class Tables:
    """Index-based views of the ruleset. Items a city can build: units first, then buildings."""

    ruleset: Ruleset
    terrain_names: tuple[str, ...]
    resource_names: tuple[str, ...]
    unit_names: tuple[str, ...]
    building_names: tuple[str, ...]
    tech_names: tuple[str, ...]
    item_names: tuple[str, ...]
    item_costs: tuple[int, ...]
    item_tech: tuple[int, ...]  # tech index needed, -1 for none
    tech_reqs: tuple[tuple[int, ...], ...]
    tech_cost: tuple[int, ...]  # bulbs, FreeCiv "Classic" cost style
    unit_military: tuple[bool, ...]
    unit_settlers: tuple[bool, ...]  # can irrigate, mine, build roads
    unit_cities: tuple[bool, ...]  # can found cities
    unit_can_fortify: tuple[bool, ...]
    n_units: int
    barracks: int  # building bit positions
    granary: int
    walls: int
    terrain_ocean: tuple[bool, ...]
    # Per unit kind, for the hot path (the ruleset's dataclasses cost an attribute lookup each).
    unit_can_attack: tuple[bool, ...]  # military with attack > 0
    unit_hp: tuple[int, ...]
    unit_moves: tuple[int, ...]  # move_rate x move_frags
    unit_upkeep_food: tuple[int, ...]
    unit_upkeep_shield: tuple[int, ...]
    default_build: int  # what a new city builds, and a city after finishing a building
    # Name -> index (the first, as tuple.index), instead of a scan on every production or
    # research order.
    item_by_name: dict[str, int] = field(compare=False)
    tech_by_name: dict[str, int] = field(compare=False)


def compile_tables(ruleset: Ruleset) -> Tables:
    techs = [t.name for t in ruleset.techs]
    tech_index = {n: i for i, n in enumerate(techs)}
    reqs = tuple(tuple(tech_index[r] for r in t.reqs) for t in ruleset.techs)

    def closure(i: int) -> set[int]:
        out = {i}
        for r in reqs[i]:
            out |= closure(r)
        return out

    base = ruleset.params["base_tech_cost"]
    # FreeCiv "Classic": cost = base * (1 + n) * sqrt(1 + n) / 2, n = techs needed incl. itself.
    cost = tuple(int(base * (1 + len(closure(i))) * math.sqrt(1 + len(closure(i))) / 2)
                 for i in range(len(techs)))
    units = ruleset.units
    buildings = ruleset.buildings
    items = [u.name for u in units] + [b.name for b in buildings]
    item_costs = [u.cost for u in units] + [b.cost for b in buildings]
    item_tech = [tech_index[x.tech] if x.tech else -1 for x in (*units, *buildings)]
    bnames = [b.name for b in buildings]
    return Tables(
        ruleset=ruleset,
        terrain_names=tuple(t.name for t in ruleset.terrains),
        resource_names=tuple(r.name for r in ruleset.resources),
        unit_names=tuple(u.name for u in units),
        building_names=tuple(bnames),
        tech_names=tuple(techs),
        item_names=tuple(items),
        item_costs=tuple(item_costs),
        item_tech=tuple(item_tech),
        tech_reqs=reqs,
        tech_cost=cost,
        unit_military=tuple(u.military for u in units),
        unit_settlers=tuple("settlers" in u.flags for u in units),
        unit_cities=tuple("cities" in u.flags for u in units),
        unit_can_fortify=tuple(u.military and "cant_fortify" not in u.flags for u in units),
        n_units=len(units),
        barracks=bnames.index("barracks"),
        granary=bnames.index("granary"),
        walls=bnames.index("city walls"),
        terrain_ocean=tuple(t.ocean for t in ruleset.terrains),
        unit_can_attack=tuple(u.military and u.attack > 0 for u in units),
        unit_hp=tuple(u.hp for u in units),
        unit_moves=tuple(u.move_rate * ruleset.params["move_frags"] for u in units),
        unit_upkeep_food=tuple(u.upkeep_food for u in units),
        unit_upkeep_shield=tuple(u.upkeep_shield for u in units),
        default_build=next((i for i, u in enumerate(units) if u.name == "warriors"), 0),
        item_by_name={name: i for i, name in reversed(list(enumerate(items)))},
        tech_by_name=tech_index,
    )
