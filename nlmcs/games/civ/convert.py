"""Convert FreeCiv ruleset files (e.g. /usr/share/games/freeciv/classic/) into our JSON ruleset.

Only the parts the civ engine models are taken: the ten terrains, their resources, roads and
rivers, the ancient units and the techs they need, barracks, granary and city walls, the granary
box, city radius, veteran levels, the defence effects, and one government's effects (Despotism
unless asked: its tile penalty, trade corruption, martial law, highest rate and free upkeep;
every player of a game lives under that one government, our engine has no revolutions).
Constants that FreeCiv keeps in server settings or C code rather than in ruleset files
(fortified +50%, citymindist 2, four content citizens, 10% hit-point recovery) are filled in
with FreeCiv's defaults and listed in `FREECIV_DEFAULTS`.
"""

from __future__ import annotations

import json
from pathlib import Path

from nlmcs.errors import UserInputError
from nlmcs.files import write_atomic
from nlmcs.games.civ.freeciv_files import parse_secfile
from nlmcs.games.civ.ruleset import FORMAT, TERRAIN_NAMES, ruleset_from_dict

UNITS = ("settlers", "workers", "warriors", "phalanx", "archers", "horsemen", "legion",
         "catapult", "chariot")
BUILDINGS = ("barracks", "granary", "city walls")
FREECIV_DEFAULTS = {
    "fortified_defense_pct": 50,  # server: fortified (or in a city) land units defend at +50%
    "citymindist": 2,  # server setting default
    "content_base": 4,  # content citizens; replaced by the "City_Unhappy_Size" effect if present
    "martial_law_max": 3,  # fallback when no Despotism "Martial_Law_Max" effect is present
    "free_upkeep": 3,  # fallback: three units per city cost no shields (as in despotism)
    "science_pct": 60,  # fallback: despotism's highest rate, the science share of trade
    "hp_regen_pct": 10,  # hit points recovered per turn outside cities
    "change_penalty_pct": 50,  # shields lost switching between unit and building production
    "max_city_size": 8,  # a city needs an Aqueduct (not modelled) to grow past 8
    "start_units": ["settlers", "settlers", "workers", "warriors"],
}


def _name(value: object) -> str:
    """FreeCiv names carry translation qualifiers ("?unit:Workers"); drop them and lower-case."""
    text = str(value)
    if text.startswith("?") and ":" in text:
        text = text.split(":", 1)[1]
    return text.lower()


def _load(directory: Path, stem: str) -> dict:
    path = directory / f"{stem}.ruleset"
    if not path.is_file():
        raise UserInputError(f"{path}: FreeCiv ruleset file not found")
    return parse_secfile(path)


def _get(section: dict, key: str, where: str):
    if key not in section:
        raise UserInputError(f"{where}: missing key {key!r}")
    return section[key]


def convert_freeciv_ruleset(directory: str | Path, *, name: str | None = None,
                            government: str = "Despotism") -> dict:
    """Read FreeCiv's terrain/units/buildings/techs/game/effects files; return our ruleset dict,
    its government's effects those of `government` (a name in governments.ruleset)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise UserInputError(f"{directory}: not a directory of FreeCiv ruleset files")
    terrain = _load(directory, "terrain")
    units = _load(directory, "units")
    buildings = _load(directory, "buildings")
    techs = _load(directory, "techs")
    game = _load(directory, "game")
    effects = _load(directory, "effects")
    governments = {_name(b.get("name", "")): str(b.get("name", "")) for sec, b in
                   _load(directory, "governments").items() if sec.startswith("government_")}
    if government.lower() not in governments:
        raise UserInputError(f"{directory / 'governments.ruleset'}: no government {government!r}; "
                             f"choose from {', '.join(sorted(governments))}")
    gov = governments[government.lower()]  # as the effects' requirements name it
    where_t = str(directory / "terrain.ruleset")

    resources = []
    extra_to_resource = {}
    for sec, body in terrain.items():
        if sec.startswith("resource_"):
            extra = _get(body, "extra", f"{where_t} [{sec}]")
            rname = _name(extra)
            if rname == "spice":
                rname = "spices"  # FreeCiv's help text and our word list use the plural
            extra_to_resource[extra] = rname
            resources.append({"name": rname, "food": int(body.get("food", 0)),
                              "shield": int(body.get("shield", 0)),
                              "trade": int(body.get("trade", 0))})
    road = terrain.get("road_road", {})
    river = terrain.get("road_river", {})
    river_extra = terrain.get("extra_river", {})
    move_frags = int(_get(terrain.get("parameters", {}), "move_fragments",
                          f"{where_t} [parameters]"))

    terrains = []
    for sec, body in terrain.items():
        if not sec.startswith("terrain_"):
            continue
        tname = _name(_get(body, "name", f"{where_t} [{sec}]"))
        if tname not in TERRAIN_NAMES:
            continue
        w = f"{where_t} [{sec}]"

        def num(key, body=body, w=w):
            return int(_get(body, key, w))

        res = body.get("resources", [])
        res = [res] if isinstance(res, str) else list(res)
        irrigable = body.get("irrigation_result") == "yes"
        minable = body.get("mining_result") == "yes"
        terrains.append({
            "name": tname,
            "ident": str(_get(body, "identifier", w)),
            "ocean": _get(body, "class", w) == "Oceanic",
            "move_cost": num("movement_cost"),
            "defense_pct": num("defense_bonus"),
            "food": num("food"), "shield": num("shield"), "trade": num("trade"),
            "irrigation_food": num("irrigation_food_incr") if irrigable else 0,
            "irrigation_time": num("irrigation_time") if irrigable else 0,
            "mining_shield": num("mining_shield_incr") if minable else 0,
            "mining_time": num("mining_time") if minable else 0,
            "road_time": num("road_time"),
            "road_trade": int(road.get("trade_incr", 0)) * num("road_trade_incr_pct") // 100,
            "resources": [extra_to_resource[r] for r in res if r in extra_to_resource],
        })
    if {t["name"] for t in terrains} != set(TERRAIN_NAMES):
        missing = sorted(set(TERRAIN_NAMES) - {t["name"] for t in terrains})
        raise UserInputError(f"{where_t}: terrain {missing[0]!r} not found")
    used = {r for t in terrains for r in t["resources"]}
    resources = [r for r in resources if r["name"] in used]

    unit_rows = []
    need_techs: set[str] = set()
    by_name = {_name(b.get("name", "")): (s, b) for s, b in units.items() if s.startswith("unit_")}
    for uname in UNITS:
        if uname not in by_name:
            raise UserInputError(f"{directory / 'units.ruleset'}: unit {uname!r} not found")
        sec, body = by_name[uname]
        w = f"{directory / 'units.ruleset'} [{sec}]"
        flags = body.get("flags", [])
        flags = [flags] if isinstance(flags, str) else flags
        ours = []
        if "Settlers" in flags:
            ours.append("settlers")
        if "Cities" in flags:
            ours.append("cities")
        if "NonMil" in flags:
            ours.append("nonmil")
        if "Cant_Fortify" in flags:
            ours.append("cant_fortify")
        tech = _get(body, "tech_req", w)
        tech = None if tech == "None" else _name(tech)
        if tech:
            need_techs.add(tech)
        unit_rows.append({
            "name": uname, "tech": tech,
            "cost": int(_get(body, "build_cost", w)), "pop_cost": int(body.get("pop_cost", 0)),
            "attack": int(_get(body, "attack", w)), "defense": int(_get(body, "defense", w)),
            "hp": int(_get(body, "hitpoints", w)), "firepower": int(_get(body, "firepower", w)),
            "move_rate": int(_get(body, "move_rate", w)),
            "upkeep_shield": int(body.get("uk_shield", 0)),
            "upkeep_food": int(body.get("uk_food", 0)),
            "flags": ours,
        })

    building_rows = []
    b_by_name = {_name(b.get("name", "")): (s, b) for s, b in buildings.items()
                 if s.startswith("building_")}
    for bname in BUILDINGS:
        if bname not in b_by_name:
            raise UserInputError(f"{directory / 'buildings.ruleset'}: building {bname!r} not found")
        sec, body = b_by_name[bname]
        reqs = body.get("reqs", [])
        tech = next((_name(r["name"]) for r in reqs if r.get("type") == "Tech"), None)
        if tech:
            need_techs.add(tech)
        building_rows.append({"name": bname, "tech": tech,
                              "cost": int(_get(body, "build_cost", sec)),
                              "upkeep": int(body.get("upkeep", 0))})

    t_by_name = {_name(b.get("name", "")): b for s, b in techs.items() if s.startswith("advance_")}
    tech_rows: dict[str, list[str]] = {}
    todo = sorted(need_techs)
    while todo:
        tname = todo.pop()
        if tname in tech_rows:
            continue
        if tname not in t_by_name:
            raise UserInputError(f"{directory / 'techs.ruleset'}: tech {tname!r} not found")
        body = t_by_name[tname]
        reqs = [_name(body.get(k, "None")) for k in ("req1", "req2")]
        reqs = [r for r in reqs if r != "none"]
        tech_rows[tname] = reqs
        todo.extend(reqs)

    vet = units.get("veteran_system", {})
    civstyle = game.get("civstyle", {})
    research = game.get("research", {})
    walls, granary, unhappy_size, penalty, barracks = 100, 0, None, 0, 0
    waste, waste_dist, palace_cut, martial, rate, free = 0, 0, 0, None, None, None
    for body in effects.values():
        kind, value = body.get("type"), body.get("value", 0)
        names = {str(r.get("name")) for r in body.get("reqs", []) if r.get("present", True)}
        ours = gov in names  # an effect of the government converted
        if kind == "Defend_Bonus" and {"City Walls", "Land"} <= names:
            walls = int(value)
        elif kind == "Growth_Food" and "Granary" in names:
            granary = int(value)
        elif kind == "City_Unhappy_Size" and not names:
            unhappy_size = int(value)
        elif kind == "Output_Penalty_Tile" and ours:
            penalty = int(value)
        elif kind == "Veteran_Build" and {"Barracks", "Land"} <= names:
            barracks = int(value)
        elif kind == "Output_Waste" and ours and "Trade" in names:
            waste = int(value)
        elif kind == "Output_Waste_By_Distance" and ours and "Trade" in names:
            waste_dist = int(value)
        elif kind == "Output_Waste_Pct" and {"Palace", "Trade"} <= names:
            palace_cut = int(value)
        elif kind == "Martial_Law_Max" and ours:
            martial = int(value)
        elif kind == "Max_Rates" and ours:
            rate = int(value)
        elif kind == "Unit_Upkeep_Free_Per_City" and ours and "Shield" in names:
            free = int(value)
    params = {
        "move_frags": move_frags,
        "road_move_frags": int(road.get("move_cost", move_frags)),
        "river_move_frags": int(river.get("move_cost", move_frags)),
        "river_trade": int(river.get("trade_incr_const", 0)),
        "river_defense_pct": int(river_extra.get("defense_bonus", 0)),
        "walls_defense_pct": walls,
        "granary_keep_pct": granary,
        "granary_food_ini": _first(civstyle.get("granary_food_ini", 1)),
        "granary_food_inc": int(civstyle.get("granary_food_inc", 0)),
        "food_cost": int(civstyle.get("food_cost", 2)),
        "min_city_center_food": int(civstyle.get("min_city_center_food", 0)),
        "min_city_center_shield": int(civstyle.get("min_city_center_shield", 0)),
        "min_city_center_trade": int(civstyle.get("min_city_center_trade", 0)),
        "city_radius_sq": int(civstyle.get("init_city_radius_sq", 5)),
        "tile_penalty_above": penalty,
        "base_tech_cost": int(research.get("base_tech_cost", 20)),
        "barracks_veteran": barracks,
        "corruption_pct": waste,
        "corruption_per_distance": waste_dist,
        "capital_corruption_cut_pct": palace_cut,
        "veteran_power_pct": [int(v) for v in _list(vet.get("veteran_power_fact", [100]))],
        "veteran_raise_pct": [int(v) for v in _list(vet.get("veteran_raise_chance", [0]))],
        **FREECIV_DEFAULTS,
    }
    if unhappy_size is not None:
        params["content_base"] = unhappy_size
    if martial is not None:
        params["martial_law_max"] = martial
    if rate is not None:
        params["science_pct"] = rate
    if free is not None:
        params["free_upkeep"] = free
    data = {
        "format": FORMAT,
        "name": name or directory.name,
        "source": f"converted from FreeCiv ruleset files in {directory}",
        "params": params,
        "terrains": sorted(terrains, key=lambda t: TERRAIN_NAMES.index(t["name"])),
        "resources": resources,
        "units": unit_rows,
        "buildings": building_rows,
        "techs": [{"name": k, "reqs": v} for k, v in sorted(tech_rows.items())],
    }
    ruleset_from_dict(data, source=str(directory))  # the result must load
    return data


def _first(value) -> int:
    return int(value[0]) if isinstance(value, list) else int(value)


def _list(value) -> list:
    return value if isinstance(value, list) else [value]


def write_ruleset(data: dict, out: str | Path) -> Path:
    """Write atomically: a temp file in the target directory, then rename."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    return write_atomic(out, json.dumps(data, indent=1) + "\n")
