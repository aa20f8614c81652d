"""Applying one agent's action to a board, compiled: the reference's `rules.py` and `combat.py`
on arrays, the same checks in the same order and the same draws from the same generator.

Each handler returns False without changing anything when its action is not legal now (an
earlier action of the turn may have made it so), as the reference's handlers do. Arguments
follow one order: the board's tables (U, C, PL, T, G), the map's (NB, TI, RAD, OUT, MS), the
rules' (UK, UF, IT, TR, BU, TT, TF, VP, PR), each function taking the ones it reads.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from nlmcs.games.civ import tables as tb
from nlmcs.games.civ.compiled import codes
from nlmcs.games.civ.compiled.board import (
    C_ALIVE,
    C_BUILD,
    C_CAPITAL,
    C_DIRTY,
    C_FOUNDED,
    C_FRESH,
    C_ID,
    C_NWORKED,
    C_OWNER,
    C_SHIELDS,
    C_SIZE,
    C_TILE,
    C_W0,
    G_MAX_TURNS,
    G_NC,
    G_NEXT_ID,
    G_NU,
    G_OVER,
    G_TURN,
    G_WINNER,
    MS_SACRED,
    PL_BUILT,
    PL_KILLED,
    PL_LOST,
    PL_RESEARCHING,
    PL_T0,
    PR_CHANGE_PENALTY,
    PR_DEFAULT_BUILD,
    PR_FORTIFIED_DEF,
    PR_MOVE_FRAGS,
    PR_N_UNITS,
    PR_RAISE_LEVELS,
    PR_RESEARCH0,
    PR_RIVER_DEF,
    PR_RIVER_FRAGS,
    PR_ROAD_FRAGS,
    PR_SACRED_CITIZENS,
    PR_SACRED_END,
    PR_WALLS,
    PR_WALLS_DEF,
    T_CITY,
    T_CNT,
    T_COWN,
    T_IMP,
    T_MIL,
    T_OCC,
    TI_LAND,
    TI_RIVER,
    TI_TERR,
    TT_MOVE,
    U_ACT,
    U_ALIVE,
    U_HOME,
    U_HP,
    U_ID,
    U_KIND,
    U_OWNER,
    U_PROG,
    U_TILE,
    U_VET,
    UF_ATTACK,
    UF_DEFENSE,
    UK_ATTACKS,
    UK_CITIES,
    UK_FIREPOWER,
    UK_FORTIFIES,
    UK_HP,
    UK_MILITARY,
    UK_MOVES,
    UK_SETTLERS,
)
from nlmcs.games.civ.compiled.legal import (
    buildable,
    can_found_city,
    can_work,
    enemy_zoc,
    researchable,
)
from nlmcs.games.civ.variants import END_POINTS

ROAD = tb.ROAD
IDLE, FORTIFYING, FORTIFIED = tb.IDLE, tb.FORTIFYING, tb.FORTIFIED
IRRIGATING, ROADING = tb.IRRIGATING, tb.ROADING
# an order's activity is IRRIGATING + (code - IRRIGATE)
assert (tb.MINING, ROADING) == (IRRIGATING + 1, IRRIGATING + 2)
assert (codes.MINE, codes.BUILD_ROAD) == (codes.IRRIGATE + 1, codes.IRRIGATE + 2)


# --- the board's rows --------------------------------------------------------------------------
@njit(cache=True)
def add_unit(U, T, G, UK, owner, kind, tile, vet, home):
    u = G[G_NU]
    if u >= U.shape[0]:
        raise IndexError("compiled civ board: no room for a unit")
    G[G_NU] = u + 1
    uid = G[G_NEXT_ID]
    G[G_NEXT_ID] = uid + 1
    U[u, U_ID], U[u, U_OWNER], U[u, U_KIND], U[u, U_TILE] = uid, owner, kind, tile
    U[u, U_HP], U[u, U_VET], U[u, U_ACT], U[u, U_PROG] = UK[kind, UK_HP], vet, IDLE, 0
    U[u, U_HOME], U[u, U_ALIVE] = home, 1
    T[tile, T_CNT] += 1
    T[tile, T_MIL] += UK[kind, UK_MILITARY] != 0
    T[tile, T_OCC] = owner + 1
    return u


@njit(cache=True)
def remove_unit(U, T, UK, u):
    tile = U[u, U_TILE]
    U[u, U_ALIVE] = 0
    T[tile, T_CNT] -= 1
    T[tile, T_MIL] -= UK[U[u, U_KIND], UK_MILITARY] != 0
    if T[tile, T_CNT] == 0:
        T[tile, T_OCC] = 0


@njit(cache=True)
def move_unit(U, T, UK, u, tile):
    remove_unit(U, T, UK, u)
    U[u, U_TILE], U[u, U_ALIVE] = tile, 1
    T[tile, T_CNT] += 1
    T[tile, T_MIL] += UK[U[u, U_KIND], UK_MILITARY] != 0
    T[tile, T_OCC] = U[u, U_OWNER] + 1


@njit(cache=True)
def score(C, PL, G, TI, MS, PR, player):
    """`features.score`: citizens, 2 per tech, a tenth per unit built, a third per kill."""
    citizens = 0
    for c in range(G[G_NC]):
        if C[c, C_ALIVE] and C[c, C_OWNER] == player:
            citizens += C[c, C_SIZE]
    techs = 0
    for t in range(PL_T0, PL.shape[1]):
        techs += PL[player, t]
    total = citizens + 2 * techs + PL[player, PL_BUILT] / 10 + PL[player, PL_KILLED] / 3
    if G[G_OVER] and PR[PR_SACRED_END]:
        on = 0
        for c in range(G[G_NC]):
            if (C[c, C_ALIVE] and C[c, C_OWNER] == player
                    and TI[C[c, C_TILE], TI_TERR] == MS[MS_SACRED]):
                on += 1
        total += END_POINTS * on
    return total


@njit(cache=True)
def check_over(U, C, PL, G, TI, MS, PR):
    """Victory by elimination; at the turn limit the higher score wins (-1 on a tie)."""
    n = PL.shape[0]
    present = np.zeros(n, np.bool_)
    for c in range(G[G_NC]):
        if C[c, C_ALIVE]:
            present[C[c, C_OWNER]] = True
    for u in range(G[G_NU]):
        if U[u, U_ALIVE]:
            present[U[u, U_OWNER]] = True
    living, first = 0, -1
    for p in range(n):
        if present[p]:
            living += 1
            if first < 0:
                first = p
    if living <= 1:
        G[G_OVER], G[G_WINNER] = 1, first
    elif G[G_TURN] >= G[G_MAX_TURNS]:
        G[G_OVER] = 1
        best, winner, ties = -np.inf, -1, 0
        for p in range(n):
            v = score(C, PL, G, TI, MS, PR, p)
            if v > best:
                best, winner, ties = v, p, 1
            elif v == best:
                ties += 1
        G[G_WINNER] = winner if ties == 1 else -1


# --- combat ------------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def defense_strength(U, C, T, TI, RAD, UK, UF, TF, VP, PR, u):
    """`combat.defense_strength`, every bonus multiplied in the reference's order."""
    kind, tile = U[u, U_KIND], U[u, U_TILE]
    d = UF[kind, UF_DEFENSE] * VP[0, U[u, U_VET]]
    d *= 1 + TF[TI[tile, TI_TERR]] / 100
    if TI[tile, TI_RIVER]:
        d *= 1 + PR[PR_RIVER_DEF] / 100
    city = T[tile, T_CITY]
    if UK[kind, UK_FORTIFIES] and (U[u, U_ACT] == FORTIFIED or city >= 0):
        d *= 1 + PR[PR_FORTIFIED_DEF] / 100
    if city >= 0 and C[city, C_W0 + RAD.shape[1] + PR[PR_WALLS]]:
        d *= 1 + PR[PR_WALLS_DEF] / 100
    return d


@njit(cache=True, inline="always")
def best_defender(U, C, G, T, TI, RAD, UK, UF, TF, VP, PR, tile):
    """The best defence rating (strength x hp x firepower), the lower id on a tie."""
    best, best_v, best_id = -1, 0.0, 0
    for u in range(G[G_NU]):
        if not U[u, U_ALIVE] or U[u, U_TILE] != tile:
            continue
        v = (defense_strength(U, C, T, TI, RAD, UK, UF, TF, VP, PR, u) * U[u, U_HP]
             * UK[U[u, U_KIND], UK_FIREPOWER])
        if best < 0 or v > best_v or (v == best_v and U[u, U_ID] < best_id):
            best, best_v, best_id = u, v, U[u, U_ID]
    return best


@njit(cache=True)
def combat_rounds(rng, p_attacker, att_hp, def_hp, att_fp, def_fp):
    """`combat.combat_rounds`: the same draws, a batch of att_hp + def_hp at a time."""
    while att_hp > 0 and def_hp > 0:
        draws = rng.random(att_hp + def_hp)
        for r in draws:
            if r < p_attacker:
                def_hp -= att_fp
            else:
                att_hp -= def_fp
            if att_hp <= 0 or def_hp <= 0:
                break
    return max(att_hp, 0), max(def_hp, 0)


@njit(cache=True)
def _veteran(U, VP, PR, u, rng):
    vet = U[u, U_VET]
    if vet + 1 < PR[PR_RAISE_LEVELS] and rng.random() * 100 < VP[1, vet]:
        U[u, U_VET] = vet + 1


@njit(cache=True, inline="always")
def do_attack(U, C, PL, T, G, NB, TI, RAD, MS, UK, UF, TF, VP, PR, u, d, rng):
    kind, owner = U[u, U_KIND], U[u, U_OWNER]
    if not UK[kind, UK_ATTACKS]:
        return False
    nt = NB[U[u, U_TILE], d]
    if nt < 0 or not TI[nt, TI_LAND] or T[nt, T_CNT] == 0 or T[nt, T_OCC] == owner + 1:
        return False
    defender = best_defender(U, C, G, T, TI, RAD, UK, UF, TF, VP, PR, nt)
    a = UF[kind, UF_ATTACK] * VP[0, U[u, U_VET]]
    dd = defense_strength(U, C, T, TI, RAD, UK, UF, TF, VP, PR, defender)
    downer = U[defender, U_OWNER]
    att_hp, def_hp = combat_rounds(rng, a / (a + dd), U[u, U_HP], U[defender, U_HP],
                                   UK[kind, UK_FIREPOWER], UK[U[defender, U_KIND], UK_FIREPOWER])
    U[u, U_ACT] = IDLE
    if def_hp <= 0:
        U[u, U_HP] = att_hp
        city = T[nt, T_CITY]
        dead = 0
        if city >= 0:
            remove_unit(U, T, UK, defender)
            dead = 1
        else:  # killstack
            for v in range(G[G_NU]):
                if U[v, U_ALIVE] and U[v, U_TILE] == nt:
                    remove_unit(U, T, UK, v)
                    dead += 1
        PL[owner, PL_KILLED] += dead
        PL[downer, PL_LOST] += dead
        if city >= 0 and C[city, C_SIZE] > 1 and not C[city, C_W0 + RAD.shape[1] + PR[PR_WALLS]]:
            C[city, C_SIZE] -= 1
            C[city, C_DIRTY] = 1
        _veteran(U, VP, PR, u, rng)
    else:
        U[defender, U_HP] = def_hp
        remove_unit(U, T, UK, u)
        PL[downer, PL_KILLED] += 1
        PL[owner, PL_LOST] += 1
        _veteran(U, VP, PR, defender, rng)
    check_over(U, C, PL, G, TI, MS, PR)
    return True


# --- moving ------------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def do_move(U, C, PL, T, G, NB, TI, RAD, MS, UK, IT, TT, PR, u, d):
    """`rules.do_move`: along one direction while move points last, stopping next to an enemy
    or in a city, capturing an empty enemy city, within the zones of control."""
    kind, owner = U[u, U_KIND], U[u, U_OWNER]
    me = owner + 1
    moves = UK[kind, UK_MOVES]
    military = UK[kind, UK_MILITARY] != 0
    here = U[u, U_TILE]
    first = NB[here, d]
    if (first >= 0 and T[here, T_CITY] < 0 and enemy_zoc(here, owner, NB, TI, T)
            and not (T[first, T_CITY] >= 0 or T[first, T_OCC] == me
                     or not enemy_zoc(first, owner, NB, TI, T))):
        return False
    steps = 0
    while moves > 0:
        nt = NB[here, d]
        if nt < 0 or not TI[nt, TI_LAND]:
            break
        o = T[nt, T_OCC]
        if o != 0 and o != me:
            break
        city = T[nt, T_CITY]
        enemy_city = city >= 0 and C[city, C_OWNER] != owner
        if enemy_city and not military:
            break
        # a city centre has a free road, except on a river (no Bridge Building)
        if (((T[here, T_IMP] & ROAD) != 0 or (T[here, T_CITY] >= 0 and not TI[here, TI_RIVER]))
                and ((T[nt, T_IMP] & ROAD) != 0 or (city >= 0 and not TI[nt, TI_RIVER]))):
            cost = PR[PR_ROAD_FRAGS]
        elif TI[here, TI_RIVER] and TI[nt, TI_RIVER] and d % 2 == 0:
            cost = PR[PR_RIVER_FRAGS]
        else:
            cost = TT[TI[nt, TI_TERR], TT_MOVE] * PR[PR_MOVE_FRAGS]
        move_unit(U, T, UK, u, nt)
        here = nt
        steps += 1
        moves -= cost
        if enemy_city:
            capture_city(U, C, PL, T, G, TI, RAD, MS, IT, PR, city, owner)
            break
        if city >= 0:
            break
        for k in range(8):  # stop next to an enemy
            nb = NB[nt, k]
            if nb >= 0 and TI[nb, TI_LAND] and T[nb, T_OCC] != 0 and T[nb, T_OCC] != me:
                moves = 0
                break
    if steps == 0:
        return False
    U[u, U_ACT] = IDLE
    return True


# --- cities founded and changing hands ---------------------------------------------------------
@njit(cache=True)
def found_city(C, T, G, TI, RAD, MS, PR, owner, tile):
    c = G[G_NC]
    if c >= C.shape[0]:
        raise IndexError("compiled civ board: no room for a city")
    capital = 1
    for o in range(c):
        if C[o, C_ALIVE] and C[o, C_OWNER] == owner and C[o, C_CAPITAL]:
            capital = 0
    size = 1
    if PR[PR_SACRED_CITIZENS] and TI[tile, TI_TERR] == MS[MS_SACRED]:
        size += PR[PR_SACRED_CITIZENS]
    G[G_NC] = c + 1
    cid = G[G_NEXT_ID]
    G[G_NEXT_ID] = cid + 1
    C[c, :] = 0
    C[c, C_W0:C_W0 + RAD.shape[1]] = -1
    C[c, C_ID], C[c, C_OWNER], C[c, C_TILE], C[c, C_SIZE] = cid, owner, tile, size
    C[c, C_BUILD], C[c, C_CAPITAL], C[c, C_FRESH] = PR[PR_DEFAULT_BUILD], capital, 1
    C[c, C_FOUNDED], C[c, C_ALIVE], C[c, C_NWORKED], C[c, C_W0] = G[G_TURN], 1, 1, tile
    T[tile, T_CITY], T[tile, T_COWN] = c, owner
    for o in range(c + 1):
        if C[o, C_ALIVE]:
            C[o, C_DIRTY] = 1
    return c


@njit(cache=True)
def _reassign_capital(C, G, owner):
    first = -1
    for c in range(G[G_NC]):
        if C[c, C_ALIVE] and C[c, C_OWNER] == owner:
            if C[c, C_CAPITAL]:
                return
            if first < 0 or C[c, C_ID] < C[first, C_ID]:
                first = c
    if first >= 0:
        C[first, C_CAPITAL] = 1


@njit(cache=True)
def _unhome(U, G, city_id):
    for u in range(G[G_NU]):
        if U[u, U_ALIVE] and U[u, U_HOME] == city_id:
            U[u, U_HOME] = -1


@njit(cache=True)
def capture_city(U, C, PL, T, G, TI, RAD, MS, IT, PR, c, new_owner):
    """FreeCiv conquest: the city shrinks by one (destroyed at size 0), then changes hands."""
    old = C[c, C_OWNER]
    C[c, C_SIZE] -= 1
    tile = C[c, C_TILE]
    if C[c, C_SIZE] <= 0:
        C[c, C_ALIVE] = 0
        T[tile, T_CITY], T[tile, T_COWN] = -1, -1
        _unhome(U, G, C[c, C_ID])
        for o in range(G[G_NC]):
            if C[o, C_ALIVE]:
                C[o, C_DIRTY] = 1
    else:
        C[c, C_OWNER], C[c, C_CAPITAL], C[c, C_FRESH] = new_owner, 0, 1
        C[c, C_SHIELDS], C[c, C_DIRTY] = 0, 1
        T[tile, T_COWN] = new_owner
        build = C[c, C_BUILD]
        if build >= 0 and not buildable(C, PL, IT, PR[PR_N_UNITS], C_W0 + RAD.shape[1], c,
                                        build):
            C[c, C_BUILD] = 0
        _unhome(U, G, C[c, C_ID])
    _reassign_capital(C, G, old)
    check_over(U, C, PL, G, TI, MS, PR)


# --- the dispatcher ----------------------------------------------------------------------------
@njit(cache=True, inline="always")
def apply_unit(U, C, PL, T, G, NB, TI, RAD, MS, UK, UF, IT, TT, TF, VP, PR, u, code, rng):
    """`rules.apply_action` for the unit in row `u` (a dead row refuses everything)."""
    if not U[u, U_ALIVE]:
        return False
    kind, act = U[u, U_KIND], U[u, U_ACT]
    if IRRIGATING <= act <= ROADING:
        return code == codes.WAIT  # keeps working
    if code < codes.ATTACK0:
        return do_move(U, C, PL, T, G, NB, TI, RAD, MS, UK, IT, TT, PR, u, code - codes.MOVE0)
    if code < codes.FORTIFY:
        return do_attack(U, C, PL, T, G, NB, TI, RAD, MS, UK, UF, TF, VP, PR, u,
                         code - codes.ATTACK0, rng)
    if code == codes.FORTIFY:
        if not UK[kind, UK_FORTIFIES] or act in (FORTIFIED, FORTIFYING):
            return False
        U[u, U_ACT] = FORTIFYING
        return True
    if code == codes.WAIT:
        return True
    tile = U[u, U_TILE]
    if code == codes.BUILD_CITY:
        if not UK[kind, UK_CITIES] or not can_found_city(tile, T, TI, MS):
            return False
        owner = U[u, U_OWNER]
        remove_unit(U, T, UK, u)
        found_city(C, T, G, TI, RAD, MS, PR, owner, tile)
        return True
    if codes.IRRIGATE <= code <= codes.BUILD_ROAD:
        if not UK[kind, UK_SETTLERS] or not can_work(tile, code, T, NB, TI):
            return False
        U[u, U_ACT] = IRRIGATING + code - codes.IRRIGATE
        U[u, U_PROG] = 0
        return True
    return False


@njit(cache=True)
def apply_city(C, PL, RAD, IT, PR, c, code):
    """`rules.set_production` for the city in row `c`."""
    item = code - codes.BUILD0
    n_units = PR[PR_N_UNITS]
    if (not C[c, C_ALIVE] or item < 0 or item >= IT.shape[0]
            or not buildable(C, PL, IT, n_units, C_W0 + RAD.shape[1], c, item)):
        return False
    build = C[c, C_BUILD]
    if item != build:
        if not C[c, C_FRESH] and (item < n_units) != (build < n_units):
            C[c, C_SHIELDS] = C[c, C_SHIELDS] * (100 - PR[PR_CHANGE_PENALTY]) // 100
        C[c, C_BUILD] = item
    return True


@njit(cache=True)
def apply_civ(PL, TR, PR, player, code):
    """`rules.set_research`, or a civilization's wait (legal only with nothing to research)."""
    if code == codes.WAIT:
        for t in range(TR.shape[0]):  # noqa: SIM110 - a loop numba compiles
            if researchable(PL, TR, player, t):
                return False
        return True
    t = code - PR[PR_RESEARCH0]
    if t < 0 or t >= TR.shape[0] or not researchable(PL, TR, player, t):
        return False
    PL[player, PL_RESEARCHING] = t
    return True
