"""Compiled (numba) scoring of one candidate of the text kinds: its E[Q] (`text_expected`, what
the search reads, or `text_scores` with the label layer's per-word arrays), the action-side
weight sums it is built from (`action_sums`) and the draw of a sentence's labels
(`sample_labels`).

Each kernel computes what `nlmcs.model.reference` computes (the plain numpy forward pass they are
tested against, within 1e-9, and the same games), in one call with plain loops: numpy spends
most of its time in per-call overhead on arrays of a few hundred entries. The inputs of each
kernel are spelled out by a named tuple (`ScoreInputs`, ...) whose fields are the kernel's
parameters in order: callers build the tuple by name and pass it unpacked (`text_expected(
*inputs, ...)`), since numba types a named tuple on every call at twice the cost of its fields
(these run tens of thousands of times per search step). Names follow the paper: u weighs phi
(relevance), v psi (labels), w f (output); C candidate sentences, Wc their kept words.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from nlmcs.model.kernels.labels import (
    ROOT,
    conditionals_from_factors,
    draw,
    factor_rows,
    flag_factors,
    parent_factors,
    propagate,
    softmax_into,
    static_factors,
    word_rows,
)

__all__ = ["ActionInputs", "LabelDraw", "ScoreInputs", "action_sums", "draw", "sample_labels",
           "static_factors", "text_expected", "text_scores"]


class ScoreInputs(NamedTuple):
    """The parameters of `text_scores` (and the first of `text_expected`), in order. The weight
    sums that signatures share come in precomputed (`ValueNetwork`), each as the sum of a piece
    of the candidate's action (`_a`) and a piece of the agent's state (`_b`), which all of the
    agent's candidates share."""

    n_rows: int  # C candidate sentences
    rows: np.ndarray  # (Wc,) candidate row of each word
    parent: np.ndarray  # (Wc,) local index of the parent word, -1 under the root
    order: np.ndarray  # (Wc,) the words, parents first
    rel_a: np.ndarray  # (C,) relevance logits u . phi, action side
    rel_b: np.ndarray  # (C,) the same, state side
    null_logit: float  # NULL's logit
    lang_a: np.ndarray  # (C,) w . f_language per row, action side
    lang_b: np.ndarray  # (C,) the same, state side
    pred_a: np.ndarray  # (Wc, 2) w . f_predicate per word under labels action, state
    pred_b: np.ndarray  # (Wc, 2) the same, state side
    norm: np.ndarray  # (Wc,) value of a word feature (1, or 1 / its sentence's length)
    grounding: bool  # add the two grounding (match) features
    match_w: np.ndarray  # (2,) their weights
    static: np.ndarray  # (Wc, 3) the words' static label logits
    static_exp: np.ndarray  # (Wc, 3) their factors (`labels.static_factors`)
    flags: np.ndarray  # (Wc, 3) bool: word is a state / unit / action word
    labels: bool  # the kind has a label layer (text; not relevance-only)
    v: np.ndarray  # the label layer's weight table
    flag_slots: np.ndarray  # (3, 3) v slots of each flag under each label
    plabel_slots: np.ndarray  # (4, 3) v slots of each parent label under each label
    temperature: float
    game: float  # w . x of the game features


class ActionInputs(NamedTuple):
    """The parameters of `action_sums`, in order."""

    rows: np.ndarray  # (Wc,) candidate row of each word
    norm: np.ndarray  # (Wc,)
    unit_phi: np.ndarray  # (C,) u . phi of bag of words + word x unit (cached per set)
    atype_phi: np.ndarray  # (C,) u . phi of word x action type (cached per set and type)
    atype_lang: np.ndarray  # (C,) w . f_language of the action type part
    atype_pred: np.ndarray  # (Wc, 2) w . f_predicate of the action type part
    w: np.ndarray  # the output weight table
    lang_slots: np.ndarray  # (Wc,) w slots of the action part's language feature
    pred_slots: np.ndarray  # (Wc, 2) w slots of its predicate features
    overlap_w: float  # u of the overlap feature
    overlap: np.ndarray  # (C,) agent and action words per sentence


class LabelDraw(NamedTuple):
    """The parameters of `sample_labels`, in order."""

    static: np.ndarray  # (Wc, 3) static label logits
    static_exp: np.ndarray  # (Wc, 3) their factors
    flags: np.ndarray  # (Wc, 3) bool
    v: np.ndarray
    flag_slots: np.ndarray  # (3, 3)
    plabel_slots: np.ndarray  # (4, 3)
    temperature: float
    pred_a: np.ndarray  # (Wc, 2) predicate score, action side (or the full (Wc, 3) score)
    pred_b: np.ndarray  # (Wc, 2) state side (empty: pred_a is the full score)
    grounding: bool
    match_w: np.ndarray  # (2,)
    norm: np.ndarray  # (Wc,)
    parent: np.ndarray  # (Wc,)
    order: np.ndarray  # (Wc,)
    lo: int  # the sentence's first word
    hi: int  # one past its last
    uniforms: np.ndarray  # (hi - lo,) one uniform number per word drawn


@njit(cache=True)
def relevance_rows(n_rows, rel_a, rel_b, null_logit, lang_a, lang_b, temperature):
    """Relevance p (C+1, NULL last) and language score per row (C+1) from their two pieces."""
    logits = np.empty(n_rows + 1)
    lang = np.zeros(n_rows + 1)
    for r in range(n_rows):
        logits[r] = rel_a[r] + rel_b[r]
        lang[r] = lang_a[r] + lang_b[r]
    logits[n_rows] = null_logit
    p = np.empty(n_rows + 1)
    softmax_into(logits, p, temperature)
    return p, lang


@njit(cache=True)
def text_scores(
    n_rows, rows, parent, order, rel_a, rel_b, null_logit, lang_a, lang_b, pred_a, pred_b,
    norm, grounding, match_w, static, static_exp, flags, labels, v, flag_slots, plabel_slots,
    temperature, game,
):
    """E[Q] of one signature of the text kinds (parameters: `ScoreInputs`) and the pieces
    sampling needs: relevance p (C+1), language score per row (C+1), p(z | parent label)
    (Wc, 4, 3), label marginals (Wc, 3) and predicate score per word and label (Wc, 3)."""
    n_words = len(rows)
    p, lang = relevance_rows(n_rows, rel_a, rel_b, null_logit, lang_a, lang_b, temperature)
    cond = np.zeros((n_words, 4, 3))
    marg = np.zeros((n_words, 3))
    pred = np.zeros((n_words, 3))
    per_row = lang.copy()
    if labels:
        conditionals_from_factors(static, static_exp, flags, v, flag_slots, plabel_slots,
                                   temperature, cond)
        propagate(cond, np.arange(len(parent)), parent, order, marg)
        for j in range(n_words):
            pred[j, 0] = pred_a[j, 0] + pred_b[j, 0]
            pred[j, 1] = pred_a[j, 1] + pred_b[j, 1]
            if grounding:  # f_match: the word is an action word (label A) / state word (S)
                if flags[j, 2]:
                    pred[j, 0] += match_w[0] * norm[j]
                if flags[j, 0]:
                    pred[j, 1] += match_w[1] * norm[j]
            per_row[rows[j]] += marg[j, 0] * pred[j, 0] + marg[j, 1] * pred[j, 1]
    expected = game
    for r in range(n_rows + 1):
        expected += p[r] * per_row[r]
    return p, lang, cond, marg, pred, expected


@njit(cache=True)
def text_expected(
    n_rows, rows, parent, order, rel_a, rel_b, null_logit, lang_a, lang_b, pred_a, pred_b,
    norm, grounding, match_w, static, static_exp, flags, labels, v, flag_slots, plabel_slots,
    temperature, game, base_marg, base_flags,
):
    """`text_scores` (parameters: `ScoreInputs`, then the base) without the per-word arrays
    only sampling needs: relevance p (C+1),
    language score per row (C+1), E[Q] and the label marginals (Wc, 3), with the same
    arithmetic in the same order (the same values to the last bit). A word's conditionals live
    only until its marginal is taken, so a search's many scored candidates keep no (Wc, 4, 3)
    array each.

    `base_marg` (empty: none) are the marginals of another candidate of the same words under
    the same weights, `base_flags` its word flags: the candidates of one agent differ in the
    flags of a few words (those its action names), and a word's marginal depends only on its
    own flags and its parent's marginal, so a word whose flags match and whose parent's
    marginal was copied takes the base's marginal as it is (the value it would compute)."""
    n_words = len(rows)
    p, lang = relevance_rows(n_rows, rel_a, rel_b, null_logit, lang_a, lang_b, temperature)
    per_row = lang.copy()
    marg = np.empty((n_words if labels else 0, 3))
    if labels and n_words:
        eb = parent_factors(v, plabel_slots, temperature)
        ef = flag_factors(v, flag_slots, temperature)
        ea = np.empty(3)
        block = np.empty((1, 4, 3))
        tot = np.empty(4)
        use_base = len(base_marg) == n_words
        redone = np.zeros(n_words if use_base else 0, np.bool_)
        for i in range(len(order)):
            j = order[i]
            par = parent[j]
            if use_base:
                if (flags[j, 0] == base_flags[j, 0] and flags[j, 1] == base_flags[j, 1]
                        and flags[j, 2] == base_flags[j, 2] and (par < 0 or not redone[par])):
                    marg[j, 0] = base_marg[j, 0]
                    marg[j, 1] = base_marg[j, 1]
                    marg[j, 2] = base_marg[j, 2]
                    continue
                redone[j] = True
            pat = int(flags[j, 0]) + 2 * int(flags[j, 1]) + 4 * int(flags[j, 2])
            for lab in range(3):
                ea[lab] = static_exp[j, lab] * ef[pat, lab]
            low = False
            for lp in range(4):
                tot[lp] = ea[0] * eb[lp, 0] + ea[1] * eb[lp, 1] + ea[2] * eb[lp, 2]
                low = low or tot[lp] <= 1e-250
            if low:  # `factor_rows` would fall back: take the direct conditionals
                word_rows(j, j + 1, static, flags, eb, v, flag_slots, plabel_slots,
                           temperature, block, 0)
                for lab in range(3):
                    if par < 0:
                        marg[j, lab] = block[0, ROOT, lab]
                    else:
                        marg[j, lab] = (marg[par, 0] * block[0, 0, lab]
                                        + marg[par, 1] * block[0, 1, lab]
                                        + marg[par, 2] * block[0, 2, lab])
            elif par < 0:  # only the rows a marginal reads, each as `factor_rows` has it
                for lab in range(3):
                    marg[j, lab] = ea[lab] * eb[ROOT, lab] / tot[ROOT]
            else:
                for lab in range(3):
                    marg[j, lab] = (marg[par, 0] * (ea[lab] * eb[0, lab] / tot[0])
                                    + marg[par, 1] * (ea[lab] * eb[1, lab] / tot[1])
                                    + marg[par, 2] * (ea[lab] * eb[2, lab] / tot[2]))
        for j in range(n_words):  # as `text_scores` (a helper per word costs 2x here)
            p0 = pred_a[j, 0] + pred_b[j, 0]
            p1 = pred_a[j, 1] + pred_b[j, 1]
            if grounding:
                if flags[j, 2]:
                    p0 += match_w[0] * norm[j]
                if flags[j, 0]:
                    p1 += match_w[1] * norm[j]
            per_row[rows[j]] += marg[j, 0] * p0 + marg[j, 1] * p1
    expected = game
    for r in range(n_rows + 1):
        expected += p[r] * per_row[r]
    return p, lang, expected, marg


@njit(cache=True)
def action_sums(rows, norm, unit_phi, atype_phi, atype_lang, atype_pred, w, lang_slots,
                pred_slots, overlap_w, overlap):
    """`text_expected`'s action-side inputs (rel_a, lang_a, pred_a) of one candidate action
    (parameters: `ActionInputs`):
    the agent's and action type's sums (cached, shared by the type's actions) plus the action
    part's language and predicate weights per word, with the network's numpy arithmetic in
    its order (np.bincount adds a row's words in word order from 0), so the same values to the
    last bit without the action part's temporary arrays."""
    n = len(unit_phi)
    rel = np.empty(n)
    for r in range(n):
        rel[r] = unit_phi[r] + atype_phi[r]
        rel[r] += overlap_w * overlap[r]
    own = np.zeros(n)
    for j in range(len(rows)):
        own[rows[j]] += w[lang_slots[j]] * norm[j]
    lang = np.empty(n)
    for r in range(n):
        lang[r] = atype_lang[r] + own[r]
    pred = np.empty((len(rows), 2))
    for j in range(len(rows)):
        for c in range(2):
            pred[j, c] = atype_pred[j, c] + w[pred_slots[j, c]] * norm[j]
    return rel, lang, pred


@njit(cache=True)
def sample_labels(static, static_exp, flags, v, flag_slots, plabel_slots, temperature, pred_a,
                  pred_b, grounding, match_w, norm, parent, order, lo, hi, uniforms):
    """Labels z of the words lo..hi of one sentence drawn from p(z | parent's label), parents
    first (each word's label by `draw` from its uniform, as `reference.draw`), and their
    predicate score sum_j pred[j, z_j] (background 0): pred is pred_a + pred_b, the two pieces
    of `text_scores`, and with `grounding` the matches are added as it adds them (pred_b empty:
    pred_a is the full (Wc, 3) score). Parameters: `LabelDraw`. Each word's conditionals are
    computed as it is drawn, with `text_scores`' arithmetic."""
    eb = parent_factors(v, plabel_slots, temperature)
    ef = flag_factors(v, flag_slots, temperature)
    ea = np.empty(3)
    block = np.empty((1, 4, 3))
    labels = np.full(hi - lo, -1, np.int64)
    q = 0.0
    i = 0
    for t in range(len(order)):
        j = order[t]
        if j < lo or j >= hi:
            continue
        pat = int(flags[j, 0]) + 2 * int(flags[j, 1]) + 4 * int(flags[j, 2])
        for lab in range(3):
            ea[lab] = static_exp[j, lab] * ef[pat, lab]
        if not factor_rows(ea, eb, block, 0):
            word_rows(j, j + 1, static, flags, eb, v, flag_slots, plabel_slots, temperature,
                       block, 0)
        par = parent[j]
        lp = ROOT if par < 0 else labels[par - lo]
        lab = draw(block[0, lp], uniforms[i])
        i += 1
        labels[j - lo] = lab
        if lab < 2:
            x = pred_a[j, lab] + pred_b[j, lab] if len(pred_b) else pred_a[j, lab]
            if grounding and flags[j, 2 - 2 * lab]:  # action word (A) / state word (S)
                x += match_w[lab] * norm[j]
            q += x
    return labels, q


class AgentInputs(NamedTuple):
    """The parameters of `agent_expected`, in order: the candidates' signature ids, the weight
    snapshot, the weight-free tables of `nlmcs.model.tables.SignatureTables` with the stamped
    per-snapshot sums it keeps beside them (a stamp is the snapshot an entry was computed
    under), then the agent's candidate set and state sums, which all its candidates share."""

    sids: np.ndarray  # (n,) the candidates' signature ids
    epoch: int  # the weight snapshot
    sig_meta: np.ndarray  # (S, 5) int: stamp, action key, game slots lo, hi, flags lo
    sig_rows_lo: np.ndarray  # (S,) first of its C+1 entries in sig_p and sig_lang
    sig_game: np.ndarray  # (S,) w . x, per snapshot
    sig_expected: np.ndarray  # (S,) E[Q], per snapshot
    sig_p: np.ndarray  # relevance (C+1 per signature), per snapshot
    sig_lang: np.ndarray  # language score per row (C+1), per snapshot
    game_slots: np.ndarray  # w slots of each signature's game features
    flags: np.ndarray  # (., 3) bool: each signature's word flags (Wc per signature)
    act_meta: np.ndarray  # (A, 5) int: stamp, action-type part, action part, rows lo, words lo
    act_rel: np.ndarray  # rel_a (C per action key), per snapshot
    act_lang: np.ndarray  # lang_a (C), per snapshot
    act_pred: np.ndarray  # (., 2) pred_a (Wc), per snapshot
    part_meta: np.ndarray  # (P, 3) int: stamp, rows lo, words lo
    part_phi_slots: np.ndarray  # (.,) u slots of word x action type (action-type parts)
    part_lang_slots: np.ndarray  # (.,) w slots of the language feature
    part_pred_slots: np.ndarray  # (., 2) w slots of the predicate features
    part_overlap: np.ndarray  # (.,) overlap counts per row (unit-action parts)
    part_meaning: np.ndarray  # (.,) meaning cosines per row (unit-action parts, with meaning)
    part_phi: np.ndarray  # (.,) u . phi per row (action-type parts), per snapshot
    part_lang: np.ndarray  # (.,) w . f_language per row, per snapshot
    part_pred: np.ndarray  # (., 2) w . f_predicate per word, per snapshot
    n_rows: int  # the agent's C candidate sentences
    rows: np.ndarray  # (Wc,)
    parent: np.ndarray  # (Wc,)
    order: np.ndarray  # (Wc,)
    norm: np.ndarray  # (Wc,)
    unit_phi: np.ndarray  # (C,) `ActionInputs.unit_phi`
    static: np.ndarray  # (Wc, 3)
    static_exp: np.ndarray  # (Wc, 3)
    rel_b: np.ndarray  # (C,) the agent's state sums (`ScoreInputs`)
    lang_b: np.ndarray  # (C,)
    pred_b: np.ndarray  # (Wc, 2)
    base_marg: np.ndarray  # (Wc, 3) or empty: `text_expected`'s base
    base_flags: np.ndarray  # (Wc, 3) or empty
    null_logit: float
    match_w: np.ndarray  # (2,)
    u: np.ndarray
    v: np.ndarray
    w: np.ndarray
    flag_slots: np.ndarray
    plabel_slots: np.ndarray
    temperature: float
    grounding: bool
    labels: bool
    overlap_w: float  # u of the overlap feature
    meaning_w: float  # u of the meaning feature (0 without meaning)
    meaning: bool


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


@njit(cache=True)
def agent_expected(
    sids, epoch, sig_meta, sig_rows_lo, sig_game, sig_expected, sig_p, sig_lang, game_slots,
    flags, act_meta, act_rel, act_lang, act_pred, part_meta, part_phi_slots, part_lang_slots,
    part_pred_slots, part_overlap, part_meaning, part_phi, part_lang, part_pred, n_rows, rows,
    parent, order, norm, unit_phi, static, static_exp, rel_b, lang_b, pred_b, base_marg,
    base_flags, null_logit, match_w, u, v, w, flag_slots, plabel_slots, temperature,
    grounding, labels, overlap_w, meaning_w, meaning,
):
    """E[Q] of one agent's candidates (parameters: `AgentInputs`) with `text_expected`'s
    arithmetic, from the sums each candidate's action key and action type keep per snapshot
    (computed here the first time a snapshot asks for them, as `ValueNetwork._action_sums`
    and `_part_scores` compute them), and the candidates already scored under this snapshot
    read back. Returns E[Q] (n,), and the label marginals of the first candidate scored here
    without a base with its place (-1: none), for the caller to lend on."""
    n = len(sids)
    out = np.empty(n)
    n_words = len(rows)
    lent = base_marg
    lent_flags = base_flags
    first = -1
    first_marg = np.empty((0, 3))
    for i in range(n):
        s = sids[i]
        if sig_meta[s, 0] == epoch:
            out[i] = sig_expected[s]
            continue
        ak = sig_meta[s, 1]
        a0, a1 = act_meta[ak, 3], act_meta[ak, 4]
        if act_meta[ak, 0] != epoch:
            pa, pb = act_meta[ak, 1], act_meta[ak, 2]
            r0, w0 = part_meta[pa, 1], part_meta[pa, 2]
            if part_meta[pa, 0] != epoch:  # the action type's sums (`_part_scores`)
                for r in range(n_rows):
                    part_phi[r0 + r] = 0.0
                    part_lang[r0 + r] = 0.0
                for j in range(n_words):
                    part_phi[r0 + rows[j]] += u[part_phi_slots[w0 + j]] * norm[j]
                    part_lang[r0 + rows[j]] += w[part_lang_slots[w0 + j]] * norm[j]
                    for c in range(2):
                        part_pred[w0 + j, c] = w[part_pred_slots[w0 + j, c]] * norm[j]
                part_meta[pa, 0] = epoch
            b0, c0 = part_meta[pb, 1], part_meta[pb, 2]
            rel, lang, pred = action_sums(
                rows, norm, unit_phi, part_phi[r0:r0 + n_rows], part_lang[r0:r0 + n_rows],
                part_pred[w0:w0 + n_words], w, part_lang_slots[c0:c0 + n_words],
                part_pred_slots[c0:c0 + n_words], overlap_w, part_overlap[b0:b0 + n_rows])
            for r in range(n_rows):
                act_rel[a0 + r] = rel[r] + meaning_w * part_meaning[b0 + r] if meaning else rel[r]
                act_lang[a0 + r] = lang[r]
            for j in range(n_words):
                act_pred[a1 + j, 0] = pred[j, 0]
                act_pred[a1 + j, 1] = pred[j, 1]
            act_meta[ak, 0] = epoch
        g0, g1 = sig_meta[s, 2], sig_meta[s, 3]
        game = 0.0
        if g1 > g0:
            slots = game_slots[g0:g1]
            picked = np.empty(g1 - g0)
            for k in range(g1 - g0):
                picked[k] = w[slots[k]]
            game = pairwise_sum(picked, 0, g1 - g0)
        f0 = sig_meta[s, 4]
        p, lang, expected, marg = text_expected(
            n_rows, rows, parent, order, act_rel[a0:a0 + n_rows], rel_b, null_logit,
            act_lang[a0:a0 + n_rows], lang_b, act_pred[a1:a1 + n_words], pred_b, norm,
            grounding, match_w, static, static_exp, flags[f0:f0 + n_words], labels, v,
            flag_slots, plabel_slots, temperature, game, lent, lent_flags)
        if labels and len(lent) != n_words:  # the first without a base lends its marginals
            lent, lent_flags = marg, flags[f0:f0 + n_words]
            first, first_marg = i, marg
        q0 = sig_rows_lo[s]
        for r in range(n_rows + 1):
            sig_p[q0 + r] = p[r]
            sig_lang[q0 + r] = lang[r]
        sig_game[s] = game
        sig_expected[s] = expected
        sig_meta[s, 0] = epoch
        out[i] = expected
    return out, first_marg, first
