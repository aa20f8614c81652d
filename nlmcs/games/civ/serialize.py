"""A civ state as JSON, and back, with every field checked on the way in.

The JSON is self-describing (map rows as terrain letters, names rather than indices) so a state file
can be read by people and by the PNG renderer. `state_from_json` raises `StateFileError` naming the
field and the problem for anything truncated or impossible (a unit at sea, two players' units on one
tile, a city on another city, hit points above the maximum, ...).
"""

from __future__ import annotations

from nlmcs.errors import UserInputError
from nlmcs.games.civ.mapgen import build_map
from nlmcs.games.civ.objects import City, Player, Unit
from nlmcs.games.civ.tables import (
    ACTIVITY_NAMES,
    BUSY,
    FORTIFIED,
    FORTIFYING,
    IMPROVEMENT_BITS,
    IRRIGATING,
    MINING,
    ROADING,
)

FORMAT = "nlmcs-civ-state/1"


class StateFileError(UserInputError):
    """A state JSON that is truncated or describes an impossible state."""


def state_to_json(s) -> dict:
    T, m = s.tables, s.map
    rows = []
    idents = [t.ident for t in T.ruleset.terrains]
    for y in range(m.height):
        rows.append("".join(idents[m.terr[y * m.width + x]] for x in range(m.width)))
    return {
        "format": FORMAT,
        "ruleset": T.ruleset.name,
        "turn": s.turn,
        "max_turns": s.max_turns,
        "next_id": s.next_id,
        "over": s._over,
        "winner": s._winner,
        "map": {
            "width": m.width,
            "height": m.height,
            "terrain": rows,
            "resources": [[t, T.resource_names[r]] for t, r in enumerate(m.res) if r >= 0],
            "rivers": [t for t, r in enumerate(m.riv) if r],
            "improvements": [[t, [n for n, b in IMPROVEMENT_BITS if imp & b]]
                             for t, imp in enumerate(s.improvements) if imp],
            # A variant game's sacred terrain (`variants`); absent in the plain game.
            **({"sacred": T.terrain_names[m.sacred]} if m.sacred >= 0 else {}),
            # A map whose east and west edges meet (FreeCiv's WRAPX); absent on a flat one.
            **({"wrap_x": True} if m.wrap_x else {}),
        },
        "players": [
            {"techs": [T.tech_names[i] for i in range(len(T.tech_names)) if p.techs >> i & 1],
             "researching": T.tech_names[p.researching] if p.researching >= 0 else None,
             "bulbs": p.bulbs, "gold": p.gold, "built": p.built, "killed": p.killed,
             "lost": p.lost}
            for p in s.players
        ],
        "units": [
            {"id": u.id, "owner": u.owner, "type": T.unit_names[u.kind], "tile": u.tile,
             "hp": u.hp, "veteran": u.vet, "activity": ACTIVITY_NAMES[u.activity],
             "progress": u.progress, "home": u.home}
            for u in s.units.values()
        ],
        "cities": [
            {"id": c.id, "owner": c.owner, "tile": c.tile, "size": c.size, "food": c.food,
             "shields": c.shields, "build": T.item_names[c.build],
             "buildings": [b for i, b in enumerate(T.building_names) if c.buildings >> i & 1],
             "capital": c.capital, "fresh": c.fresh, "founded": c.founded,
             "worked": list(c.worked), "surplus_food": c.surplus_food,
             "surplus_shield": c.surplus_shield, "trade": c.trade, "unhappy": c.unhappy,
             "dirty": c.dirty}
            for c in s.cities.values()
        ],
    }


def _get(obj, key, typ, where):
    if not isinstance(obj, dict):
        raise StateFileError(f"{where}: expected an object")
    if key not in obj:
        raise StateFileError(f"{where}: missing {key!r}")
    value = obj[key]
    ok = isinstance(value, typ) and not (isinstance(value, bool) and typ is int)
    if not ok:
        raise StateFileError(f"{where}.{key}: expected {getattr(typ, '__name__', typ)}, "
                             f"got {value!r}")
    return value


def _int(obj, key, where, low=None, high=None):
    v = _get(obj, key, int, where)
    if (low is not None and v < low) or (high is not None and v > high):
        raise StateFileError(f"{where}.{key} = {v} is out of range")
    return v


def _built_map(game, width: int, height: int, terrain: list[int], resource: list[int],
               river: list[bool], sacred: int, wrap_x: bool):
    """`build_map`, memoised on the game: the states of one game share one map (a recorded
    game's turns are read one by one, and building the map is most of a state's reading)."""
    key = (width, height, sacred, wrap_x, tuple(terrain), tuple(resource), tuple(river))
    cache = game.loaded_maps
    if key not in cache:
        if len(cache) > 8:
            cache.clear()
        cache[key] = build_map(game.tables, width, height, terrain, resource, river,
                               sacred=sacred, wrap_x=wrap_x)
    return cache[key]


def state_from_json(game, data: object):
    """Rebuild a state for `game`; the inverse of `state_to_json`."""
    T = game.tables
    if not isinstance(data, dict):
        raise StateFileError("state: expected a JSON object")
    if data.get("format") != FORMAT:
        raise StateFileError(f"state: format is {data.get('format')!r}, expected {FORMAT!r}")
    if _get(data, "ruleset", str, "state") != T.ruleset.name:
        raise StateFileError(f"state: ruleset {data['ruleset']!r} does not match the game's "
                             f"{T.ruleset.name!r}")
    mp = _get(data, "map", dict, "state")
    width = _int(mp, "width", "map", 1)
    height = _int(mp, "height", "map", 1)
    rows = _get(mp, "terrain", list, "map")
    by_ident = {t.ident: i for i, t in enumerate(T.ruleset.terrains)}
    if len(rows) != height:
        raise StateFileError(f"map.terrain has {len(rows)} rows, expected {height}")
    terrain = []
    for y, row in enumerate(rows):
        if not isinstance(row, str) or len(row) != width:
            raise StateFileError(f"map.terrain[{y}] must be a string of {width} letters")
        for ch in row:
            if ch not in by_ident:
                raise StateFileError(f"map.terrain[{y}]: unknown terrain letter {ch!r}")
            terrain.append(by_ident[ch])
    n = width * height
    resource = [-1] * n
    for k, item in enumerate(_get(mp, "resources", list, "map")):
        if (not isinstance(item, list) or len(item) != 2 or not isinstance(item[0], int)
                or not 0 <= item[0] < n or item[1] not in T.resource_names):
            raise StateFileError(f"map.resources[{k}]: expected [tile, resource name]")
        resource[item[0]] = T.resource_names.index(item[1])
    river = [False] * n
    for k, t in enumerate(_get(mp, "rivers", list, "map")):
        if not isinstance(t, int) or not 0 <= t < n:
            raise StateFileError(f"map.rivers[{k}]: tile {t!r} is off the map")
        river[t] = True
    sacred = mp.get("sacred")
    if sacred is not None and (sacred not in T.terrain_names
                               or T.terrain_ocean[T.terrain_names.index(sacred)]):
        raise StateFileError(f"map.sacred: {sacred!r} is not a land terrain")
    wrap_x = mp.get("wrap_x", False)
    if not isinstance(wrap_x, bool):
        raise StateFileError(f"map.wrap_x: expected true or false, got {wrap_x!r}")
    map_data = _built_map(game, width, height, terrain, resource, river,
                          -1 if sacred is None else T.terrain_names.index(sacred), wrap_x)
    s = game.blank_state(map_data)
    bits = dict(IMPROVEMENT_BITS)
    for k, item in enumerate(_get(mp, "improvements", list, "map")):
        if (not isinstance(item, list) or len(item) != 2 or not isinstance(item[0], int)
                or not 0 <= item[0] < n or not isinstance(item[1], list)
                or any(b not in bits for b in item[1])):
            raise StateFileError(f"map.improvements[{k}]: expected [tile, [improvement names]]")
        if map_data.ocean[item[0]]:
            raise StateFileError(f"map.improvements[{k}]: tile {item[0]} is ocean")
        for b in item[1]:
            s.improvements[item[0]] |= bits[b]

    s.turn = _int(data, "turn", "state", 0)
    s.max_turns = _int(data, "max_turns", "state", 1)
    s.next_id = _int(data, "next_id", "state", 1)
    s._over = _get(data, "over", bool, "state")
    winner = data.get("winner")
    players = _get(data, "players", list, "state")
    if len(players) < 2:
        raise StateFileError("state.players: need at least 2 players")
    if winner is not None and (not isinstance(winner, int) or not 0 <= winner < len(players)):
        raise StateFileError(f"state.winner: {winner!r} is not a player")
    s._winner = winner
    s.players = []
    for k, pd in enumerate(players):
        where = f"players[{k}]"
        p = Player()
        for name in _get(pd, "techs", list, where):
            if name not in T.tech_names:
                raise StateFileError(f"{where}.techs: unknown tech {name!r}")
            p.techs |= 1 << T.tech_names.index(name)
        res = pd.get("researching") if isinstance(pd, dict) else None
        if res is not None and res not in T.tech_names:
            raise StateFileError(f"{where}.researching: unknown tech {res!r}")
        p.researching = T.tech_names.index(res) if res is not None else -1
        p.bulbs = _int(pd, "bulbs", where, 0)
        p.gold = _int(pd, "gold", where, 0)
        p.built = _int(pd, "built", where, 0)
        p.killed = _int(pd, "killed", where, 0)
        p.lost = _int(pd, "lost", where, 0)
        s.players.append(p)
    n_players = len(players)

    for k, cd in enumerate(_get(data, "cities", list, "state")):
        where = f"cities[{k}]"
        cid = _int(cd, "id", where, 1, s.next_id - 1)
        tile = _int(cd, "tile", where, 0, n - 1)
        if cid in s.cities:
            raise StateFileError(f"{where}: duplicate city id {cid}")
        if map_data.ocean[tile]:
            raise StateFileError(f"{where}: city on an ocean tile {tile}")
        if tile in s.city_at:
            raise StateFileError(f"{where}: two cities on tile {tile}")
        c = City(cid, _int(cd, "owner", where, 0, n_players - 1), tile,
                 size=_int(cd, "size", where, 1, game.ruleset.params["max_city_size"]))
        c.food = _int(cd, "food", where, 0)
        c.shields = _int(cd, "shields", where, 0)
        build = _get(cd, "build", str, where)
        if build not in T.item_names:
            raise StateFileError(f"{where}.build: unknown item {build!r}")
        c.build = T.item_names.index(build)
        for b in _get(cd, "buildings", list, where):
            if b not in T.building_names:
                raise StateFileError(f"{where}.buildings: unknown building {b!r}")
            c.buildings |= 1 << T.building_names.index(b)
        c.capital = _get(cd, "capital", bool, where)
        c.fresh = _get(cd, "fresh", bool, where)
        c.founded = _int(cd, "founded", where, 0)
        worked = _get(cd, "worked", list, where)
        if not worked or worked[0] != tile or not all(
            isinstance(t, int) and t in map_data.radius[tile] for t in worked
        ) or len(set(worked)) != len(worked):
            raise StateFileError(f"{where}.worked: must start at the city tile, stay in radius "
                                 "and name each tile once")
        c.worked = tuple(worked)
        c.surplus_food = _get(cd, "surplus_food", int, where)
        c.surplus_shield = _int(cd, "surplus_shield", where, 0)
        c.trade = _int(cd, "trade", where, 0)
        c.unhappy = _int(cd, "unhappy", where, 0, c.size)
        c.dirty = _get(cd, "dirty", bool, where)
        s.cities[cid] = c
        s.city_at[tile] = cid

    for k, ud in enumerate(_get(data, "units", list, "state")):
        where = f"units[{k}]"
        uid = _int(ud, "id", where, 1, s.next_id - 1)
        if uid in s.units or uid in s.cities:
            raise StateFileError(f"{where}: duplicate id {uid}")
        kind_name = _get(ud, "type", str, where)
        if kind_name not in T.unit_names:
            raise StateFileError(f"{where}.type: unknown unit type {kind_name!r}")
        kind = T.unit_names.index(kind_name)
        ut = T.ruleset.units[kind]
        owner = _int(ud, "owner", where, 0, n_players - 1)
        tile = _int(ud, "tile", where, 0, n - 1)
        if map_data.ocean[tile]:
            raise StateFileError(f"{where}: land unit on an ocean tile {tile}")
        if s.owner_at(tile) not in (-1, owner):
            raise StateFileError(f"{where}: units of two players on tile {tile}")
        cid = s.city_at.get(tile)
        if cid is not None and s.cities[cid].owner != owner:
            raise StateFileError(f"{where}: unit inside an enemy city on tile {tile}")
        activity = _get(ud, "activity", str, where)
        if activity not in ACTIVITY_NAMES:
            raise StateFileError(f"{where}.activity: unknown activity {activity!r}")
        problem = activity_problem(T, map_data.terr[tile], map_data.riv[tile], kind,
                                   ACTIVITY_NAMES.index(activity))
        if problem:
            raise StateFileError(f"{where}.activity: {activity!r} impossible on tile {tile}: "
                                 f"{problem}")
        home = _get(ud, "home", int, where)
        if home != -1 and home not in s.cities:
            raise StateFileError(f"{where}.home: no city {home}")
        u = Unit(uid, owner, kind, tile, _int(ud, "hp", where, 1, ut.hp),
                 _int(ud, "veteran", where, 0, len(game.ruleset.params["veteran_power_pct"]) - 1),
                 ACTIVITY_NAMES.index(activity), _int(ud, "progress", where, 0), home)
        s.place_unit(u)
    return s


def activity_problem(T, terrain: int, river: bool, kind: int, act: int) -> str:
    """Why a unit of `kind` on a tile of `terrain` (with or without a river) could never be doing
    `act` (empty if it could). These are the unit-type and terrain tests of the legal fortify,
    irrigate, mine and build_road actions; the ones that can change while the work goes on (the
    improvement already there, a city founded on the tile, a neighbour's irrigation mined away)
    are left out, so every reachable state still loads."""
    name = T.unit_names[kind]
    if act in (FORTIFYING, FORTIFIED) and not T.unit_can_fortify[kind]:
        return f"{name} cannot fortify"
    if act not in BUSY:
        return ""
    if not T.unit_settlers[kind]:
        return f"{name} cannot work tiles"
    ter = T.ruleset.terrains[terrain]
    if act == IRRIGATING and ter.irrigation_food == 0:
        return f"{ter.name} cannot be irrigated"
    if act == MINING and ter.mining_shield == 0:
        return f"{ter.name} cannot be mined"
    if act == ROADING and (ter.road_time <= 0 or river):
        return f"no road can be built on {ter.name}{' by a river' if river else ''}"
    return ""
