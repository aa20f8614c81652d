"""A learned roll-out's turns on the civ engine's board, many in one compiled call.

`candidates.choose_turn` chooses one simulated turn; between two such turns Python used to list
the agents, find each one's candidate ids by a tuple key and play the turn (~200 us a turn,
about as much as the choice). Here one call plays turn after turn: the agents listed
(`legal.player_actions`, `labels.player_labels`), each agent's candidate ids found by its key in
a compiled hash table (`nlmcs.model.tables.BoardKeys`: the key `BoardState.agent_keys` makes,
less its game), the turn chosen (`choose_turn`) and played (`play.turn_with`), room made for
the next. The call comes back to Python before a turn's first draw where Python has work
(a key not registered, an agent without actions) and where the board must grow, so the draws
and the moves are those of the turn-by-turn path (`tests/model/test_model_tables.py`); a
candidate set whose own sums are not this snapshot's is brought up to date in the call
(`candidates.unit_sums`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from nlmcs.games.civ.compiled.board import G_OVER
from nlmcs.games.civ.compiled.labels import player_labels
from nlmcs.games.civ.compiled.legal import player_actions
from nlmcs.games.civ.compiled.play import make_room, turn_with
from nlmcs.model.kernels.candidates import choose_turn

DONE, NEEDS_AGENTS, NEEDS_ROOM, PYTHON_TURN = 0, 1, 2, 3
"""Why `learned_turns` came back: the turns are played (or the game is over); a turn's agents
need Python (register a key); the board must grow; a turn has an agent without actions (the
agent-by-agent path plays it)."""

EMPTY = -1
"""A hash slot without a key."""


@njit(cache=True)
def key_hash(key):
    """A 63-bit hash of an integer key."""
    h = np.uint64(0x9E3779B97F4A7C15)
    for x in key:
        h ^= np.uint64(x) + np.uint64(0x9E3779B97F4A7C15) + (h << np.uint64(6)) + (
            h >> np.uint64(2))
        h *= np.uint64(0xBF58476D1CE4E5B9)
    return np.int64(h >> np.uint64(1))  # never negative, so never `EMPTY`


@njit(cache=True)
def find(slots, hashes, key_lo, key_len, store, key, h):
    """The entry of `key` (hash `h`) in the open-addressing table, or its empty slot as
    -1 - slot."""
    mask = len(slots) - 1
    i = h & mask
    while True:
        e = slots[i]
        if e == EMPTY:
            return -1 - i
        if hashes[i] == h and key_len[e] == len(key):
            lo = key_lo[e]
            same = True
            for j in range(len(key)):
                if store[lo + j] != key[j]:
                    same = False
                    break
            if same:
                return e
        i = (i + 1) & mask


@njit(cache=True)
def agent_key(kind, agent, out, keys, lo, hi):
    """An agent's key as `BoardState.agent_keys` makes it, less the game: its kind, its facts
    (3), its candidates' codes, -2, their keys."""
    n = hi - lo
    key = np.empty(5 + 2 * n, np.int64)
    key[0] = kind
    key[1:4] = agent
    key[4:4 + n] = out[lo:hi]
    key[4 + n] = -2
    key[5 + n:] = keys[lo:hi]
    return key


@njit(cache=True)
def _grown(a, need):
    if need <= len(a):
        return a
    out = np.empty(max(need, 2 * len(a)), a.dtype)
    out[:len(a)] = a
    return out


@njit(cache=True)
def learned_turns(b, mk, rk, am, ar, seats, canonical, player, bk, t, wt, epoch, eps,
                  depth, end, learn_until, rng):
    """Play `player`'s turns `depth`..`end` - 1 on board `b` as `RolloutCore.joint_move` and
    `BoardState.play_turn` would, one after the other (see the module; `bk`: the
    `BoardKeys` arrays, `t` and `wt`: `choose_turn`'s tables and weights). Returns (why it
    came back, the depth reached, and the datapoints of the turns played: signatures, y, q,
    label bounds, labels, and the picks of turn 0 where this call played it)."""
    U, C, PL, T, G = b
    NB, TI, RAD, OUT, MS = mk
    UK, UF, IT, TR, BU, TT, TF, VP, PR = rk
    slots, hashes, key_lo, key_len, store, sid_lo, sid_len, sid_store = bk
    dp_sig = np.empty(0, np.int64)
    dp_y = np.empty(0, np.int64)
    dp_q = np.empty(0)
    dp_bounds = np.zeros(1, np.int64)
    labels = np.empty(0, np.int64)
    n_dp = 0
    root = np.empty(0, np.int64)
    why = DONE
    while depth < end:
        if G[G_OVER]:
            break
        out, offsets, kinds, rows = player_actions(U, C, PL, T, G, NB, TI, RAD, MS, UK, IT,
                                                   TR, PR, player)
        n = kinds.shape[0]
        for a in range(n):
            if offsets[a + 1] == offsets[a]:
                why = PYTHON_TURN
                break
        if why != DONE:
            break
        agents, keys = player_labels(U, C, T, G, NB, TI, RAD, UK, UF, TF, VP, PR, out, offsets,
                                     kinds, rows)
        bounds = np.zeros(n + 1, np.int64)
        entries = np.empty(n, np.int64)
        for a in range(n):
            key = agent_key(kinds[a], agents[a], out, keys, offsets[a], offsets[a + 1])
            e = find(slots, hashes, key_lo, key_len, store, key, key_hash(key))
            if e < 0:
                why = NEEDS_AGENTS
                break
            entries[a] = e
            bounds[a + 1] = bounds[a] + sid_len[e]
        if why != DONE:
            break
        sids = np.empty(bounds[n], np.int64)
        for a in range(n):
            lo = sid_lo[entries[a]]
            sids[bounds[a]:bounds[a + 1]] = sid_store[lo:lo + bounds[a + 1] - bounds[a]]
        learn = depth < learn_until
        picks, sig, y, q, z, zb = choose_turn(t, wt, sids, bounds, epoch, eps, learn, rng)
        if learn:
            m = len(sig)
            dp_sig = _grown(dp_sig, n_dp + m)
            dp_y = _grown(dp_y, n_dp + m)
            dp_q = _grown(dp_q, n_dp + m)
            dp_bounds = _grown(dp_bounds, n_dp + m + 1)
            at = dp_bounds[n_dp]
            labels = _grown(labels, at + len(z))
            dp_sig[n_dp:n_dp + m] = sig
            dp_y[n_dp:n_dp + m] = y
            dp_q[n_dp:n_dp + m] = q
            dp_bounds[n_dp + 1:n_dp + m + 1] = at + zb[1:]
            labels[at:at + len(z)] = z
            n_dp += m
        if depth == 0:
            root = picks
        chosen = canonical[out[offsets[:-1] + picks]]
        turn_with(b, mk, rk, am, ar, seats, player, kinds, rows, chosen, rng)
        depth += 1
        if not G[G_OVER] and not make_room(U, C, T, G):
            why = NEEDS_ROOM
            break
    return (why, depth, dp_sig[:n_dp], dp_y[:n_dp], dp_q[:n_dp], dp_bounds[:n_dp + 1],
            labels[:dp_bounds[n_dp]], root)
