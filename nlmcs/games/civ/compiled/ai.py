"""The built-in AI on a board, compiled: `nlmcs.games.civ.ai` (the reference) rule for rule,
the same choices in the same order.

What the reference memoises on the shared map is a table here, built once per map (`AIMap`:
steps over land between every two tiles, city-site values and their order, plain and with the
sacred terrain's bonus) or per game (`AIRule`: the unit, terrain and item facts the rules read,
and each difficulty level's knobs). Where the reference sorts a list and takes the first entry
that passes a test, this takes the passing entry of the greatest key, which is the same entry.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from nlmcs.games.civ import ai as ref
from nlmcs.games.civ import tables as tb
from nlmcs.games.civ.compiled import codes
from nlmcs.games.civ.compiled.board import (
    C_ALIVE,
    C_BUILD,
    C_ID,
    C_NWORKED,
    C_OWNER,
    C_SIZE,
    C_TILE,
    C_W0,
    G_NC,
    G_NEXT_ID,
    G_NU,
    MS_HEIGHT,
    MS_WIDTH,
    PL_RESEARCHING,
    PR_N_UNITS,
    PR_RESEARCH0,
    T_COWN,
    T_IMP,
    T_MIL,
    T_OCC,
    TI_LAND,
    TI_TERR,
    U_ACT,
    U_ALIVE,
    U_HP,
    U_ID,
    U_KIND,
    U_OWNER,
    U_TILE,
    U_VET,
    UF_ATTACK,
    UF_DEFENSE,
    UK_CITIES,
    UK_FIREPOWER,
    UK_HP,
    UK_MILITARY,
    UK_SETTLERS,
    kept,
    map_consts,
)
from nlmcs.games.civ.compiled.legal import (
    CITY,
    CIV,
    UNIT,
    buildable,
    can_found_city,
    can_work,
    cheb,
    column,
    researchable,
    unit_actions,
    x_apart,
)
from nlmcs.games.civ.compiled.rules import best_defender, defense_strength

UNREACHABLE = np.iinfo(np.int16).max
SPACING = ref.SITE_SPACING - 1
"""The AI founds no city within this Chebyshev distance of another."""
MAX_TILES = 4096
"""The step table is tiles x tiles int16 (32 MiB at this size); larger maps are refused."""
_BUSY_LOW, _BUSY_HIGH = min(tb.BUSY), max(tb.BUSY)
FORTIFYING, FORTIFIED = tb.FORTIFYING, tb.FORTIFIED
IRRIGATION, MINE, ROAD = tb.IRRIGATION, tb.MINE, tb.ROAD

AIMap = namedtuple("AIMap", "DIST VALUES SITES")
"""DIST (tiles, tiles) int16 steps over land (UNREACHABLE: none); VALUES (2, tiles) site values,
row 0 plain, row 1 with the sacred bonus; SITES (2, tiles) the good sites best first, -1
padded."""

# unit-kind columns (AIRule.AU), terrain columns (AIRule.AT), item numbers (AIRule.NAMES)
AU_ATTACK_KEY, AU_DEFENSE, AU_COST = range(3)
AT_MINING, AT_IRRIGATION, AT_ROAD_TRADE = range(3)
N_SETTLERS, N_WORKERS, N_WALLS, N_BARRACKS, N_GRANARY = range(5)
# level columns (AIRule.LV) and float level columns (AIRule.LF)
LV_DEFENDERS, LV_MAX_CITIES, LV_MIN_ARMY, LV_WALLS, LV_BARRACKS = range(5)
LF_ATTACK_ODDS, LF_OFFENSIVE_RATIO = range(2)
LEVELS = tuple(ref.LEVELS)
"""Level numbers, in the reference's order."""

AIRule = namedtuple("AIRule", "AU AT NAMES LV LF RESEARCH")
"""AU (unit kinds, 3) float: attack key (attack + defence/2 + (moves - 1)/2), defence, cost;
AT (terrains, 3) int: mining shields, irrigation food, road trade; NAMES the item numbers of
settlers, workers, city walls, barracks, granary (-1: not in the ruleset); LV (levels, 5) int
and LF (levels, 2) float knobs; RESEARCH (levels, techs) each level's order, -1 padded."""

@njit(cache=True)
def _all_steps(NB, land):
    """Breadth-first steps over land (8 directions) between every two tiles."""
    n = NB.shape[0]
    dist = np.full((n, n), UNREACHABLE, np.int16)
    frontier = np.empty(n, np.int64)
    nxt = np.empty(n, np.int64)
    for src in range(n):
        row = dist[src]
        row[src] = 0
        frontier[0] = src
        size, d = 1, 0
        while size:
            d += 1
            m = 0
            for i in range(size):
                t = frontier[i]
                for k in range(8):
                    nb = NB[t, k]
                    if nb >= 0 and land[nb] and row[nb] > d:
                        row[nb] = d
                        nxt[m] = nb
                        m += 1
            frontier[:m] = nxt[:m]
            size = m
    return dist


def ai_map(s) -> AIMap:
    """`AIMap` of `s.map` (built on first use, kept with the map: `MapData.compiled`)."""
    return kept(s.map.compiled, ("ai", s.map.sacred), lambda: _ai_map(s))


def _ai_map(s) -> AIMap:
    m = s.map
    if m.n > MAX_TILES:
        raise ValueError(f"the compiled built-in AI plays maps of up to {MAX_TILES} tiles, "
                         f"not {m.n}")
    mk = map_consts(s)
    values = np.zeros((2, m.n))
    sites = np.full((2, m.n), -1, dtype=np.int64)
    for row, sacred in enumerate((-1, m.sacred)):
        if row == 0 or sacred >= 0:
            v, good = ref.site_values(s, sacred)
            values[row] = v
            sites[row, :len(good)] = good
    return AIMap(_all_steps(mk.NB, mk.TI[:, TI_LAND].copy()), values, sites)


def ai_rule(s) -> AIRule:
    """`AIRule` of `s.game`, built once per game."""
    return kept(vars(s.game), "_ai_rule", lambda: _ai_rule(s))


def _ai_rule(s) -> AIRule:
    T = s.tables
    units = T.ruleset.units
    AU = np.array([[u.attack + 0.5 * u.defense + 0.5 * (u.move_rate - 1), u.defense, u.cost]
                   for u in units], dtype=np.float64).reshape(len(units), 3)
    AT = np.array([[t.mining_shield, t.irrigation_food, t.road_trade]
                   for t in T.ruleset.terrains], dtype=np.int64).reshape(-1, 3)
    index = T.item_by_name
    NAMES = np.array([index.get(n, -1) for n in ("settlers", "workers", "city walls",
                                                 "barracks", "granary")], dtype=np.int64)
    levels = [ref.LEVELS[name] for name in LEVELS]
    LV = np.array([[lv.defenders, lv.max_cities, lv.min_army, lv.walls, lv.barracks]
                   for lv in levels], dtype=np.int64)
    LF = np.array([[lv.attack_odds, lv.offensive_ratio] for lv in levels], dtype=np.float64)
    RESEARCH = np.full((len(levels), max(1, len(T.tech_names))), -1, dtype=np.int64)
    for i, lv in enumerate(levels):
        order = [T.tech_by_name[n] for n in lv.research if n in T.tech_by_name]
        RESEARCH[i, :len(order)] = order
    return AIRule(AU, AT, NAMES, LV, LF, RESEARCH)


def no_ai_map() -> AIMap:
    """A stand-in `AIMap` for games without a built-in AI seat (nothing reads it)."""
    return AIMap(np.zeros((1, 1), np.int16), np.zeros((2, 1)), np.full((2, 1), -1, np.int64))


# --- small facts -------------------------------------------------------------------------------
@njit(cache=True)
def _enemy_near(enemy_tiles, n_enemy, MS, tile, radius):
    w = MS[MS_WIDTH]
    x, y = tile % w, tile // w
    for i in range(n_enemy):
        e = enemy_tiles[i]
        if x_apart(e % w, x, MS) <= radius and -radius <= e // w - y <= radius:
            return True
    return False


@njit(cache=True)
def win_probability(p, att_hp, def_hp, att_fp, def_fp):
    """`combat.win_probability`, the same recurrence evaluated bottom-up (the same floats)."""
    if def_hp <= 0:
        return 1.0
    if att_hp <= 0:
        return 0.0
    table = np.zeros((att_hp + 1, def_hp + 1))
    for a in range(1, att_hp + 1):
        for d in range(1, def_hp + 1):
            d2, a2 = d - att_fp, a - def_fp
            win = 1.0 if d2 <= 0 else table[a, d2]
            lose = 0.0 if a2 <= 0 else table[a2, d]
            table[a, d] = p * win + (1 - p) * lose
    return table[att_hp, def_hp]


@njit(cache=True, inline="always")
def _best_unit(C, PL, IT, UK, UF, AU, n_units, b0, c, attack):
    """`ai.best_unit`: the best attacker by attack key or defender by defence among what city
    row `c` can build, the cheaper on a tie (the first on a tie of both); -1 for none."""
    best, k1, k2 = -1, 0.0, 0.0
    for i in range(n_units):
        if not UK[i, UK_MILITARY] or not buildable(C, PL, IT, n_units, b0, c, i):
            continue
        if attack and not UF[i, UF_ATTACK] > 0:
            continue
        key1 = AU[i, AU_ATTACK_KEY] if attack else AU[i, AU_DEFENSE]
        key2 = -AU[i, AU_COST]
        if best < 0 or key1 > k1 or (key1 == k1 and key2 > k2):
            best, k1, k2 = i, key1, key2
    return best


@njit(cache=True, inline="always")
def _odds(U, C, T, TI, RAD, UK, UF, TF, VP, PR, u, defender):
    """`combat.odds`: the attacker's chance to win against `defender` where it stands."""
    a = UF[U[u, U_KIND], UF_ATTACK] * VP[0, U[u, U_VET]]
    d = defense_strength(U, C, T, TI, RAD, UK, UF, TF, VP, PR, defender)
    if a <= 0:
        return 0.0
    return win_probability(a / (a + d), U[u, U_HP], U[defender, U_HP],
                           UK[U[u, U_KIND], UK_FIREPOWER], UK[U[defender, U_KIND], UK_FIREPOWER])


@njit(cache=True)
def _has(opts, n, code):
    for i in range(n):  # noqa: SIM110 - a loop numba compiles
        if opts[i] == code:
            return True
    return False


@njit(cache=True)
def _step_towards(NB, DIST, MS, tile, target, opts, n):
    """The legal move that gets closest to `target` over land (then by straight-line
    distance); -1 when none gets closer."""
    w = MS[MS_WIDTH]
    here = DIST[target, tile]
    best, bd, bl = -1, 0, 0
    for i in range(n):
        code = opts[i]
        if code >= codes.ATTACK0:
            continue
        nt = NB[tile, code - codes.MOVE0]
        d = DIST[target, nt]
        if d >= here:
            continue
        dx, dy = x_apart(nt % w, target % w, MS), nt // w - target // w
        line = dx * dx + dy * dy
        if best < 0 or d < bd or (d == bd and line < bl):
            best, bd, bl = code, d, line
    return best


@njit(cache=True, inline="always")
def _step_or(NB, DIST, MS, tile, target, opts, n, default):
    """`_step_towards`, or `default` when no move gets closer (the reference's
    `step_towards(...) or WAIT`, `... or stay`)."""
    code = _step_towards(NB, DIST, MS, tile, target, opts, n)
    return default if code < 0 else code


@njit(cache=True)
def _job_at(T, NB, TI, AT, t):
    """`ai.tile_job`: a mine on hills, irrigation on flat land, a road where it adds trade."""
    terr, imp = TI[t, TI_TERR], T[t, T_IMP]
    if AT[terr, AT_MINING] >= 2 and not imp & MINE and can_work(t, codes.MINE, T, NB, TI):
        return codes.MINE
    if (AT[terr, AT_IRRIGATION] and AT[terr, AT_MINING] < 2 and not imp & IRRIGATION
            and can_work(t, codes.IRRIGATE, T, NB, TI)):
        return codes.IRRIGATE
    if AT[terr, AT_ROAD_TRADE] and not imp & ROAD and can_work(t, codes.BUILD_ROAD, T, NB, TI):
        return codes.BUILD_ROAD
    return -1


SITE_AVAILABLE, SITE_FREE, SITE_SACRED = range(3)
"""What `_nearby_best` asks of a site: not too close to a city (`site_available`); also not
claimed this turn, no enemy within two tiles and no foreign unit on it (`settle`); also on the
sacred terrain, within the first city's detour, and legal to found on (`settle_sacred`)."""


@njit(cache=True, inline="always")
def _nearby_best(DIST, VALUES, SITES, srow, n_sites, tile, mode, blocked, claimed, enemy_t,
                 n_enemy, T, TI, MS, me, sacred, first):
    """The first of `ai.nearby_sites(tile)` that passes `mode`'s test (-1: none): the greatest
    value - 3 x steps within ten steps, the earlier good site on a tie."""
    best, best_score = -1, 0.0
    for k in range(n_sites):
        t = SITES[srow, k]
        r = DIST[tile, t]
        if r > 10 or blocked[t]:
            continue
        score = VALUES[srow, t] - 3 * r
        if best >= 0 and score <= best_score:
            continue  # cannot be the first that passes
        if mode != SITE_AVAILABLE:
            if claimed[t] or _enemy_near(enemy_t, n_enemy, MS, t, 2):
                continue
            if T[t, T_OCC] != 0 and T[t, T_OCC] != me:
                continue
            if mode == SITE_SACRED and (TI[t, TI_TERR] != sacred
                                        or (first and r > ref.FIRST_DETOUR)
                                        or not can_found_city(t, T, TI, MS)):
                continue
        best, best_score = t, score
    return best


@njit(cache=True)
def _sides(X, n, alive, owner, tile, player):
    """(own rows, how many, the others' tiles, how many) of the first `n` rows of table `X`
    (units or cities), in row order."""
    own = np.empty(n, np.int64)
    tiles = np.empty(n, np.int64)
    n_own = n_other = 0
    for r in range(n):
        if X[r, alive]:
            if X[r, owner] == player:
                own[n_own] = r
                n_own += 1
            else:
                tiles[n_other] = X[r, tile]
                n_other += 1
    return own, n_own, tiles, n_other


@njit(cache=True)
def plan(U, C, PL, T, G, NB, TI, RAD, MS, UK, UF, IT, TR, TF, VP, PR, DIST, VALUES, SITES, AU,
         AT, NAMES, LV, LF, RESEARCH, player, level, sacred):
    """`BuiltinAI.joint_action`: (kinds, rows, codes) for every agent of `player` (the
    civilization, its cities, its idle units), as `legal.player_actions` lists them. `sacred`:
    the sacred terrain the AI knows of, -1 for none."""
    n, nc, nu = NB.shape[0], G[G_NC], G[G_NU]
    w = MS[MS_WIDTH]
    me = player + 1
    n_units, b0 = PR[PR_N_UNITS], C_W0 + RAD.shape[1]
    srow = 1 if sacred >= 0 else 0
    n_sites = 0
    while n_sites < n and SITES[srow, n_sites] >= 0:
        n_sites += 1
    # the facts of the turn (`_Turn.__init__`)
    own_c, n_own, enemy_c, n_enemy_c = _sides(C, nc, C_ALIVE, C_OWNER, C_TILE, player)
    own_u, n_own_u, enemy_t, n_enemy = _sides(U, nu, U_ALIVE, U_OWNER, U_TILE, player)
    claimed = np.zeros(max(n, G[G_NEXT_ID]) + 1, np.bool_)  # tiles and city ids, as one set
    blocked = np.zeros(n, np.bool_)
    r = SPACING
    for c in range(nc):
        if C[c, C_ALIVE]:
            ct = C[c, C_TILE]
            cx, cy = ct % w, ct // w
            for y in range(max(0, cy - r), min(MS[MS_HEIGHT], cy + r + 1)):
                for dx in range(-r, r + 1):
                    x = column(cx + dx, MS)
                    if x >= 0:
                        blocked[y * w + x] = True
    walls_level = LV[level, LV_WALLS] != 0
    need = np.empty(n_own, np.int64)
    garrison = np.zeros(n_own, np.int64)
    garrisoned = np.zeros(nu, np.bool_)
    for i in range(n_own):
        ct = C[own_c[i], C_TILE]
        near = walls_level and _enemy_near(enemy_t, n_enemy, MS, ct, 4)
        need[i] = LV[level, LV_DEFENDERS] + (1 if near else 0)
        for _ in range(need[i]):  # the best defenders here, by defence then id
            pick, best_def = -1, 0.0
            for u in range(nu):
                if (not U[u, U_ALIVE] or U[u, U_TILE] != ct or not UK[U[u, U_KIND], UK_MILITARY]
                        or garrisoned[u]):
                    continue
                dfn = UF[U[u, U_KIND], UF_DEFENSE]
                if pick < 0 or dfn > best_def or (dfn == best_def and U[u, U_ID] < U[pick, U_ID]):
                    pick, best_def = u, dfn
            if pick < 0:
                break
            garrisoned[pick] = True
            garrison[i] += 1
    n_field = 0
    field_attack = 0.0
    for j in range(n_own_u):
        u = own_u[j]
        kind = U[u, U_KIND]
        if UK[kind, UK_MILITARY] and not garrisoned[u]:
            n_field += 1
            field_attack += UF[kind, UF_ATTACK] * U[u, U_HP] / UK[kind, UK_HP]
    enemy_def = 0.0
    for u in range(nu):
        if U[u, U_ALIVE] and U[u, U_OWNER] != player and UK[U[u, U_KIND], UK_MILITARY]:
            et = U[u, U_TILE]
            near_city = False
            for i in range(n_enemy_c):
                ct = enemy_c[i]
                if et == ct:
                    near_city = True
                for k in range(8):
                    if NB[ct, k] == et:
                        near_city = True
            enemy_def += UF[U[u, U_KIND], UF_DEFENSE] * (1.0 if near_city else 0.34)
    offensive = n_field >= LV[level, LV_MIN_ARMY] and field_attack >= (
        LF[level, LF_OFFENSIVE_RATIO] * max(1.0, enemy_def))
    founders = 0
    workers = 0
    for j in range(n_own_u):
        kind = U[own_u[j], U_KIND]
        if UK[kind, UK_CITIES]:
            founders += 1
        elif UK[kind, UK_SETTLERS]:
            workers += 1
    founder_build = np.zeros(n_own, np.bool_)
    for i in range(n_own):
        build = C[own_c[i], C_BUILD]
        if build < n_units and UK[build, UK_CITIES]:
            founder_build[i] = True
            founders += 1
    rally = -1
    if n_own:
        rally = C[own_c[0], C_TILE]
        if n_enemy_c:
            best_d = -1
            for i in range(n_own):
                t = C[own_c[i], C_TILE]
                d = n + w
                for k in range(n_enemy_c):
                    d = min(d, cheb(t, enemy_c[k], MS))
                if best_d < 0 or d < best_d:
                    rally, best_d = t, d

    n_agents = 1 + n_own + n_own_u
    kinds = np.empty(n_agents, np.int64)
    rows = np.empty(n_agents, np.int64)
    chosen = np.empty(n_agents, np.int64)
    # the civilization: keep researching, else the level's order, else the first option
    choice = -1
    t = PL[player, PL_RESEARCHING]
    if t >= 0 and researchable(PL, TR, player, t):
        choice = t
    else:
        for k in range(RESEARCH.shape[1]):
            t = RESEARCH[level, k]
            if t >= 0 and researchable(PL, TR, player, t):
                choice = t
                break
        if choice < 0:
            for t in range(TR.shape[0]):
                if researchable(PL, TR, player, t):
                    choice = t
                    break
    kinds[0], rows[0] = CIV, player
    chosen[0] = codes.WAIT if choice < 0 else PR[PR_RESEARCH0] + choice
    a = 1
    # the cities' production
    for i in range(n_own):
        c = own_c[i]
        ct, size = C[c, C_TILE], C[c, C_SIZE]
        settlers = founders - (1 if founder_build[i] else 0)
        danger = _enemy_near(enemy_t, n_enemy, MS, ct, 2)
        item = -1
        if T[ct, T_MIL] < need[i]:
            item = _best_unit(C, PL, IT, UK, UF, AU, n_units, b0, c, False)
        elif (not danger and size >= 2 and n_own + settlers < LV[level, LV_MAX_CITIES]
              and NAMES[N_SETTLERS] >= 0
              and buildable(C, PL, IT, n_units, b0, c, NAMES[N_SETTLERS])
              and _nearby_best(DIST, VALUES, SITES, srow, n_sites, ct, SITE_AVAILABLE, blocked,
                               claimed, enemy_t, n_enemy, T, TI, MS, me, sacred, False) >= 0):
            item = NAMES[N_SETTLERS]
        elif (NAMES[N_WORKERS] >= 0 and buildable(C, PL, IT, n_units, b0, c, NAMES[N_WORKERS])
              and workers < min(n_own, 4) and not danger):
            item = NAMES[N_WORKERS]
        elif (walls_level and danger and NAMES[N_WALLS] >= 0
              and buildable(C, PL, IT, n_units, b0, c, NAMES[N_WALLS])):
            item = NAMES[N_WALLS]
        elif (LV[level, LV_BARRACKS] and size >= 3 and NAMES[N_BARRACKS] >= 0
              and buildable(C, PL, IT, n_units, b0, c, NAMES[N_BARRACKS])):
            item = NAMES[N_BARRACKS]
        elif (NAMES[N_GRANARY] >= 0 and buildable(C, PL, IT, n_units, b0, c, NAMES[N_GRANARY])
              and size >= 5 and not danger):
            item = NAMES[N_GRANARY]
        else:
            item = _best_unit(C, PL, IT, UK, UF, AU, n_units, b0, c, True)
        kinds[a], rows[a] = CITY, c
        chosen[a] = codes.BUILD0 + item if item >= 0 else -1
        a += 1
    # the units
    opts = np.empty(32, np.int64)
    targets_from_cities = n_enemy_c > 0
    for j in range(n_own_u):
        u = own_u[j]
        act = U[u, U_ACT]
        if _BUSY_LOW <= act <= _BUSY_HIGH:
            continue
        kind, tile = U[u, U_KIND], U[u, U_TILE]
        n_opts = unit_actions(opts, 0, kind, tile, player, act, T, NB, TI, MS, UK)
        code = -1
        done = False
        if UK[kind, UK_CITIES] and n_own < LV[level, LV_MAX_CITIES]:
            code = -1
            if sacred >= 0:  # `settle_sacred`
                if (TI[tile, TI_TERR] == sacred and _has(opts, n_opts, codes.BUILD_CITY)
                        and not blocked[tile] and not claimed[tile]):
                    claimed[tile] = True
                    code = codes.BUILD_CITY
                else:
                    target = _nearby_best(DIST, VALUES, SITES, srow, n_sites, tile, SITE_SACRED,
                                          blocked, claimed, enemy_t, n_enemy, T, TI, MS, me,
                                          sacred, n_own == 0)
                    if target >= 0:
                        claimed[target] = True
                        code = _step_or(NB, DIST, MS, tile, target, opts, n_opts, codes.WAIT)
            if code < 0 and _has(opts, n_opts, codes.BUILD_CITY) and not claimed[tile]:
                first = n_own == 0 and not claimed.any()
                good = (n_sites > 0 and not blocked[tile] and not claimed[tile]
                        and VALUES[srow, tile] >= VALUES[srow, SITES[srow, n_sites - 1]])
                if first or good:
                    claimed[tile] = True
                    code = codes.BUILD_CITY
            if code < 0:
                best = _nearby_best(DIST, VALUES, SITES, srow, n_sites, tile, SITE_FREE, blocked,
                                    claimed, enemy_t, n_enemy, T, TI, MS, me, sacred, False)
                if best >= 0:
                    claimed[best] = True
                    code = _step_or(NB, DIST, MS, tile, best, opts, n_opts, codes.WAIT)
            done = code >= 0
        if not done and UK[kind, UK_SETTLERS]:  # `work`
            job = _job_at(T, NB, TI, AT, tile)
            if job >= 0 and _has(opts, n_opts, job) and not claimed[tile]:
                claimed[tile] = True
                code = job
            else:
                best, best_d = -1, 0
                for i in range(n_own):
                    c = own_c[i]
                    for k in range(1, C[c, C_NWORKED]):
                        t = C[c, C_W0 + k]
                        d = DIST[tile, t]
                        if claimed[t] or d >= UNREACHABLE or _job_at(T, NB, TI, AT, t) < 0:
                            continue
                        if T[t, T_OCC] != 0 and T[t, T_OCC] != me:
                            continue
                        if best < 0 or d < best_d:
                            best, best_d = t, d
                if best < 0:
                    code = codes.WAIT
                else:
                    claimed[best] = True
                    code = _step_or(NB, DIST, MS, tile, best, opts, n_opts, codes.WAIT)
            done = True
        if not done and UK[kind, UK_MILITARY]:  # `fight`
            best, best_odds = -1, LF[level, LF_ATTACK_ODDS]
            for i in range(n_opts):
                if codes.ATTACK0 <= opts[i] < codes.FORTIFY:
                    nt = NB[tile, opts[i] - codes.ATTACK0]
                    defender = best_defender(U, C, G, T, TI, RAD, UK, UF, TF, VP, PR, nt)
                    p = _odds(U, C, T, TI, RAD, UK, UF, TF, VP, PR, u, defender)
                    if p >= best_odds:
                        best, best_odds = opts[i], p
            stay = codes.FORTIFY if _has(opts, n_opts, codes.FORTIFY) else codes.WAIT
            if best >= 0:
                code = best
            elif garrisoned[u]:
                code = stay
            else:
                for i in range(n_opts):  # an empty enemy city next door: walk in
                    if opts[i] < codes.ATTACK0:
                        nt = NB[tile, opts[i] - codes.MOVE0]
                        if T[nt, T_COWN] >= 0 and T[nt, T_COWN] != player:
                            code = opts[i]
                            break
                if code < 0:  # a city short of defenders pulls the nearest free unit home
                    for i in range(n_own):
                        c = own_c[i]
                        if garrison[i] < need[i]:
                            ct = C[c, C_TILE]
                            if tile == ct:
                                garrison[i] += 1
                                code = stay
                                break
                            if cheb(tile, ct, MS) <= 6 and not claimed[C[c, C_ID]]:
                                claimed[C[c, C_ID]] = True
                                code = _step_or(NB, DIST, MS, tile, ct, opts, n_opts, stay)
                                break
                if code < 0 and offensive and (n_enemy_c or n_enemy):
                    target, td = -1, 0
                    for k in range(n_enemy_c if targets_from_cities else n_enemy):
                        t = enemy_c[k] if targets_from_cities else enemy_t[k]
                        d = DIST[tile, t]
                        if target < 0 or d < td or (d == td and t < target):
                            target, td = t, d
                    if td < UNREACHABLE:
                        code = _step_or(NB, DIST, MS, tile, target, opts, n_opts, stay)
                if code < 0 and act in (FORTIFIED, FORTIFYING):
                    code = codes.WAIT
                if code < 0 and n_own and cheb(tile, rally, MS) > 1:
                    code = _step_or(NB, DIST, MS, tile, rally, opts, n_opts, stay)
                if code < 0:
                    code = stay
            done = True
        if not done:
            code = codes.WAIT
        kinds[a], rows[a], chosen[a] = UNIT, u, code
        a += 1
    return kinds[:a], rows[:a], chosen[:a]
