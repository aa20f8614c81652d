"""The FreeCiv server's view, as our engine's state: what the planners search from.

Each turn the client's `View` (a player's view, fog of war included) becomes a `CivState` of a
`CivGame` of the same map size, through the engine's checked JSON reader. Tile indices agree
(FreeCiv's native index y * xsize + x on a non-isometric map). What our engine does not model is
mapped to its nearest equivalent or left out, and counted in `Translation.gaps`:

- tiles never seen: guessed tundra, land of little worth (counted as `unknown tile`): guessed
  grassland, the unseen two thirds of the map looked like the best land there is, and our
  built-in AI sent its settlers a dozen tiles into it, to find ocean or hills (with it through the
  bridge it founded one city in 100 turns; with tundra, five or six); FreeCiv terrains we lack:
  lake, deep ocean and inaccessible as ocean, glacier as tundra;
- units, buildings and techs we lack (explorers, palaces, ...): left out, by name; a palace makes
  its city our capital;
- activities we lack (sentry, explore, ...): idle; work progress: FreeCiv's activity count / 10;
- our government's effects (tile penalty, corruption, martial law, highest science rate) are
  those of our ruleset for it (`RULESETS`: FreeCiv classic's Despotism or Monarchy, converted by
  `nlmcs game convert-ruleset --government`); every player of our state lives under it (the
  engine has one government a game), another government (anarchy in a revolution) as
  Despotism's;
- the map wraps east to west in our engine as on the server (its `topology_id` says WRAPX),
  units at sea are left out, and our players are the living ones, us first.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from nlmcs.games.civ import CivGame
from nlmcs.games.civ.cities import governor
from nlmcs.games.civ.game import CivConfig
from nlmcs.games.civ.mapgen import columns_apart
from nlmcs.games.civ.serialize import FORMAT, activity_problem, state_from_json
from nlmcs.games.civ.state import CivState
from nlmcs.games.civ.tables import ACTIVITY_NAMES
from nlmcs.games.freeciv.client import View
from nlmcs.games.freeciv.constants import ENUMS

TERRAIN_AS = {"lake": "ocean", "deep ocean": "ocean", "inaccessible": "ocean",
              "glacier": "tundra"}  # fmt: skip
UNKNOWN_TERRAIN = "tundra"
UNKNOWN_GAP = f"unknown tile (guessed {UNKNOWN_TERRAIN})"
ACTIVITY_AS = {
    ENUMS["ACTIVITY_IDLE"]: "idle", ENUMS["ACTIVITY_FORTIFIED"]: "fortified",
    ENUMS["ACTIVITY_FORTIFYING"]: "fortifying", ENUMS["ACTIVITY_IRRIGATE"]: "irrigating",
    ENUMS["ACTIVITY_MINE"]: "mining", ENUMS["ACTIVITY_GEN_ROAD"]: "roading",
}  # fmt: skip
IMPROVEMENT_EXTRAS = {"irrigation": "irrigation", "mine": "mine", "road": "road"}
RULESETS = {"despotism": "classic", "monarchy": "classic-monarchy"}
"""Our shipped ruleset for our government in the real game; any other plays as Despotism's."""


@dataclass
class Translation:
    state: CivState
    players: list[int]  # FreeCiv player number of each of our players (ours first)
    gaps: Counter  # what did not map as it is, and how often

    def ours(self, freeciv_player: int) -> int | None:
        return self.players.index(freeciv_player) if freeciv_player in self.players else None


def rule_name(row: dict) -> str:
    return str(row.get("rule_name") or row.get("name") or "").lower()


def _bits(vector: bytes) -> list[int]:
    return [i for i in range(len(vector) * 8) if vector[i // 8] >> (i % 8) & 1]


def translate(view: View, *, max_turns: int, game: CivGame | None = None) -> Translation:
    """Our state for `view`; `game` (of the right size and player count) is reused if given."""
    info = view.latest.get("PACKET_MAP_INFO")
    if info is None or view.player_id is None:
        raise ValueError("the server has not sent the map and our player yet")
    width, height = info["xsize"], info["ysize"]
    wrap_x = bool(info.get("topology_id", 0) & ENUMS["TF_WRAPX"])
    me = view.player_id
    alive = sorted(p for p, row in view.players.items()
                   if row.get("is_alive") and p != me and not row.get("barbarian_type"))
    players = [me, *alive]
    gaps: Counter = Counter()
    government = rule_name(view.governments.get(view.players.get(me, {}).get("government"), {}))
    ruleset = RULESETS.get(government, RULESETS["despotism"])
    if government and government not in RULESETS:
        gaps[f"government {government} as despotism"] += 1
    if game is None or (game.config.width, game.config.height, game.config.wrap_x,
                        game.num_players, game.config.ruleset) != (width, height, wrap_x,
                                                                   len(players), ruleset):
        game = CivGame(CivConfig(width=width, height=height, num_players=len(players),
                                 max_turns=max_turns, ruleset=ruleset, wrap_x=wrap_x))  # fmt: skip
    T = game.tables
    our_terrains = {t.name: t.ident for t in T.ruleset.terrains}
    extras = {i: rule_name(e) for i, e in view.extras.items()}

    terrain, ocean = [], set()
    resources, rivers, improvements = [], [], []
    for t in range(width * height):
        tile = view.tiles.get(t)
        if tile is None or tile.get("known", 0) == ENUMS["TILE_UNKNOWN"]:
            gaps[UNKNOWN_GAP] += 1
            terrain.append(our_terrains[UNKNOWN_TERRAIN])
            continue
        name = rule_name(view.terrains.get(tile["terrain"], {}))
        if name not in our_terrains:
            gaps[f"terrain {name or tile['terrain']} as {TERRAIN_AS.get(name, 'grassland')}"] += 1
            name = TERRAIN_AS.get(name, "grassland")
        terrain.append(our_terrains[name])
        if name == "ocean":
            ocean.add(t)
            continue
        res = extras.get(tile.get("resource"))  # none: an id past the extras
        if res in T.resource_names:
            resources.append([t, res])
        on = {extras.get(i) for i in _bits(tile.get("extras", b""))}
        if "river" in on:
            rivers.append(t)
        imps = sorted(ours for theirs, ours in IMPROVEMENT_EXTRAS.items() if theirs in on)
        if imps:
            improvements.append([t, imps])
    rows = ["".join(terrain[y * width:(y + 1) * width]) for y in range(height)]

    def owner_of(row: dict) -> int | None:
        return players.index(row["owner"]) if row.get("owner") in players else None

    buildings = {i: rule_name(b) for i, b in view.buildings.items()}
    unit_types = {i: rule_name(u) for i, u in view.unit_types.items()}
    cities, city_tiles = [], {}
    for cid, c in sorted(view.cities.items()):
        owner = owner_of(c)
        if owner is None or c["tile"] in ocean or c["tile"] in city_tiles:
            gaps["city left out (owner or tile)"] += 1
            continue
        built = [buildings.get(i, "") for i in _bits(c.get("improvements", b""))]
        ours = [b for b in built if b in T.building_names]
        gaps.update(f"building {b} left out" for b in built if b not in ours and b != "palace")
        cities.append({
            "id": cid, "owner": owner, "tile": c["tile"],
            "size": max(1, min(c.get("size", 1), game.ruleset.params["max_city_size"])),
            "food": max(0, c.get("food_stock", 0)), "shields": c.get("shield_stock", 0),
            "build": _production(c, unit_types, buildings, T, gaps), "buildings": ours,
            "capital": "palace" in built, "fresh": False, "founded": c.get("turn_founded", 0),
            "worked": [c["tile"]], "surplus_food": 0, "surplus_shield": 0, "trade": 0,
            "unhappy": 0, "dirty": True,
        })  # fmt: skip
        city_tiles[c["tile"]] = owner

    units, unit_owner_at = [], {}
    index_of = {t.ident: i for i, t in enumerate(T.ruleset.terrains)}
    terrain_index = [index_of[ch] for ch in terrain]
    river_tiles = set(rivers)
    kept = {c["id"] for c in cities}
    for uid, u in sorted(view.units.items()):
        owner, kind = owner_of(u), unit_types.get(u.get("type"), "")
        tile = u.get("tile", -1)
        if owner is None:
            gaps["unit of an unknown player left out"] += 1
        elif kind not in T.unit_names:
            gaps[f"unit {kind or u.get('type')} left out"] += 1
        elif not 0 <= tile < width * height or tile in ocean:
            gaps["unit at sea or off the map left out"] += 1
        elif unit_owner_at.get(tile, owner) != owner or city_tiles.get(tile, owner) != owner:
            gaps["unit sharing a tile with another player left out"] += 1
        else:
            ut = T.ruleset.units[T.unit_names.index(kind)]
            act = ACTIVITY_AS.get(u.get("activity", 0))
            if act is None:
                gaps["activity as idle"] += 1
                act = "idle"
            problem = activity_problem(T, terrain_index[tile], tile in river_tiles,
                                       T.unit_names.index(kind), ACTIVITY_NAMES.index(act))
            if problem:  # FreeCiv allows it (mining grassland makes forest), our engine not
                gaps[f"activity {act} as idle ({problem})"] += 1
                act = "idle"
            units.append({
                "id": uid, "owner": owner, "type": kind, "tile": tile,
                "hp": max(1, min(u.get("hp", ut.hp), ut.hp)),
                "veteran": min(u.get("veteran", 0),
                               len(game.ruleset.params["veteran_power_pct"]) - 1),
                "activity": act,
                "progress": u.get("activity_count", 0) // ENUMS["ACTIVITY_FACTOR"],
                "home": u.get("homecity", 0) if u.get("homecity", 0) in kept else -1,
            })  # fmt: skip
            unit_owner_at[tile] = owner

    unknown = [t for t in range(width * height)
               if view.tiles.get(t, {}).get("known", 0) == ENUMS["TILE_UNKNOWN"]]
    next_id = 1 + max([0, *view.units, *view.cities])
    for p in range(1, len(players)):
        if any(c["owner"] == p for c in cities) or any(u["owner"] == p for u in units):
            continue
        tile = _far_unknown(unknown, [c["tile"] for c in cities] + [u["tile"] for u in units],
                            width, set(city_tiles) | set(unit_owner_at), wrap_x=wrap_x)  # fmt: skip
        if tile is None:
            continue
        gaps["unseen opponent: a city guessed on the farthest unknown tile"] += 1
        cities.append({
            "id": next_id, "owner": p, "tile": tile, "size": 1, "food": 0, "shields": 0,
            "build": T.item_names[T.default_build], "buildings": [], "capital": True,
            "fresh": False, "founded": 0, "worked": [tile], "surplus_food": 0,
            "surplus_shield": 0, "trade": 0, "unhappy": 0, "dirty": True,
        })  # fmt: skip
        city_tiles[tile] = p
        next_id += 1

    techs = {i: rule_name(t) for i, t in view.techs.items()}
    player_rows = []
    for p in players:
        research = research_of(view, p)
        known = [techs.get(i, "") for i, ch in enumerate(research.get("inventions", ""))
                 if ch == str(ENUMS["TECH_KNOWN"]) and i != ENUMS["A_NONE"]]  # fmt: skip
        researching = techs.get(research.get("researching", ENUMS["A_UNSET"]))
        player_rows.append({
            "techs": [t for t in known if t in T.tech_names],
            "researching": researching if researching in T.tech_names else None,
            "bulbs": max(0, research.get("bulbs_researched", 0)),
            "gold": view.players.get(p, {}).get("gold", 0),
            "built": 0, "killed": 0, "lost": 0,
        })  # fmt: skip
    data = {
        "format": FORMAT, "ruleset": T.ruleset.name, "turn": view.turn,
        "max_turns": max(max_turns, view.turn + 1),
        "next_id": next_id, "over": False, "winner": None,
        "map": {"width": width, "height": height, "terrain": rows, "resources": resources,
                "rivers": rivers, "improvements": improvements,
                **({"wrap_x": True} if wrap_x else {})},
        "players": player_rows, "units": units, "cities": cities,
    }  # fmt: skip
    state = state_from_json(game, data)
    for _, c in sorted(state.cities.items()):
        governor(state, c)  # worked tiles and surpluses as our engine would pick them
    return Translation(state, players, gaps)


def research_of(view: View, player: int) -> dict:
    """A player's research (FreeCiv keys it by team: teams pool research by default)."""
    team = view.players.get(player, {}).get("team", player)
    return view.research.get(team) or view.research.get(player) or {}


def _far_unknown(unknown: list[int], ours: list[int], width: int, taken: set[int], *,
                 wrap_x: bool = False) -> int | None:
    """The never-seen tile farthest from what we know of (a guess at an unseen player)."""
    free = [t for t in unknown if t not in taken]
    if not free:
        return None
    if not ours:
        return free[0]

    def gap(t: int) -> int:
        return min(max(columns_apart(t % width, o % width, width, wrap_x),
                       abs(t // width - o // width)) for o in ours)

    return max(free, key=lambda t: (gap(t), -t))


def _production(city: dict, unit_types: dict, buildings: dict, T, gaps: Counter) -> str:
    default = T.item_names[T.default_build]
    if "production_kind" not in city:  # a city seen from outside: FreeCiv does not say
        gaps[f"production of a city seen from outside as {default}"] += 1
        return default
    kind, value = city["production_kind"], city.get("production_value")
    name = (unit_types.get(value) if kind == ENUMS["VUT_UTYPE"]
            else buildings.get(value) if kind == ENUMS["VUT_IMPROVEMENT"] else None)
    if name in T.item_names:
        return name
    gaps[f"production {name or f'kind {kind}'} as {default}"] += 1
    return default
