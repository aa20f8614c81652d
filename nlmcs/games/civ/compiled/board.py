"""The whole civ state as a few int64 tables (a `Board`), the form the compiled rules change in
place, and what never changes for a map (`MapK`) or a game (`RuleK`), as tables too.

Units and cities are rows in the reference engine's dict order: a removed row is marked dead,
not deleted, so the others keep their order, and new rows go at the end. Tile layers (whose
units stand where, how many, how many military, which city) are kept in step with the rows.
`pack` makes a board from a reference `CivState`; `unpack` gives one back, equal field for
field, which is how the differential tests compare the two engines.

Why so few arrays: numba pays a reference count for every array it takes out of a tuple, which
in the first draft (one array per field) cost more than the rules themselves. The kernels take
the tables as plain arguments; only the entry points take these tuples and unpack them once.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from nlmcs.games.civ import cities as ref_cities
from nlmcs.games.civ.compiled.codes import research0
from nlmcs.games.civ.objects import City, Player, Unit

# --- the board ---------------------------------------------------------------------------------
U_ID, U_OWNER, U_KIND, U_TILE, U_HP, U_VET, U_ACT, U_PROG, U_HOME, U_ALIVE = range(10)
N_UCOLS = 10
(C_ID, C_OWNER, C_TILE, C_SIZE, C_FOOD, C_SHIELDS, C_BUILD, C_CAPITAL, C_FRESH, C_SFOOD,
 C_SSHIELD, C_TRADE, C_UNHAPPY, C_DIRTY, C_FOUNDED, C_ALIVE, C_NWORKED) = range(17)
C_W0 = 17
"""A city's worked tiles are columns C_W0.. (as many as the city radius holds), then one 0/1
column per building: building k is column C_W0 + radius + k."""
PL_RESEARCHING, PL_BULBS, PL_GOLD, PL_BUILT, PL_KILLED, PL_LOST = range(6)
PL_T0 = 6
"""A player's techs are 0/1 columns PL_T0.."""
T_IMP, T_OCC, T_CNT, T_MIL, T_CITY, T_COWN, T_MARK = range(7)
N_TCOLS = 7
"""Per tile: improvement bits, owner + 1 of the units there (0: none), units there, military
units there, the city's row (-1: none), the city's owner (-1: none), the governor's scratch."""
G_TURN, G_NEXT_ID, G_OVER, G_WINNER, G_MAX_TURNS, G_NU, G_NC, G_STAMP = range(8)
N_G = 8
"""G_NU, G_NC: unit and city rows in use; G_STAMP: governor calls so far (T_MARK's epoch)."""

Board = namedtuple("Board", "U C PL T G")

# --- the map -----------------------------------------------------------------------------------
TI_LAND, TI_RIVER, TI_WATER, TI_IRRIGABLE, TI_MINABLE, TI_ROADABLE, TI_TERR = range(7)
MS_WIDTH, MS_HEIGHT, MS_GAP, MS_SACRED, MS_WRAP = range(5)

MapK = namedtuple("MapK", "NB TI RAD OUT MS")
"""NB (tiles, 8) neighbours, N clockwise, -1 off the map; TI (tiles, 7) the TI_ columns; RAD
(tiles, radius) the city radius, centre first, -1 padded; OUT[tile, improvements, centre] the
(food, shield, trade) of `cities.tile_output`; MS the MS_ scalars (gap: no other city within
this Chebyshev distance; wrap: 1 when the east and west edges meet)."""

# --- the rules ---------------------------------------------------------------------------------
(UK_MILITARY, UK_ATTACKS, UK_FORTIFIES, UK_CITIES, UK_SETTLERS, UK_HP, UK_MOVES, UK_FIREPOWER,
 UK_FOOD, UK_SHIELD, UK_POP) = range(11)
UF_ATTACK, UF_DEFENSE = range(2)
IT_TECH, IT_COST = range(2)
TT_MOVE, TT_WORK0 = 0, 1
"""Terrain columns: move cost, then the turns of irrigation, mining and road work."""
PARAMS = ("move_frags", "road_move_frags", "river_move_frags", "river_defense_pct",
          "walls_defense_pct", "granary_keep_pct", "granary_food_ini", "granary_food_inc",
          "food_cost", "barracks_veteran", "corruption_pct", "corruption_per_distance",
          "capital_corruption_cut_pct", "fortified_defense_pct", "content_base",
          "martial_law_max", "free_upkeep", "science_pct", "hp_regen_pct", "change_penalty_pct",
          "max_city_size")
(PR_MOVE_FRAGS, PR_ROAD_FRAGS, PR_RIVER_FRAGS, PR_RIVER_DEF, PR_WALLS_DEF, PR_GRANARY_KEEP,
 PR_GRANARY_INI, PR_GRANARY_INC, PR_FOOD_COST, PR_BARRACKS_VET, PR_CORRUPTION,
 PR_CORRUPTION_DIST, PR_CAPITAL_CUT, PR_FORTIFIED_DEF, PR_CONTENT_BASE, PR_MARTIAL_LAW,
 PR_FREE_UPKEEP, PR_SCIENCE, PR_HP_REGEN, PR_CHANGE_PENALTY, PR_MAX_SIZE) = range(len(PARAMS))
(PR_N_UNITS, PR_RESEARCH0, PR_BARRACKS, PR_GRANARY, PR_WALLS, PR_DEFAULT_BUILD,
 PR_SACRED_CITIZENS, PR_SACRED_END, PR_RAISE_LEVELS) = range(len(PARAMS), len(PARAMS) + 9)
"""After the ruleset's parameters, the game's: unit kinds, the first research code, the
building numbers of barracks, granary and city walls, a new city's build, the variant's rule,
and how many veteran levels `veteran_raise_pct` lists."""

RuleK = namedtuple("RuleK", "UK UF IT TR BU TT TF VP PR")
"""UK (unit kinds, 11) the UK_ columns; UF (unit kinds, 2) attack and defence; IT (items, 2)
tech needed (-1: none) and cost; TR (techs, 1 + most reqs) cost, then the reqs (-1 padded); BU
(buildings,) gold upkeep; TT (terrains, 4); TF (terrains,) defence bonus %; VP (2, veteran
levels) power factor and % chance to rise; PR the PR_ scalars."""

def kept(holder: dict, key, build):
    """`holder[key]`, made by `build()` the first time: the compiled engine's tables are built
    once and kept with what they describe (a map's `MapData.compiled`, a game's `vars`)."""
    hit = holder.get(key)
    if hit is None:
        hit = holder[key] = build()
    return hit


def map_consts(s) -> MapK:
    """`MapK` of `s.map`, built on first use and kept with the map (`MapData.compiled`; maps
    made by `dataclasses.replace` share the dict, hence the sacred terrain in the key)."""
    return kept(s.map.compiled, ("board", s.map.sacred), lambda: _map_consts(s))


def _map_consts(s) -> MapK:
    m = s.map
    terrains = s.tables.ruleset.terrains
    terr = np.asarray(m.terr, dtype=np.int64)
    per_terrain = lambda f: np.array([f(t) for t in terrains], dtype=np.int64)[terr]  # noqa: E731
    TI = np.stack([~np.asarray(m.ocean, dtype=bool), np.asarray(m.riv, dtype=bool),
                   np.asarray(m.water_source, dtype=bool),
                   per_terrain(lambda t: t.irrigation_food != 0),
                   per_terrain(lambda t: t.mining_shield > 0),
                   per_terrain(lambda t: t.road_time > 0), terr], axis=1).astype(np.int64)
    width = max(len(r) for r in m.radius)
    RAD = np.full((m.n, width), -1, dtype=np.int64)
    for t, r in enumerate(m.radius):
        RAD[t, :len(r)] = r
    OUT = np.empty((m.n, 8, 2, 3), dtype=np.int64)
    for t in range(m.n):
        for imp in range(8):
            for centre in (0, 1):
                OUT[t, imp, centre] = ref_cities.tile_output(s, t, bool(centre), imp)
    MS = np.array([m.width, m.height, s.params["citymindist"] - 1, m.sacred, int(m.wrap_x)],
                  dtype=np.int64)
    NB = np.asarray(m.neighbors, dtype=np.int64).reshape(m.n, 8)
    return MapK(NB, TI, RAD, OUT, MS)


def rule_consts(s) -> RuleK:
    """`RuleK` of `s.game`, built once per game."""
    return kept(vars(s.game), "_rule_consts", lambda: _rule_consts(s))


def _rule_consts(s) -> RuleK:
    game = s.game
    T = s.tables
    units, p = T.ruleset.units, T.ruleset.params
    UK = np.array([[T.unit_military[k], T.unit_can_attack[k], T.unit_can_fortify[k],
                    T.unit_cities[k], T.unit_settlers[k], T.unit_hp[k], T.unit_moves[k],
                    u.firepower, u.upkeep_food, T.unit_upkeep_shield[k], u.pop_cost]
                   for k, u in enumerate(units)], dtype=np.int64).reshape(len(units), 11)
    UF = np.array([[u.attack, u.defense] for u in units], dtype=np.float64).reshape(-1, 2)
    IT = np.array([T.item_tech, T.item_costs], dtype=np.int64).T.copy()
    most = max((len(r) for r in T.tech_reqs), default=0)
    TR = np.full((len(T.tech_names), 1 + most), -1, dtype=np.int64)
    for t, reqs in enumerate(T.tech_reqs):
        TR[t, 0] = T.tech_cost[t]
        TR[t, 1:1 + len(reqs)] = reqs
    terrains = T.ruleset.terrains
    TT = np.array([[t.move_cost, t.irrigation_time, t.mining_time, t.road_time]
                   for t in terrains], dtype=np.int64).reshape(len(terrains), 4)
    raise_pct = p["veteran_raise_pct"]
    VP = np.zeros((2, max(len(game.vet_power), len(raise_pct))), dtype=np.float64)
    VP[0, :len(game.vet_power)] = game.vet_power
    VP[1, :len(raise_pct)] = raise_pct
    PR = np.array([p[k] for k in PARAMS] + [
        T.n_units, research0(T), T.barracks, T.granary, T.walls, T.default_build,
        game.sacred_citizens, game.sacred_end, len(raise_pct)], dtype=np.int64)
    return RuleK(
        UK, UF, IT, TR, np.array([b.upkeep for b in T.ruleset.buildings], dtype=np.int64),
        TT, np.asarray(game.terrain_defense, dtype=np.float64), VP, PR)


# --- between a reference state and a board ------------------------------------------------------
def pack(s, *, spare: int = 16) -> Board:
    """The board of reference state `s` (a copy), with room for `spare` more units and cities
    before the kernels compact or the caller grows it (`grown`)."""
    T, m = s.tables, s.map
    units, cities = list(s.units.values()), list(s.cities.values())
    nu, nc = len(units), len(cities)
    U = np.zeros((nu + spare, N_UCOLS), dtype=np.int64)
    if units:
        U[:nu] = np.array([(u.id, u.owner, u.kind, u.tile, u.hp, u.vet, u.activity, u.progress,
                            u.home, 1) for u in units], dtype=np.int64)
    radius = max(len(r) for r in m.radius)
    nb = len(T.building_names)
    b0 = C_W0 + radius
    C = np.zeros((nc + spare, b0 + nb), dtype=np.int64)
    C[:, C_W0:b0] = -1
    if cities:
        C[:nc, :C_W0] = np.array([(c.id, c.owner, c.tile, c.size, c.food, c.shields, c.build,
                                   c.capital, c.fresh, c.surplus_food, c.surplus_shield, c.trade,
                                   c.unhappy, c.dirty, c.founded, 1, len(c.worked))
                                  for c in cities], dtype=np.int64)
        C[:nc, b0:] = _bits([c.buildings for c in cities], nb)
        for i, c in enumerate(cities):
            C[i, C_W0:C_W0 + len(c.worked)] = c.worked
    nt = len(T.tech_names)
    PL = np.empty((len(s.players), PL_T0 + nt), dtype=np.int64)
    PL[:, :PL_T0] = [(p.researching, p.bulbs, p.gold, p.built, p.killed, p.lost)
                     for p in s.players]
    PL[:, PL_T0:] = _bits([p.techs for p in s.players], nt)
    TL = np.zeros((m.n, N_TCOLS), dtype=np.int64)
    TL[:, T_IMP] = np.frombuffer(s.improvements, dtype=np.uint8)
    TL[:, T_OCC] = np.frombuffer(s.occupant, dtype=np.uint8)
    TL[:, T_CITY] = TL[:, T_COWN] = -1
    if units:
        tiles = U[:nu, U_TILE]
        TL[:, T_CNT] = np.bincount(tiles, minlength=m.n)
        TL[:, T_MIL] = np.bincount(tiles, weights=_military(s)[U[:nu, U_KIND]],
                                   minlength=m.n).astype(np.int64)
    if cities:
        TL[C[:nc, C_TILE], T_CITY] = np.arange(nc)
        TL[C[:nc, C_TILE], T_COWN] = C[:nc, C_OWNER]
    G = np.zeros(N_G, dtype=np.int64)
    G[G_TURN], G[G_NEXT_ID], G[G_OVER] = s.turn, s.next_id, s._over
    G[G_WINNER] = -1 if s._winner is None else s._winner
    G[G_MAX_TURNS], G[G_NU], G[G_NC] = s.max_turns, nu, nc
    return Board(U, C, PL, TL, G)


def _bits(masks: list[int], width: int) -> np.ndarray:
    """Bitmasks (Python ints, any width) as rows of 0/1 columns."""
    if width <= 62:
        return (np.array(masks, dtype=np.int64)[:, None] >> np.arange(width)) & 1
    return np.array([[x >> k & 1 for k in range(width)] for x in masks],
                    dtype=np.int64).reshape(len(masks), width)


def _military(s) -> np.ndarray:
    """Per unit kind, 1 for military units (float weights for `np.bincount`)."""
    return kept(vars(s.game), "_military_weights",
                lambda: np.asarray(s.tables.unit_military, dtype=np.float64))


def copy(b: Board) -> Board:
    """A board that shares nothing with `b` (what a roll-out plays on)."""
    return Board(b.U.copy(), b.C.copy(), b.PL.copy(), b.T.copy(), b.G.copy())


def grown(b: Board, units: int | None = None, cities: int | None = None) -> Board:
    """`b` with room for at least `units` unit rows and `cities` city rows (by default twice
    as many as it has, and 16 more: what a turn that ran out of rows gets)."""
    units = 2 * b.U.shape[0] + 16 if units is None else units
    cities = 2 * b.C.shape[0] + 16 if cities is None else cities
    U = np.zeros((max(units, b.U.shape[0]), N_UCOLS), dtype=np.int64)
    U[:b.U.shape[0]] = b.U
    C = np.zeros((max(cities, b.C.shape[0]), b.C.shape[1]), dtype=np.int64)
    C[:b.C.shape[0]] = b.C
    return b._replace(U=U, C=C)


def unpack(b: Board, like):
    """A reference `CivState` holding board `b`; `like` (a state of the same game and map)
    gives the shared parts."""
    return unpack_into(b, like.clone())


def unpack_into(b: Board, s):
    """Reference state `s` (of the board's game and map) made to hold board `b`; returns it."""
    G = b.G
    s.units, s.tile_units, s.cities, s.city_at = {}, {}, {}, {}
    s.improvements = bytearray(b.T[:, T_IMP].astype(np.uint8).tobytes())
    s.occupant = bytearray(b.T[:, T_OCC].astype(np.uint8).tobytes())
    for row in b.U[:G[G_NU]].tolist():
        if row[U_ALIVE]:
            u = Unit(*row[U_ID:U_ALIVE])
            s.units[u.id] = u
            s.tile_units.setdefault(u.tile, []).append(u.id)
    b0 = C_W0 + map_consts(s).RAD.shape[1]
    for row in b.C[:G[G_NC]].tolist():
        if not row[C_ALIVE]:
            continue
        c = City(row[C_ID], row[C_OWNER], row[C_TILE], row[C_SIZE], row[C_BUILD],
                 bool(row[C_CAPITAL]), row[C_FOUNDED])
        c.food, c.shields, c.fresh = row[C_FOOD], row[C_SHIELDS], bool(row[C_FRESH])
        c.worked = tuple(row[C_W0:C_W0 + row[C_NWORKED]])
        c.buildings = sum(1 << k for k, on in enumerate(row[b0:]) if on)
        c.surplus_food, c.surplus_shield = row[C_SFOOD], row[C_SSHIELD]
        c.trade, c.unhappy, c.dirty = row[C_TRADE], row[C_UNHAPPY], bool(row[C_DIRTY])
        s.cities[c.id] = c
        s.city_at[c.tile] = c.id
    s.players = []
    for row in b.PL.tolist():
        p = Player()
        p.researching, p.bulbs, p.gold, p.built, p.killed, p.lost = row[:PL_T0]
        p.techs = sum(1 << t for t, on in enumerate(row[PL_T0:]) if on)
        s.players.append(p)
    s.turn, s.next_id = int(G[G_TURN]), int(G[G_NEXT_ID])
    s._over = bool(G[G_OVER])
    s._winner = None if G[G_WINNER] < 0 else int(G[G_WINNER])
    return s
