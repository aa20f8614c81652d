"""Whole turns on a board in one compiled call: every player's choice from the turn's starting
state, the actions applied in `player_order`, then the end of turn, as `runner.play_game` plays
them. A call from Python into numba costs about 10 microseconds, so Python calls turns, not
rules.

A seat is a uniformly random player (`policies.RandomPolicy`: one draw per agent, an agent's
action `acts[int(r * len(acts))]`) or the built-in AI (`compiled.ai`, any level, knowing the
variant's rule or not). Chance draws from the caller's generator, which advances as the
reference's would: a board played here and a reference state played with the same generator
and the same players reach the same position.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from nlmcs.games.base import UNIFORM_ROLLOUT
from nlmcs.games.civ.ai import BuiltinAI
from nlmcs.games.civ.compiled.ai import LEVELS, ai_map, ai_rule, no_ai_map, plan
from nlmcs.games.civ.compiled.board import (
    C_ALIVE,
    C_TILE,
    G_NC,
    G_NU,
    G_OVER,
    G_TURN,
    MS_SACRED,
    T_CITY,
    U_ALIVE,
    Board,
    grown,
    map_consts,
    pack,
    rule_consts,
    unpack_into,
)
from nlmcs.games.civ.compiled.legal import CITY, UNIT, player_actions
from nlmcs.games.civ.compiled.rules import apply_city, apply_civ, apply_unit
from nlmcs.games.civ.compiled.turn import end_turn
from nlmcs.games.civ.policies import RandomPolicy

RANDOM, UNIFORM = -1, -2
"""Seat levels besides the built-in AI's (which index `ai.LEVELS`): a random player
(`RandomPolicy`), and a search's uniform roll-out policy (`search.policies.UniformRollout`: one
`integers(len(actions))` draw per agent)."""


@njit(cache=True)
def random_choice(U, C, PL, T, G, NB, TI, RAD, MS, UK, IT, TR, PR, player, rng):
    """`RandomPolicy.joint_action`: (kinds, rows, codes) of the player's agents, code -1 for
    an agent without actions."""
    out, offsets, kinds, rows = player_actions(U, C, PL, T, G, NB, TI, RAD, MS, UK, IT, TR, PR,
                                               player)
    draws = rng.random(kinds.shape[0])
    chosen = np.empty(kinds.shape[0], np.int64)
    for a in range(kinds.shape[0]):
        k = offsets[a + 1] - offsets[a]
        chosen[a] = out[offsets[a] + int(draws[a] * k)] if k > 0 else -1
    return kinds, rows, chosen


@njit(cache=True)
def uniform_choice(U, C, PL, T, G, NB, TI, RAD, MS, UK, IT, TR, PR, player, rng):
    """A uniform roll-out policy's move for every agent of `player`, as `random_choice`."""
    out, offsets, kinds, rows = player_actions(U, C, PL, T, G, NB, TI, RAD, MS, UK, IT, TR, PR,
                                               player)
    chosen = np.empty(kinds.shape[0], np.int64)
    for a in range(kinds.shape[0]):
        k = offsets[a + 1] - offsets[a]
        chosen[a] = out[offsets[a] + rng.integers(0, k)] if k > 0 else -1
    return kinds, rows, chosen


@njit(cache=True)
def _room(U, C, G):
    """Room for one turn: a city per living unit (any unit founding one), and a unit per city
    that may produce one at the turn's end (those living now and those founded this turn)."""
    cities = 0
    for c in range(G[G_NC]):
        cities += C[c, C_ALIVE]
    units = 0
    for u in range(G[G_NU]):
        units += U[u, U_ALIVE]
    return U.shape[0] - G[G_NU] >= cities + units and C.shape[0] - G[G_NC] >= units


@njit(cache=True)
def compact(U, C, T, G):
    """Drop dead rows, keeping the living ones in order (and the tiles' city rows right)."""
    n = 0
    for u in range(G[G_NU]):
        if U[u, U_ALIVE]:
            U[n] = U[u]
            n += 1
    U[n:] = 0
    G[G_NU] = n
    n = 0
    for c in range(G[G_NC]):
        if C[c, C_ALIVE]:
            C[n] = C[c]
            T[C[n, C_TILE], T_CITY] = n
            n += 1
    C[n:] = 0
    G[G_NC] = n


@njit(cache=True)
def make_room(U, C, T, G):
    """Whether the board has room for one more turn, compacting it first if that gives room
    (otherwise the caller grows it)."""
    if _room(U, C, G):
        return True
    compact(U, C, T, G)
    return _room(U, C, G)


@njit(cache=True)
def _seat_choice(U, C, PL, T, G, NB, TI, RAD, MS, UK, UF, IT, TR, TF, VP, PR, DIST, VALUES,
                 SITES, AU, AT, NAMES, LV, LF, RESEARCH, seats, p, rng):
    """(kinds, rows, codes) of seat `seats[p]`'s move for player `p`."""
    if seats[p, 0] == RANDOM:
        return random_choice(U, C, PL, T, G, NB, TI, RAD, MS, UK, IT, TR, PR, p, rng)
    if seats[p, 0] == UNIFORM:
        return uniform_choice(U, C, PL, T, G, NB, TI, RAD, MS, UK, IT, TR, PR, p, rng)
    sacred = MS[MS_SACRED] if seats[p, 1] else -1
    return plan(U, C, PL, T, G, NB, TI, RAD, MS, UK, UF, IT, TR, TF, VP, PR, DIST, VALUES, SITES,
                AU, AT, NAMES, LV, LF, RESEARCH, p, seats[p, 0], sacred)


@njit(cache=True)
def _play_turn(b, mk, rk, am, ar, seats, first, given, kinds, rows, chosen, rng):
    """One turn: every player but `given` (-1: none; its move is in `kinds`, `rows`,
    `chosen`) chooses, player `first` (unless -1) before the others, then the moves are
    applied in `player_order` and the turn ends."""
    U, C, PL, T, G = b
    NB, TI, RAD, OUT, MS = mk
    UK, UF, IT, TR, BU, TT, TF, VP, PR = rk
    DIST, VALUES, SITES = am
    AU, AT, NAMES, LV, LF, RESEARCH = ar
    n_players = PL.shape[0]
    for i in range(-1, n_players):
        p = first if i < 0 else i
        if p < 0 or (i >= 0 and p == first) or p == given:
            continue
        kinds[p], rows[p], chosen[p] = _seat_choice(
            U, C, PL, T, G, NB, TI, RAD, MS, UK, UF, IT, TR, TF, VP, PR, DIST, VALUES, SITES,
            AU, AT, NAMES, LV, LF, RESEARCH, seats, p, rng)
    turn = G[G_TURN]
    for i in range(n_players):
        p = (turn + i) % n_players
        for a in range(kinds[p].shape[0]):
            code, row = chosen[p][a], rows[p][a]
            if G[G_OVER] or code < 0:
                continue
            if kinds[p][a] == UNIT:
                apply_unit(U, C, PL, T, G, NB, TI, RAD, MS, UK, UF, IT, TT, TF, VP, PR, row,
                           code, rng)
            elif kinds[p][a] == CITY:
                apply_city(C, PL, RAD, IT, PR, row, code)
            else:
                apply_civ(PL, TR, PR, row, code)
    end_turn(U, C, PL, T, G, NB, TI, RAD, OUT, MS, UK, IT, TR, BU, TT, PR)


@njit(cache=True)
def play_turns(b, mk, rk, am, ar, seats, first, rng, turns):
    """Play up to `turns` turns on board `b`, player p seated as `seats[p]` = (level, knows the
    rule): level RANDOM, UNIFORM or a built-in AI level. Players choose in seat order, player
    `first` (unless -1) before the others. Returns the turns played: fewer when the game ends
    or the board needs more rows than it has (grow it and call again)."""
    U, C, PL, T, G = b
    n_players = PL.shape[0]
    played = 0
    while played < turns and not G[G_OVER]:
        if not make_room(U, C, T, G):
            return played
        kinds = [np.empty(0, np.int64) for _ in range(n_players)]
        rows = [np.empty(0, np.int64) for _ in range(n_players)]
        chosen = [np.empty(0, np.int64) for _ in range(n_players)]
        _play_turn(b, mk, rk, am, ar, seats, first, -1, kinds, rows, chosen, rng)
        played += 1
    return played


@njit(cache=True)
def turn_with(b, mk, rk, am, ar, seats, player, kinds, rows, chosen, rng):
    """One turn in which `player` plays the given move (an entry per agent: kind, row, code,
    -1 to wait) and every other player its seat's, chosen after it (`base.step`); the board
    must have room (`make_room`)."""
    n_players = b.PL.shape[0]
    all_kinds = [np.empty(0, np.int64) for _ in range(n_players)]
    all_rows = [np.empty(0, np.int64) for _ in range(n_players)]
    all_chosen = [np.empty(0, np.int64) for _ in range(n_players)]
    all_kinds[player], all_rows[player], all_chosen[player] = kinds, rows, chosen
    _play_turn(b, mk, rk, am, ar, seats, player, player, all_kinds, all_rows, all_chosen, rng)


def seats_of(policies) -> np.ndarray:
    """The seats of reference players (`RandomPolicy`, `BuiltinAI`, or `UNIFORM_ROLLOUT` for a
    search's uniform roll-out policy), one row per player; a ValueError names a player the
    compiled engine does not have."""
    out = np.zeros((len(policies), 2), dtype=np.int64)
    for p, policy in enumerate(policies):
        if type(policy) is RandomPolicy:
            out[p] = (RANDOM, 0)
        elif isinstance(policy, str) and policy == UNIFORM_ROLLOUT:
            out[p] = (UNIFORM, 0)
        elif type(policy) is BuiltinAI:
            out[p] = (LEVELS.index(policy.level_name), policy.knows_rule)
        else:
            name = getattr(policy, "name", type(policy).__name__)
            raise ValueError(f"the compiled engine has no player {name!r}")
    return out


class Engine:
    """The compiled engine's constants for one game and map, and its players' seats: what a
    caller that plays many roll-outs from one position keeps (`like` is a reference state of
    that game and map)."""

    def __init__(self, like, policies, first: int = -1):
        self.seats = seats_of(policies)
        self.first = first
        self.mk, self.rk, self.ar = map_consts(like), rule_consts(like), ai_rule(like)
        self.am = ai_map(like) if (self.seats[:, 0] >= 0).any() else no_ai_map()

    def play(self, b: Board, turns: int, rng: np.random.Generator) -> tuple[Board, int]:
        """Play `turns` turns or until the game ends, growing the board when it runs out of
        rows; returns the board (a new one if it grew) and the turns played."""
        played = 0
        while played < turns and not b.G[G_OVER]:
            played += play_turns(b, self.mk, self.rk, self.am, self.ar, self.seats, self.first,
                                 rng, turns - played)
            if played < turns and not b.G[G_OVER]:
                b = grown(b)
        return b, played

    def play_in_place(self, state, turns: int | None, rng: np.random.Generator) -> int:
        """Play reference state `state` on for `turns` turns (None: to the end) and leave it
        where the game got to; returns the turns played (`Game.compiled_players`)."""
        limit = turns if turns is not None else max(0, state.max_turns - state.turn) + 1
        b, played = self.play(pack(state), limit, rng)
        unpack_into(b, state)
        return played
