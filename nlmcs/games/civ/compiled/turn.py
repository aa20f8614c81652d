"""The end of a turn on a board, compiled: the reference's `cities.end_turn` (unit work and
healing, the city governor, growth, production, research) in the same order, on arrays.

The governor's tile choice is the reference's ranked lists read another way: the first free
tile of a list sorted by a total order is the free tile of the greatest key, so nothing is
sorted here. Arguments follow `rules`' order.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from nlmcs.games.civ import tables as tb
from nlmcs.games.civ.compiled.board import (
    C_ALIVE,
    C_BUILD,
    C_CAPITAL,
    C_DIRTY,
    C_FOOD,
    C_FRESH,
    C_ID,
    C_NWORKED,
    C_OWNER,
    C_SFOOD,
    C_SHIELDS,
    C_SIZE,
    C_SSHIELD,
    C_TILE,
    C_TRADE,
    C_UNHAPPY,
    C_W0,
    G_NC,
    G_NU,
    G_OVER,
    G_STAMP,
    G_TURN,
    IT_COST,
    MS_HEIGHT,
    MS_WIDTH,
    PL_BUILT,
    PL_BULBS,
    PL_GOLD,
    PL_LOST,
    PL_RESEARCHING,
    PL_T0,
    PR_BARRACKS,
    PR_BARRACKS_VET,
    PR_CAPITAL_CUT,
    PR_CONTENT_BASE,
    PR_CORRUPTION,
    PR_CORRUPTION_DIST,
    PR_DEFAULT_BUILD,
    PR_FOOD_COST,
    PR_FREE_UPKEEP,
    PR_GRANARY,
    PR_GRANARY_INC,
    PR_GRANARY_INI,
    PR_GRANARY_KEEP,
    PR_HP_REGEN,
    PR_MARTIAL_LAW,
    PR_MAX_SIZE,
    PR_N_UNITS,
    PR_SCIENCE,
    T_CITY,
    T_IMP,
    T_MARK,
    T_MIL,
    T_OCC,
    TI_TERR,
    TT_WORK0,
    U_ACT,
    U_ALIVE,
    U_HOME,
    U_HP,
    U_KIND,
    U_OWNER,
    U_PROG,
    U_TILE,
    UK_FOOD,
    UK_HP,
    UK_MILITARY,
    UK_POP,
    UK_SHIELD,
)
from nlmcs.games.civ.compiled.legal import cheb
from nlmcs.games.civ.compiled.rules import add_unit, check_over, remove_unit

IRRIGATION, MINE, ROAD = tb.IRRIGATION, tb.MINE, tb.ROAD
IDLE, FORTIFYING, FORTIFIED = tb.IDLE, tb.FORTIFYING, tb.FORTIFIED
IRRIGATING, MINING, ROADING = tb.IRRIGATING, tb.MINING, tb.ROADING


@njit(cache=True)
def _granary(PR, size):
    return PR[PR_GRANARY_INI] + PR[PR_GRANARY_INC] * (size - 1)


@njit(cache=True)
def _finish_work(C, T, RAD, tile, act):
    imp = T[tile, T_IMP]
    if act == IRRIGATING:
        imp = (imp & ~MINE) | IRRIGATION
    elif act == MINING:
        imp = (imp & ~IRRIGATION) | MINE
    else:
        imp = imp | ROAD
    T[tile, T_IMP] = imp
    for k in range(RAD.shape[1]):
        t = RAD[tile, k]
        if t < 0:
            break
        if T[t, T_CITY] >= 0:
            C[T[t, T_CITY], C_DIRTY] = 1


@njit(cache=True)
def units_end_turn(U, C, T, G, NB, TI, RAD, UK, TT, PR):
    """Fortifying units fortify, workers work (interrupted by an enemy next to them), units
    heal: fully in an own city with barracks, a third in one without, else hp_regen_pct."""
    b0 = C_W0 + RAD.shape[1]
    for u in range(G[G_NU]):
        if not U[u, U_ALIVE]:
            continue
        act, tile, kind = U[u, U_ACT], U[u, U_TILE], U[u, U_KIND]
        if act == FORTIFYING:
            U[u, U_ACT] = FORTIFIED
        elif IRRIGATING <= act <= ROADING:
            me = U[u, U_OWNER] + 1
            enemy = False
            for k in range(8):
                nb = NB[tile, k]
                if nb >= 0 and T[nb, T_OCC] != 0 and T[nb, T_OCC] != me:
                    enemy = True
                    break
            if enemy:
                U[u, U_ACT] = IDLE
            else:
                U[u, U_PROG] += 1
                if U[u, U_PROG] >= TT[TI[tile, TI_TERR], TT_WORK0 + act - IRRIGATING]:
                    _finish_work(C, T, RAD, tile, act)
                    U[u, U_ACT] = IDLE
                    U[u, U_PROG] = 0
        hp = UK[kind, UK_HP]
        if U[u, U_HP] < hp:
            city = T[tile, T_CITY]
            if city >= 0 and C[city, C_OWNER] == U[u, U_OWNER]:
                gain = hp if C[city, b0 + PR[PR_BARRACKS]] else max(1, hp // 3)
            else:
                gain = max(1, hp * PR[PR_HP_REGEN] // 100)
            U[u, U_HP] = min(hp, U[u, U_HP] + gain)


@njit(cache=True)
def _corruption_pct(C, MS, PR, c, capital):
    tile = C[c, C_TILE]
    dist = max(MS[MS_WIDTH], MS[MS_HEIGHT]) if capital < 0 else cheb(capital, tile, MS)
    pct = PR[PR_CORRUPTION] + PR[PR_CORRUPTION_DIST] * dist // 100
    if C[c, C_CAPITAL]:
        pct -= pct * PR[PR_CAPITAL_CUT] // 100
    return min(100, pct)


@njit(cache=True, inline="always")
def governor(C, T, G, RAD, OUT, MS, PR, c, capitals):
    """`cities.governor`: the centre, then free tiles one by one, by food while the city would
    not grow, else by score (food 4, shields 3, trade 2); unhappy citizens entertain."""
    centre, size = C[c, C_TILE], C[c, C_SIZE]
    me = C[c, C_OWNER] + 1
    unhappy = max(0, size - PR[PR_CONTENT_BASE] - min(PR[PR_MARTIAL_LAW], T[centre, T_MIL]))
    C[c, C_UNHAPPY] = unhappy
    stamp = G[G_STAMP] + 1
    G[G_STAMP] = stamp
    for o in range(G[G_NC]):  # tiles other cities work are taken
        if o != c and C[o, C_ALIVE]:
            for k in range(C[o, C_NWORKED]):
                T[C[o, C_W0 + k], T_MARK] = stamp
    imp = T[centre, T_IMP]
    f, sh, tr = OUT[centre, imp, 1, 0], OUT[centre, imp, 1, 1], OUT[centre, imp, 1, 2]
    eat = size * PR[PR_FOOD_COST]
    n = 1
    C[c, C_W0] = centre
    for _ in range(size - unhappy):
        by_food = f - eat < 2
        pick, pk1, pk2 = -1, 0, 0
        for k in range(1, RAD.shape[1]):
            t = RAD[centre, k]
            if t < 0:
                break
            if T[t, T_CITY] >= 0 or T[t, T_MARK] == stamp:
                continue
            o = T[t, T_OCC]
            if o != 0 and o != me:
                continue
            ti = T[t, T_IMP]
            food = OUT[t, ti, 0, 0]
            score = food * 4 + OUT[t, ti, 0, 1] * 3 + OUT[t, ti, 0, 2] * 2
            k1, k2 = (food, score) if by_food else (score, food)
            if pick < 0 or k1 > pk1 or (k1 == pk1 and (k2 > pk2 or (k2 == pk2 and t < pick))):
                pick, pk1, pk2 = t, k1, k2
        if pick < 0:
            break  # no free tile left
        T[pick, T_MARK] = stamp
        C[c, C_W0 + n] = pick
        n += 1
        ti = T[pick, T_IMP]
        f, sh, tr = f + OUT[pick, ti, 0, 0], sh + OUT[pick, ti, 0, 1], tr + OUT[pick, ti, 0, 2]
    for k in range(n, C[c, C_NWORKED]):
        C[c, C_W0 + k] = -1
    C[c, C_NWORKED] = n
    C[c, C_SFOOD] = f - size * PR[PR_FOOD_COST]
    C[c, C_SSHIELD] = sh
    C[c, C_TRADE] = tr - tr * _corruption_pct(C, MS, PR, c, capitals[C[c, C_OWNER]]) // 100
    C[c, C_DIRTY] = 0


@njit(cache=True, inline="always")
def _grow(U, C, PL, T, G, RAD, UK, PR, c, surplus):
    C[c, C_FOOD] += surplus
    size = C[c, C_SIZE]
    box = _granary(PR, size)
    food = C[c, C_FOOD]
    if 0 <= food < box:
        return
    keep = PR[PR_GRANARY_KEEP] if C[c, C_W0 + RAD.shape[1] + PR[PR_GRANARY]] else 0
    if food >= box:
        if size < PR[PR_MAX_SIZE]:
            C[c, C_SIZE] = size + 1
            # FreeCiv keeps only what a granary saves: min(stock, new box x savings %)
            C[c, C_FOOD] = min(food, _granary(PR, size + 1) * keep // 100)
            C[c, C_DIRTY] = 1
        else:
            C[c, C_FOOD] = box
        return
    # famine: a settler living off the city starves first, else the city shrinks
    cid = C[c, C_ID]
    for u in range(G[G_NU]):
        if U[u, U_ALIVE] and U[u, U_HOME] == cid and UK[U[u, U_KIND], UK_FOOD]:
            remove_unit(U, T, UK, u)
            PL[U[u, U_OWNER], PL_LOST] += 1
            C[c, C_FOOD] = 0
            return
    if size > 1:
        size -= 1
        C[c, C_SIZE] = size
        C[c, C_DIRTY] = 1
    C[c, C_FOOD] = _granary(PR, size) * keep // 100 if size > 1 else 0


@njit(cache=True, inline="always")
def _produce(U, C, PL, T, G, RAD, UK, IT, PR, c, shields):
    C[c, C_SHIELDS] += shields
    item = C[c, C_BUILD]
    cost = IT[item, IT_COST]
    C[c, C_FRESH] = 0
    if C[c, C_SHIELDS] < cost:
        return
    owner, tile = C[c, C_OWNER], C[c, C_TILE]
    n_units, b0 = PR[PR_N_UNITS], C_W0 + RAD.shape[1]
    if item < n_units:
        pop = UK[item, UK_POP]
        if pop and C[c, C_SIZE] <= pop:
            return  # waits until the city can spare the citizens
        if T[tile, T_OCC] != 0 and T[tile, T_OCC] != owner + 1:
            return
        C[c, C_SHIELDS] -= cost
        vet = 0
        if UK[item, UK_MILITARY] and C[c, b0 + PR[PR_BARRACKS]]:
            vet = PR[PR_BARRACKS_VET]
        add_unit(U, T, G, UK, owner, item, tile, vet, C[c, C_ID])
        PL[owner, PL_BUILT] += 1
        if pop:
            C[c, C_SIZE] -= pop
            C[c, C_DIRTY] = 1
    else:
        C[c, C_SHIELDS] -= cost
        C[c, b0 + item - n_units] = 1
        C[c, C_BUILD] = PR[PR_DEFAULT_BUILD]
    C[c, C_FRESH] = 1


@njit(cache=True)
def cities_end_turn(U, C, PL, T, G, NB, TI, RAD, OUT, MS, UK, IT, TR, BU, TT, PR):
    """`cities.end_turn`: units, then every city (governor, science and gold, growth,
    production), then research."""
    units_end_turn(U, C, T, G, NB, TI, RAD, UK, TT, PR)
    nc, b0 = G[G_NC], C_W0 + RAD.shape[1]
    food_upkeep = np.zeros(nc, np.int64)
    shield_units = np.zeros(nc, np.int64)
    for u in range(G[G_NU]):
        home, kind = U[u, U_HOME], U[u, U_KIND]
        if U[u, U_ALIVE] and home >= 0 and (UK[kind, UK_FOOD] or UK[kind, UK_SHIELD]):
            for c in range(nc):
                if C[c, C_ID] == home and C[c, C_ALIVE]:
                    food_upkeep[c] += UK[kind, UK_FOOD]
                    shield_units[c] += UK[kind, UK_SHIELD]
                    break
    capitals = np.full(PL.shape[0], -1, np.int64)
    for c in range(nc):
        if C[c, C_ALIVE] and C[c, C_CAPITAL] and capitals[C[c, C_OWNER]] < 0:
            capitals[C[c, C_OWNER]] = C[c, C_TILE]
    turn = G[G_TURN]
    for c in range(nc):
        if not C[c, C_ALIVE]:
            continue
        if C[c, C_DIRTY] or (turn + C[c, C_ID]) % 5 == 0:  # now and then: martial law, enemies
            governor(C, T, G, RAD, OUT, MS, PR, c, capitals)
        owner, trade = C[c, C_OWNER], C[c, C_TRADE]
        science = trade * PR[PR_SCIENCE] // 100
        PL[owner, PL_BULBS] += science
        upkeep = 0
        for k in range(BU.shape[0]):
            if C[c, b0 + k]:
                upkeep += BU[k]
        PL[owner, PL_GOLD] = max(0, PL[owner, PL_GOLD] + trade - science - upkeep)
        _grow(U, C, PL, T, G, RAD, UK, PR, c, C[c, C_SFOOD] - food_upkeep[c])
        shields = C[c, C_SSHIELD] - max(0, shield_units[c] - PR[PR_FREE_UPKEEP])
        _produce(U, C, PL, T, G, RAD, UK, IT, PR, c, max(0, shields))
    for p in range(PL.shape[0]):
        t = PL[p, PL_RESEARCHING]
        if t >= 0 and PL[p, PL_BULBS] >= TR[t, 0]:
            PL[p, PL_BULBS] -= TR[t, 0]
            PL[p, PL_T0 + t] = 1
            PL[p, PL_RESEARCHING] = -1


@njit(cache=True)
def end_turn(U, C, PL, T, G, NB, TI, RAD, OUT, MS, UK, IT, TR, BU, TT, PR):
    """`CivState.end_turn`: nothing once the game is over."""
    if G[G_OVER]:
        return
    cities_end_turn(U, C, PL, T, G, NB, TI, RAD, OUT, MS, UK, IT, TR, BU, TT, PR)
    G[G_TURN] += 1
    check_over(U, C, PL, G, TI, MS, PR)
