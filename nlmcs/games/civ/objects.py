"""The small mutable records a civ state is made of: units, cities and players.

Each has `__slots__` and a `copy()` so cloning a state costs little per record.
"""

from __future__ import annotations


class Unit:
    """One unit. `kind` indexes the ruleset's units; `vet` is the veteran level (0 = green);
    `activity` is one of tables.IDLE..ROADING; `progress` counts worker-turns done on it."""

    __slots__ = ("id", "owner", "kind", "tile", "hp", "vet", "activity", "progress", "home", "aid")

    def __init__(self, id, owner, kind, tile, hp, vet=0, activity=0, progress=0, home=-1):
        self.id = id
        self.owner = owner
        self.kind = kind
        self.tile = tile
        self.hp = hp
        self.vet = vet
        self.activity = activity
        self.progress = progress
        self.home = home
        self.aid = f"unit:{id}"

    def copy(self) -> Unit:
        u = Unit.__new__(Unit)
        u.id, u.owner, u.kind, u.tile, u.hp = self.id, self.owner, self.kind, self.tile, self.hp
        u.vet, u.activity, u.progress, u.home = self.vet, self.activity, self.progress, self.home
        u.aid = self.aid
        return u


class City:
    """One city. `build` indexes Tables.item_names; `buildings` is a bitmask over the ruleset's
    buildings. The cached outputs (`surplus_*`, `worked`) are refreshed by the governor whenever
    `dirty` is set (growth, new improvements, capture)."""

    __slots__ = ("id", "owner", "tile", "size", "food", "shields", "build", "buildings",
                 "capital", "fresh", "worked", "surplus_food", "surplus_shield", "trade",
                 "unhappy", "dirty", "aid", "founded")

    def __init__(self, id, owner, tile, size=1, build=0, capital=False, founded=0):
        self.id = id
        self.owner = owner
        self.tile = tile
        self.size = size
        self.food = 0
        self.shields = 0
        self.build = build
        self.buildings = 0
        self.capital = capital
        self.fresh = True  # may change production without penalty (just founded or just built)
        self.worked: tuple[int, ...] = (tile,)
        self.surplus_food = 0
        self.surplus_shield = 0
        self.trade = 0
        self.unhappy = 0
        self.dirty = True
        self.aid = f"city:{id}"
        self.founded = founded

    def copy(self) -> City:
        c = City.__new__(City)
        c.id, c.owner, c.tile, c.size, c.food = self.id, self.owner, self.tile, self.size, self.food
        c.shields, c.build, c.buildings = self.shields, self.build, self.buildings
        c.capital, c.fresh, c.worked = self.capital, self.fresh, self.worked
        c.surplus_food, c.surplus_shield = self.surplus_food, self.surplus_shield
        c.trade, c.unhappy, c.dirty = self.trade, self.unhappy, self.dirty
        c.aid, c.founded = self.aid, self.founded
        return c


class Player:
    """Per-civilization totals. `techs` is a bitmask over the ruleset's techs."""

    __slots__ = ("techs", "researching", "bulbs", "gold", "built", "killed", "lost")

    def __init__(self):
        self.techs = 0
        self.researching = -1
        self.bulbs = 0
        self.gold = 0
        self.built = 0
        self.killed = 0
        self.lost = 0

    def copy(self) -> Player:
        p = Player.__new__(Player)
        p.techs, p.researching = self.techs, self.researching
        p.bulbs, p.gold = self.bulbs, self.gold
        p.built, p.killed, p.lost = self.built, self.killed, self.lost
        return p
