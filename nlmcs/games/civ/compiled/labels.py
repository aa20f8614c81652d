"""The text labels of a player's agents and their candidate actions on a `Board`, compiled: the
facts `nlmcs.games.civ.labels` (the reference) turns into words, as small integers, which
`board_state` turns into the same word tuples through a cache.

Per agent: its tile with the tile's improvements (`tile * 8 + improvements`, -1 for the
civilization), a bitmask of the situation words, in the reference's word order (`UNIT_FLAGS`,
`CITY_FLAGS`, `CIV_FLAGS`), and a unit's kind. Per candidate: a key of what the action's words
depend on (a move: the destination's terrain and city; an attack: also the best defender's
kind; -1 for a step off the map), 0 where the code alone decides them.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from nlmcs.games.civ import tables as tb
from nlmcs.games.civ.compiled import codes
from nlmcs.games.civ.compiled.board import (
    C_ALIVE,
    C_CAPITAL,
    C_OWNER,
    C_SFOOD,
    C_SIZE,
    C_TILE,
    C_UNHAPPY,
    C_W0,
    G_NC,
    PR_BARRACKS,
    PR_GRANARY,
    PR_WALLS,
    T_CITY,
    T_CNT,
    T_COWN,
    T_IMP,
    T_OCC,
    TI_LAND,
    TI_TERR,
    U_ACT,
    U_HP,
    U_KIND,
    U_OWNER,
    U_TILE,
    U_VET,
    UK_HP,
)
from nlmcs.games.civ.compiled.legal import CITY, CIV
from nlmcs.games.civ.compiled.rules import best_defender
from nlmcs.games.civ.labels import SMALL_CITY_MAX

UNIT_FLAGS = ("city", "capital", "enemy", "friendly", "fortified", "veteran", "wounded",
              "border")
CITY_FLAGS = ("capital", "large", "growing", "starving", "unhappy", "walls", "barracks",
              "granary", "enemy")
"""A city is "small" without "large", and "hungry" without "growing" ("starving" besides)."""
CIV_FLAGS = ("city", "capital", "enemy")
_FORTIFIED = tb.FORTIFIED


@njit(cache=True)
def _near(T, NB, TI, tile, owner):
    """(an enemy unit on a land neighbour, a friendly unit here or on one): `labels._near`."""
    me = owner + 1
    enemy, friendly = False, T[tile, T_CNT] > 1
    for d in range(8):
        nb = NB[tile, d]
        if nb < 0 or not TI[nb, TI_LAND]:
            continue
        o = T[nb, T_OCC]
        if o:
            if o != me:
                enemy = True
            else:
                friendly = True
    return enemy, friendly


@njit(cache=True)
def _border(T, RAD, tile, owner):
    for k in range(RAD.shape[1]):
        t = RAD[tile, k]
        if t >= 0 and T[t, T_COWN] >= 0 and T[t, T_COWN] != owner:
            return True
    return False


@njit(cache=True, inline="always")
def _unit_flags(U, C, T, NB, TI, RAD, UK, u):
    tile, owner = U[u, U_TILE], U[u, U_OWNER]
    flags = 0
    c = T[tile, T_CITY]
    if c >= 0:
        flags |= 1
        if C[c, C_CAPITAL]:
            flags |= 2
    enemy, friendly = _near(T, NB, TI, tile, owner)
    if enemy:
        flags |= 4
    if friendly:
        flags |= 8
    if U[u, U_ACT] == _FORTIFIED:
        flags |= 16
    if U[u, U_VET]:
        flags |= 32
    if U[u, U_HP] < UK[U[u, U_KIND], UK_HP]:
        flags |= 64
    if _border(T, RAD, tile, owner):
        flags |= 128
    return flags


@njit(cache=True)
def _city_flags(C, T, RAD, PR, c):
    flags = 0
    if C[c, C_CAPITAL]:
        flags |= 1
    if C[c, C_SIZE] > SMALL_CITY_MAX:
        flags |= 2
    if C[c, C_SFOOD] > 0:
        flags |= 4
    elif C[c, C_SFOOD] < 0:
        flags |= 8
    if C[c, C_UNHAPPY]:
        flags |= 16
    b0 = C_W0 + RAD.shape[1]
    for bit, building in ((32, PR[PR_WALLS]), (64, PR[PR_BARRACKS]), (128, PR[PR_GRANARY])):
        if building >= 0 and C[c, b0 + building]:
            flags |= bit
    me = C[c, C_OWNER] + 1
    tile = C[c, C_TILE]
    for k in range(RAD.shape[1]):
        t = RAD[tile, k]
        if t >= 0 and T[t, T_OCC] and T[t, T_OCC] != me:
            flags |= 256
            break
    return flags


@njit(cache=True)
def _civ_flags(C, T, G, NB, TI, player):
    flags = 0
    for c in range(G[G_NC]):
        if not C[c, C_ALIVE] or C[c, C_OWNER] != player:
            continue
        flags |= 1
        if C[c, C_CAPITAL]:
            flags |= 2
        if _near(T, NB, TI, C[c, C_TILE], player)[0]:
            flags |= 4
    return flags


@njit(cache=True)
def player_labels(U, C, T, G, NB, TI, RAD, UK, UF, TF, VP, PR, out, offsets, kinds, rows):
    """(agents (n, 3): tile key, flags, unit kind; actions (len(out),): each candidate's key),
    for the agents `legal.player_actions` listed."""
    n = kinds.shape[0]
    agents = np.full((n, 3), -1, np.int64)
    keys = np.zeros(out.shape[0], np.int64)
    n_kinds = UK.shape[0]
    for a in range(n):
        row = rows[a]
        if kinds[a] == CIV:
            agents[a, 1] = _civ_flags(C, T, G, NB, TI, row)
            continue
        if kinds[a] == CITY:
            tile = C[row, C_TILE]
            agents[a, 0] = tile * 8 + T[tile, T_IMP]
            agents[a, 1] = _city_flags(C, T, RAD, PR, row)
            continue
        tile = U[row, U_TILE]
        agents[a, 0] = tile * 8 + T[tile, T_IMP]
        agents[a, 1] = _unit_flags(U, C, T, NB, TI, RAD, UK, row)
        agents[a, 2] = U[row, U_KIND]
        for i in range(offsets[a], offsets[a + 1]):
            code = out[i]
            if code >= codes.FORTIFY:
                continue
            nt = NB[tile, code % 8]
            if nt < 0:
                keys[i] = -1
                continue
            city = 1 if T[nt, T_CITY] >= 0 else 0
            if code < codes.ATTACK0:
                keys[i] = TI[nt, TI_TERR] * 2 + city
            else:
                d = best_defender(U, C, G, T, TI, RAD, UK, UF, TF, VP, PR, nt)
                kind = U[d, U_KIND] if d >= 0 else -1
                keys[i] = (TI[nt, TI_TERR] * (n_kinds + 1) + kind + 1) * 2 + city
    return agents, keys
