"""Every agent's legal actions on a `Board`, compiled: the same actions in the same order as
`nlmcs.games.civ.legal.agents_with_actions` (the reference), as codes (`codes`).

`player_actions` writes, for one player, the codes of its agents' actions into one flat array
with an offset per agent: the civilization first, then its cities, then its idle units, each in
the reference's order.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from nlmcs.games.civ import tables as tb
from nlmcs.games.civ.compiled import codes
from nlmcs.games.civ.compiled.board import (
    C_ALIVE,
    C_OWNER,
    C_W0,
    G_NC,
    G_NU,
    IT_TECH,
    MS_GAP,
    MS_HEIGHT,
    MS_WIDTH,
    MS_WRAP,
    PL_T0,
    PR_N_UNITS,
    PR_RESEARCH0,
    T_CITY,
    T_COWN,
    T_IMP,
    T_MIL,
    T_OCC,
    TI_IRRIGABLE,
    TI_LAND,
    TI_MINABLE,
    TI_RIVER,
    TI_ROADABLE,
    TI_WATER,
    U_ACT,
    U_ALIVE,
    U_ID,
    U_KIND,
    U_OWNER,
    U_TILE,
    UK_ATTACKS,
    UK_CITIES,
    UK_FORTIFIES,
    UK_MILITARY,
    UK_SETTLERS,
    Board,
    map_consts,
    pack,
    rule_consts,
)

_IRRIGATION, _MINE, _ROAD = tb.IRRIGATION, tb.MINE, tb.ROAD
_FORTIFYING, _FORTIFIED = tb.FORTIFYING, tb.FORTIFIED
_BUSY_LOW, _BUSY_HIGH = min(tb.BUSY), max(tb.BUSY)
assert set(range(_BUSY_LOW, _BUSY_HIGH + 1)) == set(tb.BUSY)
CIV, CITY, UNIT = 0, 1, 2
"""Agent kinds in `player_actions`' answer."""


@njit(cache=True)
def enemy_zoc(tile, owner, NB, TI, T):
    """A tile next to an enemy military unit (units stand on land only)."""
    me = owner + 1
    for d in range(8):
        nb = NB[tile, d]
        if (nb >= 0 and TI[nb, TI_LAND] and T[nb, T_OCC] != 0 and T[nb, T_OCC] != me
                and T[nb, T_MIL] > 0):
            return True
    return False


@njit(cache=True)
def x_apart(x1, x2, MS):
    """Columns between x1 and x2, the short way round on a map that wraps (`MapData.apart`)."""
    d = abs(x1 - x2)
    if MS[MS_WRAP] and 2 * d > MS[MS_WIDTH]:
        d = MS[MS_WIDTH] - d
    return d


@njit(cache=True)
def column(x, MS):
    """Column x on the map: round the seam of a map that wraps, -1 past a flat map's edge."""
    w = MS[MS_WIDTH]
    if MS[MS_WRAP]:
        return x % w
    return x if 0 <= x < w else -1


@njit(cache=True)
def cheb(a, b, MS):
    """Chebyshev distance between tiles a and b (`MapData.dist`)."""
    w = MS[MS_WIDTH]
    return max(x_apart(a % w, b % w, MS), abs(a // w - b // w))


@njit(cache=True)
def can_found_city(tile, T, TI, MS):
    """No city within the gap, on land (`legal.can_found_city`)."""
    if not TI[tile, TI_LAND]:
        return False
    w, gap = MS[MS_WIDTH], MS[MS_GAP]
    x, y = tile % w, tile // w
    for yy in range(max(0, y - gap), min(MS[MS_HEIGHT], y + gap + 1)):
        for dx in range(-gap, gap + 1):
            xx = column(x + dx, MS)
            if xx >= 0 and T[yy * w + xx, T_CITY] >= 0:
                return False
    return True


@njit(cache=True)
def can_work(tile, code, T, NB, TI):
    """An irrigate, mine or road order's test on `tile` (`legal.can_irrigate`, ...)."""
    imp = T[tile, T_IMP]
    if T[tile, T_CITY] >= 0:
        return False
    if code == codes.IRRIGATE:
        if not TI[tile, TI_IRRIGABLE] or imp & _IRRIGATION:
            return False
        if TI[tile, TI_WATER]:
            return True
        for d in range(0, 8, 2):  # the cardinal directions
            nb = NB[tile, d]
            if nb >= 0 and T[nb, T_IMP] & _IRRIGATION:
                return True
        return False
    if code == codes.MINE:
        return TI[tile, TI_MINABLE] != 0 and not imp & _MINE
    return TI[tile, TI_ROADABLE] != 0 and not imp & _ROAD and not TI[tile, TI_RIVER]


@njit(cache=True, inline="always")
def unit_actions(out, n, kind, tile, owner, activity, T, NB, TI, MS, UK):
    me = owner + 1
    is_military = UK[kind, UK_MILITARY] != 0
    contested = False
    for d in range(8):
        nb = NB[tile, d]
        if nb >= 0 and TI[nb, TI_LAND] and T[nb, T_OCC] != 0 and T[nb, T_OCC] != me:
            contested = True
            break
    if not contested and not is_military:
        for d in range(8):
            nb = NB[tile, d]
            if nb >= 0 and TI[nb, TI_LAND] and T[nb, T_COWN] >= 0:
                contested = True
                break
    start = n
    if not contested:
        for d in range(8):
            nb = NB[tile, d]
            if nb >= 0 and TI[nb, TI_LAND]:
                out[n] = codes.MOVE0 + d
                n += 1
    else:
        enemy_seen = False
        can_attack = UK[kind, UK_ATTACKS] != 0
        for d in range(8):
            nb = NB[tile, d]
            if nb < 0 or not TI[nb, TI_LAND]:
                continue
            enemy = T[nb, T_OCC] != 0 and T[nb, T_OCC] != me
            if is_military:
                if enemy:
                    enemy_seen = True
                    if can_attack:
                        out[n] = codes.ATTACK0 + d
                        n += 1
                else:
                    out[n] = codes.MOVE0 + d
                    n += 1
            else:
                if enemy:
                    enemy_seen = True
                    continue
                if T[nb, T_COWN] >= 0 and T[nb, T_COWN] != owner:
                    continue
                out[n] = codes.MOVE0 + d
                n += 1
        if enemy_seen and T[tile, T_CITY] < 0 and enemy_zoc(tile, owner, NB, TI, T):
            kept = start
            for i in range(start, n):
                code = out[i]
                if code < codes.ATTACK0:  # a move: allowed into a city, onto our own units,
                    dst = NB[tile, code - codes.MOVE0]  # or out of every enemy zone
                    if not (T[dst, T_CITY] >= 0 or T[dst, T_OCC] == me
                            or not enemy_zoc(dst, owner, NB, TI, T)):
                        continue
                out[kept] = code
                kept += 1
            n = kept
    if UK[kind, UK_FORTIFIES] and activity != _FORTIFIED and activity != _FORTIFYING:
        out[n] = codes.FORTIFY
        n += 1
    if UK[kind, UK_CITIES] and can_found_city(tile, T, TI, MS):
        out[n] = codes.BUILD_CITY
        n += 1
    if UK[kind, UK_SETTLERS]:
        for code in (codes.IRRIGATE, codes.MINE, codes.BUILD_ROAD):
            if can_work(tile, code, T, NB, TI):
                out[n] = code
                n += 1
    out[n] = codes.WAIT
    return n + 1


@njit(cache=True)
def researchable(PL, TR, player, t):
    if PL[player, PL_T0 + t]:
        return False
    for k in range(1, TR.shape[1]):
        r = TR[t, k]
        if r >= 0 and not PL[player, PL_T0 + r]:
            return False
    return True


@njit(cache=True)
def buildable(C, PL, IT, n_units, b0, c, item):
    """Item `item` in city row `c`: its tech known, not a building the city has."""
    tech = IT[item, IT_TECH]
    if tech >= 0 and not PL[C[c, C_OWNER], PL_T0 + tech]:
        return False
    return item < n_units or not C[c, b0 + item - n_units]


@njit(cache=True)
def player_actions(U, C, PL, T, G, NB, TI, RAD, MS, UK, IT, TR, PR, player):
    """(codes, offsets, kinds, rows): agent a is (kinds[a], rows[a]) (CIV and the player, or
    CITY or UNIT and its row), its actions codes[offsets[a]:offsets[a + 1]]."""
    nc, nu = G[G_NC], G[G_NU]
    n_items, n_techs = IT.shape[0], TR.shape[0]
    n_units, b0 = PR[PR_N_UNITS], C_W0 + RAD.shape[1]
    out = np.empty(n_techs + 1 + nc * n_items + nu * 22, np.int64)
    offsets = np.empty(2 + nc + nu, np.int64)
    kinds = np.empty(1 + nc + nu, np.int64)
    rows = np.empty(1 + nc + nu, np.int64)
    n = 0
    for t in range(n_techs):
        if researchable(PL, TR, player, t):
            out[n] = PR[PR_RESEARCH0] + t
            n += 1
    if n == 0:
        out[0] = codes.WAIT
        n = 1
    offsets[0], offsets[1], kinds[0], rows[0] = 0, n, CIV, player
    a = 1
    for c in range(nc):
        if not C[c, C_ALIVE] or C[c, C_OWNER] != player:
            continue
        for i in range(n_items):
            if buildable(C, PL, IT, n_units, b0, c, i):
                out[n] = codes.BUILD0 + i
                n += 1
        kinds[a], rows[a] = CITY, c
        a += 1
        offsets[a] = n
    for u in range(nu):
        if (not U[u, U_ALIVE] or U[u, U_OWNER] != player
                or _BUSY_LOW <= U[u, U_ACT] <= _BUSY_HIGH):
            continue
        n = unit_actions(out, n, U[u, U_KIND], U[u, U_TILE], player, U[u, U_ACT], T, NB, TI,
                         MS, UK)
        kinds[a], rows[a] = UNIT, u
        a += 1
        offsets[a] = n
    return out[:n], offsets[:a + 1], kinds[:a], rows[:a]


def actions_of(b: Board, mk, rk, player: int):
    """`player_actions` of board `b`."""
    return player_actions(b.U, b.C, b.PL, b.T, b.G, mk.NB, mk.TI, mk.RAD, mk.MS, rk.UK, rk.IT,
                          rk.TR, rk.PR, player)


def agents_with_actions(s, player: int) -> list[tuple[str, list]]:
    """`legal.agents_with_actions(s, player)` computed by the compiled kernel on `s` packed
    into a board (the differential tests' and the benchmark's entry point)."""
    b = pack(s)
    return decode(s, b, player, *actions_of(b, map_consts(s), rule_consts(s), player))


def decode(s, b: Board, player: int, out, offsets, kinds, rows) -> list[tuple[str, list]]:
    """The kernel's codes as (agent id, [Action, ...]) pairs."""
    table = codes.action_table(s.tables)
    agents = []
    for a, (kind, row) in enumerate(zip(kinds.tolist(), rows.tolist(), strict=True)):
        if kind == CIV:
            agent = f"civ:{player}"
        elif kind == CITY:
            agent = f"city:{int(b.C[row, 0])}"
        else:
            agent = f"unit:{int(b.U[row, U_ID])}"
        agents.append((agent, [table[c] for c in out[offsets[a]:offsets[a + 1]].tolist()]))
    return agents
