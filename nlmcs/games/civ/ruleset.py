"""The civ engine's rules as data: loading and validating a JSON ruleset.

The shipped `data/rulesets/classic.json` holds the numbers of FreeCiv 3.0's `classic` ruleset and is
regenerated from FreeCiv's own files by `nlmcs game convert-ruleset` (see `convert.py`). Every
number the engine uses lives here, so a bad file is caught once, at load time, with a message naming
the file, the entry and the problem.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from nlmcs.errors import UserInputError
from nlmcs.paths import rulesets_dir, shipped_dir

FORMAT = "nlmcs-ruleset/1"
TERRAIN_NAMES = (
    "grassland", "plains", "desert", "tundra", "forest",
    "hills", "mountains", "swamp", "jungle", "ocean",
)
UNIT_FLAGS = frozenset({"settlers", "cities", "nonmil", "cant_fortify"})
GOVERNMENT_PARAMS = frozenset({"tile_penalty_above", "corruption_pct", "corruption_per_distance",
                               "martial_law_max", "science_pct", "free_upkeep"})
"""The params `convert.convert_freeciv_ruleset` takes from its government's effects: rulesets
that differ in these alone are one ruleset under two governments."""


class RulesetError(UserInputError):
    """A ruleset file that cannot be used; the message names the file and the entry."""


@dataclass(frozen=True, slots=True)
class Terrain:
    """One terrain type; yields are per worked tile, times in worker-turns (FreeCiv units)."""

    name: str
    ident: str  # one character, used by the ASCII map and the JSON map rows
    ocean: bool
    move_cost: int  # whole move points (FreeCiv `movement_cost`)
    defense_pct: int  # defence bonus in percent (hills 100, mountains 200)
    food: int
    shield: int
    trade: int
    irrigation_food: int  # 0: cannot be irrigated (FreeCiv terrain conversions are not modelled)
    irrigation_time: int
    mining_shield: int  # 0: cannot be mined
    mining_time: int
    road_time: int  # 0: no roads
    road_trade: int  # trade a road adds (FreeCiv road trade_incr x road_trade_incr_pct / 100)
    resources: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Resource:
    name: str
    food: int
    shield: int
    trade: int


@dataclass(frozen=True, slots=True)
class UnitType:
    name: str  # lower-case FreeCiv name; also the unit's text label
    tech: str | None
    cost: int  # shields
    pop_cost: int
    attack: int
    defense: int
    hp: int
    firepower: int
    move_rate: int  # whole move points
    upkeep_shield: int
    upkeep_food: int
    flags: frozenset[str]

    @property
    def military(self) -> bool:
        return "nonmil" not in self.flags


@dataclass(frozen=True, slots=True)
class Building:
    name: str  # lower-case FreeCiv name ("city walls")
    tech: str | None
    cost: int
    upkeep: int


@dataclass(frozen=True, slots=True)
class Tech:
    name: str  # lower-case FreeCiv name ("bronze working")
    reqs: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Ruleset:
    """Everything rule-like the engine reads; `params` holds the game and combat constants."""

    name: str
    sha256: str
    terrains: tuple[Terrain, ...]
    resources: tuple[Resource, ...]
    units: tuple[UnitType, ...]
    buildings: tuple[Building, ...]
    techs: tuple[Tech, ...]
    params: dict

    def terrain_index(self, name: str) -> int:
        return [t.name for t in self.terrains].index(name)

    def same_but_government(self, other: Ruleset) -> bool:
        """Whether `other` is this ruleset under another government (`GOVERNMENT_PARAMS`)."""
        if (self.terrains, self.resources, self.units, self.buildings, self.techs) != (
                other.terrains, other.resources, other.units, other.buildings, other.techs):
            return False
        keys = (set(self.params) | set(other.params)) - GOVERNMENT_PARAMS
        return all(self.params.get(k) == other.params.get(k) for k in keys)

    def unit(self, name: str) -> UnitType:
        for u in self.units:
            if u.name == name:
                return u
        raise KeyError(name)


# key -> (type, minimum) for the scalar parameters; every one is required.
PARAMS = {
    "move_frags": (int, 1),
    "road_move_frags": (int, 0),
    "river_move_frags": (int, 0),
    "river_trade": (int, 0),
    "river_defense_pct": (int, 0),
    "fortified_defense_pct": (int, 0),
    "walls_defense_pct": (int, 0),
    "granary_keep_pct": (int, 0),
    "granary_food_ini": (int, 1),
    "granary_food_inc": (int, 0),
    "food_cost": (int, 0),
    "min_city_center_food": (int, 0),
    "min_city_center_shield": (int, 0),
    "min_city_center_trade": (int, 0),
    "city_radius_sq": (int, 1),
    "citymindist": (int, 1),
    "tile_penalty_above": (int, 0),
    "content_base": (int, 0),
    "martial_law_max": (int, 0),
    "free_upkeep": (int, 0),
    "base_tech_cost": (int, 1),
    "science_pct": (int, 0),
    "barracks_veteran": (int, 0),
    "hp_regen_pct": (int, 0),
    "change_penalty_pct": (int, 0),
    "max_city_size": (int, 1),
    "corruption_pct": (int, 0),
    "corruption_per_distance": (int, 0),
    "capital_corruption_cut_pct": (int, 0),
}
LIST_PARAMS = ("veteran_power_pct", "veteran_raise_pct", "start_units")
TOP_KEYS = {"format", "name", "source", "params", "terrains", "resources", "units", "buildings",
            "techs"}
ENTRY_KEYS = {
    "terrains": {"name", "ident", "ocean", "move_cost", "defense_pct", "food", "shield", "trade",
                 "irrigation_food", "irrigation_time", "mining_shield", "mining_time", "road_time",
                 "road_trade", "resources"},
    "resources": {"name", "food", "shield", "trade"},
    "units": {"name", "tech", "cost", "pop_cost", "attack", "defense", "hp", "firepower",
              "move_rate", "upkeep_shield", "upkeep_food", "flags"},
    "buildings": {"name", "tech", "cost", "upkeep"},
    "techs": {"name", "reqs"},
}
REQUIRED_BUILDINGS = ("barracks", "granary", "city walls")


def resolve_ruleset_path(name_or_path: str | Path) -> Path:
    """A ruleset name ("classic") is looked up among the user's rulesets (`nlmcs.paths.
    rulesets_dir`), then among the shipped ones; anything else is a path."""
    text = str(name_or_path)
    if "/" not in text and not text.endswith(".json"):
        path = rulesets_dir() / f"{text}.json"
        shipped = shipped_dir() / "rulesets" / f"{text}.json"
        return path if path.is_file() or not shipped.is_file() else shipped
    return Path(text)


def load_ruleset(name_or_path: str | Path = "classic") -> Ruleset:
    """Read and validate a ruleset; raise `RulesetError` naming the file and the first problem."""
    path = resolve_ruleset_path(name_or_path)
    if not path.is_file():
        raise RulesetError(f"{path}: ruleset not found")
    raw = path.read_bytes()
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        raise RulesetError(f"{path}: not a JSON ruleset ({err})") from None
    return ruleset_from_dict(data, source=str(path), sha256=hashlib.sha256(raw).hexdigest())


def ruleset_from_dict(data: object, *, source: str = "<ruleset>", sha256: str = "") -> Ruleset:
    def fail(what: str) -> RulesetError:
        return RulesetError(f"{source}: {what}")

    if not isinstance(data, dict):
        raise fail("top level must be a JSON object")
    _keys(data, TOP_KEYS, TOP_KEYS - {"source"}, "top level", fail)
    if data["format"] != FORMAT:
        raise fail(f"format is {data['format']!r}, expected {FORMAT!r}")
    params = data["params"]
    if not isinstance(params, dict):
        raise fail("params must be an object")
    _keys(params, set(PARAMS) | set(LIST_PARAMS), set(PARAMS) | set(LIST_PARAMS), "params", fail)
    for key, (typ, low) in PARAMS.items():
        value = params[key]
        if not isinstance(value, typ) or isinstance(value, bool):
            raise fail(f"params.{key} must be an integer, got {value!r}")
        if value < low:
            raise fail(f"params.{key} is {value}, must be >= {low}")
    for key in ("veteran_power_pct", "veteran_raise_pct"):
        values = params[key]
        if not isinstance(values, list) or not values or not all(
            isinstance(v, int) and v >= 0 for v in values
        ):
            raise fail(f"params.{key} must be a non-empty list of non-negative integers")
    if len(params["veteran_power_pct"]) != len(params["veteran_raise_pct"]):
        raise fail("params.veteran_power_pct and veteran_raise_pct differ in length")

    entries = {}
    for section, keys in ENTRY_KEYS.items():
        items = data[section]
        if not isinstance(items, list) or not items:
            raise fail(f"{section} must be a non-empty list")
        seen = set()
        for k, item in enumerate(items):
            where = f"{section}[{k}]"
            if not isinstance(item, dict):
                raise fail(f"{where} must be an object")
            _keys(item, keys, keys, where, fail)
            name = item["name"]
            if not isinstance(name, str) or not name or name != name.lower():
                raise fail(f"{where}.name must be a lower-case name, got {name!r}")
            if name in seen:
                raise fail(f"{where}: duplicate name {name!r}")
            seen.add(name)
            for key, value in item.items():
                if key in ("name", "tech", "ident", "resources", "reqs", "flags", "ocean"):
                    continue
                if not isinstance(value, int) or isinstance(value, bool):
                    raise fail(f"{where} ({name}).{key} must be an integer, got {value!r}")
                if value < 0:
                    raise fail(f"{where} ({name}).{key} is negative ({value})")
        entries[section] = items

    resources = tuple(Resource(r["name"], r["food"], r["shield"], r["trade"])
                      for r in entries["resources"])
    resource_names = {r.name for r in resources}
    terrains = []
    for t in entries["terrains"]:
        if t["name"] not in TERRAIN_NAMES:
            raise fail(f"unknown terrain {t['name']!r} (known: {', '.join(TERRAIN_NAMES)})")
        if not isinstance(t["ident"], str) or len(t["ident"]) != 1:
            raise fail(f"terrain {t['name']!r}: ident must be one character")
        if not isinstance(t["ocean"], bool):
            raise fail(f"terrain {t['name']!r}: ocean must be true or false")
        bad = [r for r in t["resources"] if not isinstance(r, str) or r not in resource_names]
        if bad:
            raise fail(f"terrain {t['name']!r}: unknown resource {bad[0]!r}")
        fields = {k: v for k, v in t.items() if k != "resources"}
        terrains.append(Terrain(**fields, resources=tuple(t["resources"])))
    missing = set(TERRAIN_NAMES) - {t.name for t in terrains}
    if missing:
        raise fail(f"terrains: missing {sorted(missing)[0]!r}")
    if len({t.ident for t in terrains}) != len(terrains):
        raise fail("terrains: two terrains share an ident character")
    terrains.sort(key=lambda t: TERRAIN_NAMES.index(t.name))

    techs = tuple(Tech(t["name"], tuple(t["reqs"])) for t in entries["techs"])
    tech_names = {t.name for t in techs}
    for t in techs:
        for r in t.reqs:
            if r not in tech_names:
                raise fail(f"tech {t.name!r}: unknown requirement {r!r}")

    def tech_of(item, what):
        tech = item["tech"]
        if tech is not None and tech not in tech_names:
            raise fail(f"{what} {item['name']!r}: unknown tech {tech!r}")
        return tech

    units = []
    for u in entries["units"]:
        flags = u["flags"]
        if not isinstance(flags, list) or any(f not in UNIT_FLAGS for f in flags):
            raise fail(f"unit {u['name']!r}: flags must be a list drawn from {sorted(UNIT_FLAGS)}")
        if u["hp"] < 1 or u["firepower"] < 1 or u["move_rate"] < 1:
            raise fail(f"unit {u['name']!r}: hp, firepower and move_rate must be >= 1")
        fields = {k: v for k, v in u.items() if k not in ("flags", "tech")}
        units.append(UnitType(**fields, tech=tech_of(u, "unit"), flags=frozenset(flags)))
    unit_names = {u.name for u in units}
    for name in params["start_units"]:
        if name not in unit_names:
            raise fail(f"params.start_units: unknown unit {name!r}")
    if not any("cities" in u.flags for u in units):
        raise fail("units: no unit can found cities (flag 'cities')")
    buildings = tuple(Building(b["name"], tech_of(b, "building"), b["cost"], b["upkeep"])
                      for b in entries["buildings"])
    for name in REQUIRED_BUILDINGS:
        if name not in {b.name for b in buildings}:
            raise fail(f"buildings: missing {name!r}")
    return Ruleset(
        name=str(data["name"]),
        sha256=sha256,
        terrains=tuple(terrains),
        resources=resources,
        units=tuple(units),
        buildings=buildings,
        techs=techs,
        params=dict(params),
    )


def _keys(obj: dict, allowed: set, required: set, where: str, fail) -> None:
    unknown = sorted(set(obj) - allowed)
    if unknown:
        raise fail(f"{where}: unknown key {unknown[0]!r}")
    missing = sorted(required - set(obj))
    if missing:
        raise fail(f"{where}: missing key {missing[0]!r}")
