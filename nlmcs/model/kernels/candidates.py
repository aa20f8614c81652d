"""Compiled scoring of whole candidate sets from the signatures' integer tables
(`nlmcs.model.tables`), and one simulated turn's epsilon-greedy choice with its datapoints.

Every sum here is one `nlmcs.model.network.ValueNetwork` keeps per weight snapshot in its Python
caches, computed with the same arithmetic in the same order (so the same values to the last bit),
and kept in the tables beside the weight-free rows, stamped with the snapshot it was computed
under: an entry whose stamp is not the current snapshot is computed again the first time it is
asked for. A candidate set's own sums (`unit_sums`) are computed here too, the first time a
snapshot scores one of its candidates; the one step of them compiled code computes differently
from numpy (the static label factors' `exp`) is left to numpy, called from compiled code.
`choose_turn` draws what `nlmcs.search.mc_rollouts.RolloutCore.joint_move` draws, from the same
Generator in the same order.

The kinds without text (`nonlinear`: K latent states; `linear`: the game features alone) have
tables of their own (`LatentTables`): a signature's game, relevance and output slots, scored by
`latent_values`, which the per-signature path computes with too. `score` and `sample`
take either tables (a numba overload picks the kernel by the tables' type), so `choose_turn`
and `kernels.turns.learned_turns` are one code for every learned kind.

A call that takes the tables (`Tables`, `Weights`) counts each of their arrays in and out
(about 1 us a call, most of a kept score's cost), so callers read an entry's stamp themselves
and call only where it is not this snapshot's.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, objmode
from numba import uint64 as U  # an unsigned index: no negative-index wraparound
from numba.extending import overload

from nlmcs.model.kernels.labels import softmax_into, static_factors
from nlmcs.model.kernels.scoring import action_sums, draw, sample_labels, text_expected

STAMP = 0  # every table's first column: the snapshot its entry was computed under
# signature table columns
S_ACTION, S_GAME_LO, S_GAME_HI, S_FLAGS, S_UNIT, S_STATE = 1, 2, 3, 4, 5, 6
# candidate-set (unit) table columns: the stamp of its label marginals lent to its candidates,
# where the lending candidate's flags are, its words and rows, and their counts
U_BASE, U_BASE_FLAGS, U_WORDS, U_ROWS, U_C, U_W = 1, 2, 3, 4, 5, 6
# action key: its two parts, where its sums are; part: where its rows and words are, has phi
A_ATYPE, A_ACTION, A_ROWS, A_WORDS = 1, 2, 3, 4
P_ROWS, P_WORDS, P_PHI = 1, 2, 3
# state key: its parts (in `state_parts`), where its sums are
K_LO, K_HI, K_ROWS, K_WORDS = 1, 2, 3, 4
# a signature of the kinds without text: its game slots, its latent slots (K rows of M), where
# its K entries of sig_p and sig_lang are (one entry where K is 0: linear), K, M
L_GAME_LO, L_GAME_HI, L_SLOTS, L_ROWS, L_K, L_M = 1, 2, 3, 4, 5, 6


class Tables(NamedTuple):
    """The arrays of `nlmcs.model.tables.SignatureTables` (columns: the constants above)."""

    sig_meta: np.ndarray  # (S, 7) int
    sig_rows_lo: np.ndarray  # (S,) first of its C+1 entries in sig_p and sig_lang
    sig_game: np.ndarray  # (S,) w . x, per snapshot
    sig_expected: np.ndarray  # (S,) E[Q], per snapshot
    sig_p: np.ndarray  # relevance (C+1 per signature), per snapshot
    sig_lang: np.ndarray  # language score per row (C+1), per snapshot
    game_slots: np.ndarray  # w slots of each signature's game features
    flags: np.ndarray  # (., 3) bool: each signature's word flags (Wc per signature)
    act_meta: np.ndarray  # (A, 5) int
    act_rel: np.ndarray  # rel_a (C per action key), per snapshot
    act_lang: np.ndarray  # lang_a (C), per snapshot
    act_pred: np.ndarray  # (., 2) pred_a (Wc), per snapshot
    part_meta: np.ndarray  # (P, 4) int
    part_phi_slots: np.ndarray  # (.,) u slots of word x action type (action-type parts)
    part_lang_slots: np.ndarray  # (.,) w slots of the language feature
    part_pred_slots: np.ndarray  # (., 2) w slots of the predicate features
    part_overlap: np.ndarray  # (.,) overlap counts per row (unit-action and state parts)
    part_meaning: np.ndarray  # (.,) meaning cosines per row (with meaning)
    part_phi: np.ndarray  # (.,) u . phi per row (action-type parts), per snapshot
    part_lang: np.ndarray  # (.,) w . f_language per row, per snapshot
    part_pred: np.ndarray  # (., 2) w . f_predicate per word, per snapshot
    unit_meta: np.ndarray  # (U, 7) int
    unit_rows: np.ndarray  # (.,) each word's candidate row
    unit_parent: np.ndarray  # (.,) its parent's local index, -1 under the root
    unit_order: np.ndarray  # (.,) the words, parents first (local indices)
    unit_norm: np.ndarray  # (.,)
    unit_phi: np.ndarray  # (.,) per row, per snapshot (`ActionInputs.unit_phi`; `unit_sums`)
    unit_static: np.ndarray  # (., 3) per snapshot (`unit_sums`)
    unit_sexp: np.ndarray  # (., 3) their factors, per snapshot (`unit_sums`)
    unit_marg: np.ndarray  # (., 3) the label marginals lent to the set's candidates
    unit_psi: np.ndarray  # (., 3, 7) each word's static label-row slots (the update rows)
    unit_phi_word: np.ndarray  # (., 2) its bag-of-words and word x unit u slots (the same)
    state_meta: np.ndarray  # (K, 5) int
    state_parts: np.ndarray  # (.,) part ids of each state key's labels, in order
    state_rel: np.ndarray  # (.,) rel_b per row, per snapshot
    state_lang: np.ndarray  # (.,) lang_b per row, per snapshot
    state_pred: np.ndarray  # (., 2) pred_b per word, per snapshot


class LatentTables(NamedTuple):
    """The arrays of `nlmcs.model.tables.LatentTables` (columns: L_ above)."""

    sig_meta: np.ndarray  # (S, 7) int
    sig_game: np.ndarray  # (S,) w . x, per snapshot
    sig_expected: np.ndarray  # (S,) E[Q], per snapshot
    sig_p: np.ndarray  # latent states' probabilities (K per signature), per snapshot
    sig_lang: np.ndarray  # their output sums (K), per snapshot
    game_slots: np.ndarray  # w slots of each signature's game features
    latent_phi: np.ndarray  # u slots of each latent state's relevance features (K x M)
    latent_f: np.ndarray  # w slots of its output features (K x M)


class Weights(NamedTuple):
    """The weights and the configuration's scalars, as `ScoreInputs` takes them."""

    u: np.ndarray
    v: np.ndarray
    w: np.ndarray
    null_logit: float
    match_w: np.ndarray  # (2,)
    flag_slots: np.ndarray
    plabel_slots: np.ndarray
    temperature: float
    grounding: bool
    labels: bool  # the text kind (a label layer)
    overlap_w: float  # u of the overlap feature
    overlap_state: bool
    overlap_state_w: float
    meaning: bool
    meaning_w: float
    meaning_state_w: float
    eb: np.ndarray  # (4, 3) the label factors of v (`labels.parent_factors`), per snapshot
    ef: np.ndarray  # (8, 3) (`labels.flag_factors`)


@njit(cache=True)
def _pairwise_block(a, lo, n):
    """numpy's pairwise sum of a[lo:lo + n] for n <= 128: eight running sums."""
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[lo + i]
        return res
    r = np.empty(8)
    for j in range(8):
        r[j] = a[lo + j]
    i = 8
    while i < n - n % 8:
        for j in range(8):
            r[j] += a[lo + i + j]
        i += 8
    res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@njit(cache=True)
def pairwise_sum(a, lo, n):
    """numpy's sum of a[lo:lo + n] (its pairwise summation: blocks of at most 128 summed as
    `_pairwise_block`, a longer run split in halves, the first a multiple of 8, and their sums
    added), so the same value to the last bit. The halves are walked with a stack, not by
    recursion, which numba's on-disk cache does not load back."""
    if n <= 128:
        return _pairwise_block(a, lo, n)
    todo_lo = np.empty(128, np.int64)
    todo_n = np.empty(128, np.int64)  # -1: add the last two sums
    sums = np.empty(128)
    todo_lo[0], todo_n[0] = lo, n
    t, k = 1, 0
    while t:
        t -= 1
        at, m = todo_lo[t], todo_n[t]
        if m < 0:
            k -= 1
            sums[k - 1] = sums[k - 1] + sums[k]
        elif m <= 128:
            sums[k] = _pairwise_block(a, at, m)
            k += 1
        else:
            half = m // 2
            half -= half % 8
            todo_n[t] = -1
            todo_lo[t + 1], todo_n[t + 1] = at, half
            todo_lo[t + 2], todo_n[t + 2] = at + half, m - half
            t += 3
    return sums[0]


@njit(cache=True, inline="always")
def game_sum(w, slots):
    """w . x of a signature's game features: numpy's sum of w[slots] (`pairwise_sum`)."""
    picked = np.empty(len(slots))
    for i in range(len(slots)):
        picked[i] = w[U(slots[i])]
    return pairwise_sum(picked, 0, len(slots))


@njit(cache=True)
def _part_sums(t, wt, pid, epoch, w0, n_rows, n_words):
    """A part's relevance (action types), language and predicate sums (`_part_scores`)."""
    if t.part_meta[pid, STAMP] == epoch:
        return
    r0, p0, phi = t.part_meta[pid, P_ROWS], t.part_meta[pid, P_WORDS], t.part_meta[pid, P_PHI]
    rows, norm = t.unit_rows, t.unit_norm
    for r in range(n_rows):
        t.part_phi[r0 + r] = 0.0
        t.part_lang[r0 + r] = 0.0
    for j in range(n_words):
        x = norm[w0 + j]
        r = U(r0 + rows[w0 + j])
        if phi:
            t.part_phi[r] += wt.u[U(t.part_phi_slots[p0 + j])] * x
        t.part_lang[r] += wt.w[U(t.part_lang_slots[p0 + j])] * x
        for c in range(2):
            t.part_pred[p0 + j, c] = wt.w[U(t.part_pred_slots[p0 + j, c])] * x
    t.part_meta[pid, STAMP] = epoch


@njit(cache=True)
def _action_sums(t, wt, ak, epoch, uid):
    """An action key's rel_a, lang_a, pred_a (`ValueNetwork._action_sums_of`)."""
    if t.act_meta[ak, STAMP] == epoch:
        return
    um = t.unit_meta
    w0, u0, n_rows, n_words = um[uid, U_WORDS], um[uid, U_ROWS], um[uid, U_C], um[uid, U_W]
    pa, pb = t.act_meta[ak, A_ATYPE], t.act_meta[ak, A_ACTION]
    if t.part_meta[pa, STAMP] != epoch:
        _part_sums(t, wt, pa, epoch, w0, n_rows, n_words)
    r0, p0 = t.part_meta[pa, P_ROWS], t.part_meta[pa, P_WORDS]
    b0, c0 = t.part_meta[pb, P_ROWS], t.part_meta[pb, P_WORDS]
    rel, lang, pred = action_sums(
        t.unit_rows[w0:w0 + n_words], t.unit_norm[w0:w0 + n_words],
        t.unit_phi[u0:u0 + n_rows], t.part_phi[r0:r0 + n_rows], t.part_lang[r0:r0 + n_rows],
        t.part_pred[p0:p0 + n_words], wt.w, t.part_lang_slots[c0:c0 + n_words],
        t.part_pred_slots[c0:c0 + n_words], wt.overlap_w, t.part_overlap[b0:b0 + n_rows])
    a0, a1 = t.act_meta[ak, A_ROWS], t.act_meta[ak, A_WORDS]
    for r in range(n_rows):
        if wt.meaning:  # `rel + u[meaning] * action.meaning`
            t.act_rel[a0 + r] = rel[r] + wt.meaning_w * t.part_meaning[b0 + r]
        else:
            t.act_rel[a0 + r] = rel[r]
        t.act_lang[a0 + r] = lang[r]
    for j in range(n_words):
        t.act_pred[a1 + j, 0] = pred[j, 0]
        t.act_pred[a1 + j, 1] = pred[j, 1]
    t.act_meta[ak, STAMP] = epoch


@njit(cache=True)
def _state_sums(t, wt, sk, epoch, uid):
    """A state key's rel_b, lang_b, pred_b (`ValueNetwork._state_sums_of`)."""
    if t.state_meta[sk, STAMP] == epoch:
        return
    um = t.unit_meta
    w0, n_rows, n_words = um[uid, U_WORDS], um[uid, U_C], um[uid, U_W]
    k0, k1 = t.state_meta[sk, K_LO], t.state_meta[sk, K_HI]
    r0, q0 = t.state_meta[sk, K_ROWS], t.state_meta[sk, K_WORDS]
    overlap = np.zeros(n_rows)
    meaning = np.zeros(n_rows)
    for r in range(n_rows):
        t.state_lang[r0 + r] = 0.0
    for j in range(n_words):
        t.state_pred[q0 + j, 0] = 0.0
        t.state_pred[q0 + j, 1] = 0.0
    for k in range(k0, k1):
        pid = t.state_parts[k]
        if t.part_meta[pid, STAMP] != epoch:
            _part_sums(t, wt, pid, epoch, w0, n_rows, n_words)
        b0, p0 = t.part_meta[pid, P_ROWS], t.part_meta[pid, P_WORDS]
        for r in range(n_rows):
            t.state_lang[r0 + r] += t.part_lang[b0 + r]
            overlap[r] += t.part_overlap[b0 + r]
            meaning[r] += t.part_meaning[b0 + r]
        for j in range(n_words):
            t.state_pred[q0 + j, 0] += t.part_pred[p0 + j, 0]
            t.state_pred[q0 + j, 1] += t.part_pred[p0 + j, 1]
    for r in range(n_rows):
        rel = wt.overlap_state_w * overlap[r] if wt.overlap_state else 0.0
        if wt.meaning:
            rel = rel + wt.meaning_state_w * meaning[r]
        t.state_rel[r0 + r] = rel
    t.state_meta[sk, STAMP] = epoch


@njit(cache=True)
def unit_sums(t, wt, uid, epoch):
    """Candidate set `uid`'s own sums under snapshot `epoch` (`ValueNetwork._unit_scores`,
    `_static`), with numpy's arithmetic in numpy's order, so the same values to the last bit:
    per row, its words' bag-of-words and word x unit weights (two added, times the word's
    value) summed in word order (`np.bincount`); with labels, each word's static label logits
    (seven weights added in order) and their factors, by numpy itself (`labels.
    static_factors`: compiled code's `exp` differs from numpy's in the last bit)."""
    um = t.unit_meta
    w0, r0, n_rows, n_words = um[uid, U_WORDS], um[uid, U_ROWS], um[uid, U_C], um[uid, U_W]
    for r in range(n_rows):
        t.unit_phi[r0 + r] = 0.0
    for j in range(n_words):
        x = (wt.u[U(t.unit_phi_word[w0 + j, 0])] + wt.u[U(t.unit_phi_word[w0 + j, 1])]) \
            * t.unit_norm[w0 + j]
        t.unit_phi[U(r0 + t.unit_rows[w0 + j])] += x
    if wt.labels:
        for j in range(n_words):
            for lab in range(3):
                x = 0.0
                for k in range(7):
                    x += wt.v[U(t.unit_psi[w0 + j, lab, k])]
                t.unit_static[w0 + j, lab] = x
        static = t.unit_static[w0:w0 + n_words]
        temperature = wt.temperature
        with objmode(factors="float64[:, :]"):
            factors = static_factors(static, temperature)
        t.unit_sexp[w0:w0 + n_words] = factors
    um[uid, STAMP] = epoch


@njit(cache=True)
def text_score(t, wt, s, epoch):
    """E[Q] of signature `s` under snapshot `epoch` (its candidate set's own sums brought to
    this snapshot first, `unit_sums`), computed once per snapshot; its relevance and language scores
    are kept for the datapoints. The first candidate of a set scored under a snapshot lends
    its label marginals to the others (`text_expected`'s base)."""
    if t.sig_meta[s, STAMP] == epoch:
        return t.sig_expected[s]
    sm, um = t.sig_meta, t.unit_meta
    ak, uid, sk = sm[s, S_ACTION], sm[s, S_UNIT], sm[s, S_STATE]
    w0, n_rows, n_words = um[uid, U_WORDS], um[uid, U_C], um[uid, U_W]
    if um[uid, STAMP] != epoch:
        unit_sums(t, wt, uid, epoch)
    if t.act_meta[ak, STAMP] != epoch:
        _action_sums(t, wt, ak, epoch, uid)
    if t.state_meta[sk, STAMP] != epoch:
        _state_sums(t, wt, sk, epoch, uid)
    game = game_sum(wt.w, t.game_slots[sm[s, S_GAME_LO]:sm[s, S_GAME_HI]])
    f0 = sm[s, S_FLAGS]
    flags = t.flags[f0:f0 + n_words]
    lend = wt.labels and um[uid, U_BASE] != epoch
    if wt.labels and not lend:
        b = um[uid, U_BASE_FLAGS]
        base_marg, base_flags = t.unit_marg[w0:w0 + n_words], t.flags[b:b + n_words]
    else:
        base_marg, base_flags = t.unit_marg[w0:w0], t.flags[f0:f0]
    a0, a1 = t.act_meta[ak, A_ROWS], t.act_meta[ak, A_WORDS]
    r0, q0 = t.state_meta[sk, K_ROWS], t.state_meta[sk, K_WORDS]
    p, lang, expected, marg = text_expected(
        n_rows, t.unit_rows[w0:w0 + n_words], t.unit_parent[w0:w0 + n_words],
        t.unit_order[w0:w0 + n_words], t.act_rel[a0:a0 + n_rows], t.state_rel[r0:r0 + n_rows],
        wt.null_logit, t.act_lang[a0:a0 + n_rows], t.state_lang[r0:r0 + n_rows],
        t.act_pred[a1:a1 + n_words], t.state_pred[q0:q0 + n_words],
        t.unit_norm[w0:w0 + n_words], wt.grounding, wt.match_w,
        t.unit_static[w0:w0 + n_words], t.unit_sexp[w0:w0 + n_words], flags, wt.labels, wt.v,
        wt.flag_slots, wt.plabel_slots, wt.temperature, game, base_marg, base_flags, wt.eb,
        wt.ef)
    if lend:
        for j in range(n_words):
            for c in range(3):
                t.unit_marg[w0 + j, c] = marg[j, c]
        um[uid, U_BASE_FLAGS] = f0
        um[uid, U_BASE] = epoch
    lo = t.sig_rows_lo[s]
    for r in range(n_rows + 1):
        t.sig_p[lo + r] = p[r]
        t.sig_lang[lo + r] = lang[r]
    t.sig_game[s] = game
    t.sig_expected[s] = expected
    sm[s, STAMP] = epoch
    return expected


@njit(cache=True)
def latent_values(u, w, phi, f, k, m, game_slots, temperature):
    """(game, p (K), lang (K), E[Q]) of one signature of the kinds without text: K latent
    states, each with the sum of M relevance weights (its logit) and of M output weights,
    E[Q] = game + sum_k p_k lang_k (`reference.forward`; linear: K = 0, one state of p 1 and
    lang 0, E[Q] = game). phi and f are the K x M slots row after row. The per-signature path
    and the tables both score with this, so the same values to the last bit; each sum is
    numpy's (`pairwise_sum`)."""
    game = game_sum(w, game_slots)
    if k == 0:
        return game, np.ones(1), np.zeros(1), game
    logits = np.empty(k)
    lang = np.empty(k)
    row = np.empty(m)
    for a in range(k):
        for j in range(m):
            row[j] = u[U(phi[a * m + j])]
        logits[a] = pairwise_sum(row, 0, m)
        for j in range(m):
            row[j] = w[U(f[a * m + j])]
        lang[a] = pairwise_sum(row, 0, m)
    p = np.empty(k)
    softmax_into(logits, p, temperature)
    total = 0.0
    for a in range(k):
        total += p[a] * lang[a]
    return game, p, lang, game + total


@njit(cache=True)
def latent_score(t, wt, s, epoch):
    """`text_score` of the kinds without text (`latent_values` from the tables)."""
    if t.sig_meta[s, STAMP] == epoch:
        return t.sig_expected[s]
    meta = t.sig_meta[s]
    k, m, a0 = meta[L_K], meta[L_M], meta[L_SLOTS]
    game, p, lang, expected = latent_values(
        wt.u, wt.w, t.latent_phi[a0:a0 + k * m], t.latent_f[a0:a0 + k * m], k, m,
        t.game_slots[meta[L_GAME_LO]:meta[L_GAME_HI]], wt.temperature)
    r0 = meta[L_ROWS]
    for a in range(len(p)):
        t.sig_p[r0 + a] = p[a]
        t.sig_lang[r0 + a] = lang[a]
    t.sig_game[s] = game
    t.sig_expected[s] = expected
    t.sig_meta[s, STAMP] = epoch
    return expected


@njit(cache=True)
def latent_sample(t, wt, s, epoch, rng):
    """`ValueNetwork.sample` of the kinds without text: the latent state y from one uniform
    draw (linear: none drawn, y 0), q = game + its output sum."""
    if t.sig_meta[s, STAMP] != epoch:
        latent_score(t, wt, s, epoch)
    k, r0 = t.sig_meta[s, L_K], t.sig_meta[s, L_ROWS]
    if k == 0:
        return 0, np.empty(0, np.int64), t.sig_game[s]
    y = draw(t.sig_p[r0:r0 + k], rng.random())
    return y, np.empty(0, np.int64), t.sig_game[s] + t.sig_lang[r0 + y]


def _latent(t) -> bool:
    return getattr(t, "instance_class", None) is LatentTables


def score(t, wt, s, epoch):
    """E[Q] of signature `s` under snapshot `epoch` from either tables (compiled code only)."""
    raise NotImplementedError("compiled code only")


def sample(t, wt, s, epoch, rng):
    """A datapoint (y, labels, q) of signature `s` from either tables (compiled code only)."""
    raise NotImplementedError("compiled code only")


@overload(score)
def _score(t, wt, s, epoch):
    if _latent(t):
        return lambda t, wt, s, epoch: latent_score(t, wt, s, epoch)
    return lambda t, wt, s, epoch: text_score(t, wt, s, epoch)


@overload(sample)
def _sample(t, wt, s, epoch, rng):
    if _latent(t):
        return lambda t, wt, s, epoch, rng: latent_sample(t, wt, s, epoch, rng)
    return lambda t, wt, s, epoch, rng: text_sample(t, wt, s, epoch, rng)


@njit(cache=True)
def agent_expected(t, wt, sids, epoch):
    """E[Q] of one agent's candidates (`sids`) under snapshot `epoch`."""
    out = np.empty(len(sids))
    stamp, kept = t.sig_meta[:, STAMP], t.sig_expected
    for i in range(len(sids)):
        s = sids[i]
        out[i] = kept[s] if stamp[s] == epoch else score(t, wt, s, epoch)
    return out


@njit(cache=True)
def greedy(q, lo, hi, rng):
    """`mc_rollouts.greedy` of q[lo:hi]: the best (ties within 1e-12 broken by one
    `integers(ties)` draw), as an index from lo."""
    top = q[lo]
    for i in range(lo + 1, hi):
        top = max(top, q[i])
    top -= 1e-12
    ties = 0
    first = -1
    for i in range(lo, hi):
        if q[i] >= top:
            ties += 1
            if first < 0:
                first = i - lo
    if ties == 1:
        return first
    pick = rng.integers(0, ties)
    for i in range(lo, hi):
        if q[i] >= top:
            if pick == 0:
                return i - lo
            pick -= 1
    return first


@njit(cache=True)
def text_sample(t, wt, s, epoch, rng):
    """`ValueNetwork.sample` of signature `s` on the compiled backend: the sentence y from one
    uniform draw, then (text, y a sentence) its words' labels from one draw each; returns
    (y, labels, q)."""
    if t.sig_meta[s, STAMP] != epoch:
        text_score(t, wt, s, epoch)
    sm, um = t.sig_meta, t.unit_meta
    uid, ak, sk = sm[s, S_UNIT], sm[s, S_ACTION], sm[s, S_STATE]
    w0, n_rows, n_words = um[uid, U_WORDS], um[uid, U_C], um[uid, U_W]
    lo = t.sig_rows_lo[s]
    y = draw(t.sig_p[lo:lo + n_rows + 1], rng.random())
    q = t.sig_game[s] + t.sig_lang[lo + y]
    if not (wt.labels and y < n_rows):
        return y, np.empty(0, np.int64), q
    rows = t.unit_rows[w0:w0 + n_words]
    a, b = 0, 0  # the sentence's words (rows are sorted)
    while a < n_words and rows[a] < y:
        a += 1
    b = a
    while b < n_words and rows[b] < y + 1:
        b += 1
    uniforms = rng.random(b - a)
    a1, q0, f0 = t.act_meta[ak, A_WORDS], t.state_meta[sk, K_WORDS], sm[s, S_FLAGS]
    labels, zq = sample_labels(
        t.unit_static[w0:w0 + n_words], t.unit_sexp[w0:w0 + n_words],
        t.flags[f0:f0 + n_words], wt.v, wt.flag_slots, wt.plabel_slots, wt.temperature,
        t.act_pred[a1:a1 + n_words], t.state_pred[q0:q0 + n_words], wt.grounding, wt.match_w,
        t.unit_norm[w0:w0 + n_words], t.unit_parent[w0:w0 + n_words],
        t.unit_order[w0:w0 + n_words], a, b, uniforms, wt.eb, wt.ef)
    return y, labels, q + zq


@njit(cache=True)
def choose_turn(t, wt, sids, bounds, epoch, eps, learn, rng):
    """One simulated turn of `joint_move` for every agent (agent a's candidates are
    sids[bounds[a]:bounds[a + 1]], in its actions' order; each has one at least): a uniform
    draw against `eps`; an agent that exploits takes the best E[Q] (`greedy`), one that
    explores one `integers(n)` draw (the uniform roll-out policy); with `learn`, the chosen
    candidate's datapoint (`sample`). Returns each agent's pick (an index into its actions)
    and the datapoints: signature, y, q, and the labels (flat, from `label_bounds`)."""
    n = len(bounds) - 1
    picks = np.empty(n, np.int64)
    q = np.empty(len(sids))
    dp_sig = np.empty(n if learn else 0, np.int64)
    dp_y = np.empty(n if learn else 0, np.int64)
    dp_q = np.empty(n if learn else 0)
    label_bounds = np.zeros(n + 1 if learn else 1, np.int64)
    labels = np.empty(0, np.int64)
    stamp, kept = t.sig_meta[:, STAMP], t.sig_expected
    for a in range(n):
        lo, hi = bounds[a], bounds[a + 1]
        k = -1
        if rng.random() >= eps:
            for i in range(lo, hi):
                s = sids[i]
                q[i] = kept[s] if stamp[s] == epoch else score(t, wt, s, epoch)
            k = greedy(q, lo, hi, rng)
        if k < 0:
            k = rng.integers(0, hi - lo)
        picks[a] = k
        if learn:
            s = sids[lo + k]
            y, z, dq = sample(t, wt, s, epoch, rng)
            dp_sig[a], dp_y[a], dp_q[a] = s, y, dq
            label_bounds[a + 1] = label_bounds[a] + len(z)
            labels = np.concatenate((labels, z))
    return picks, dp_sig, dp_y, dp_q, labels, label_bounds
