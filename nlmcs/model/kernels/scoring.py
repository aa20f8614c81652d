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
from numba import uint64 as U

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

__all__ = ["ActionInputs", "LabelDraw", "ScoreInputs", "action_sums", "draw", "label_factors",
           "sample_labels", "static_factors", "text_expected", "text_scores"]


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
def label_factors(v, flag_slots, plabel_slots, temperature, eb=None, ef=None):
    """The label layer's factors (`labels.parent_factors` (4, 3), `flag_factors` (8, 3)) of
    weights v: those given (a caller keeps them per snapshot), else computed, which gives the
    same values (the same compiled arithmetic)."""
    if eb is None:  # both or neither
        return (parent_factors(v, plabel_slots, temperature),
                flag_factors(v, flag_slots, temperature))
    return eb, ef


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
    temperature, game, base_marg, base_flags, eb=None, ef=None,
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
    marginal was copied takes the base's marginal as it is (the value it would compute).

    `eb`, `ef`: the label factors of these weights (`labels.parent_factors`, `flag_factors`)
    where the caller keeps them per snapshot (the tables' `Weights`), else computed here."""
    n_words = len(rows)
    p, lang = relevance_rows(n_rows, rel_a, rel_b, null_logit, lang_a, lang_b, temperature)
    per_row = lang.copy()
    marg = np.empty((n_words if labels else 0, 3))
    if labels and n_words:
        eb, ef = label_factors(v, flag_slots, plabel_slots, temperature, eb, ef)
        ea = np.empty(3)
        block = np.empty((1, 4, 3))
        tot = np.empty(4)
        use_base = len(base_marg) == n_words
        redone = np.zeros(n_words if use_base else 0, np.bool_)
        for i in range(len(order)):
            j = U(order[i])
            par = parent[j]
            if use_base:
                if (flags[j, 0] == base_flags[j, 0] and flags[j, 1] == base_flags[j, 1]
                        and flags[j, 2] == base_flags[j, 2] and (par < 0 or not redone[U(par)])):
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
                pu = U(par)
                for lab in range(3):
                    marg[j, lab] = (marg[pu, 0] * (ea[lab] * eb[0, lab] / tot[0])
                                    + marg[pu, 1] * (ea[lab] * eb[1, lab] / tot[1])
                                    + marg[pu, 2] * (ea[lab] * eb[2, lab] / tot[2]))
        for j in range(n_words):  # as `text_scores` (a helper per word costs 2x here)
            p0 = pred_a[j, 0] + pred_b[j, 0]
            p1 = pred_a[j, 1] + pred_b[j, 1]
            if grounding:
                if flags[j, 2]:
                    p0 += match_w[0] * norm[j]
                if flags[j, 0]:
                    p1 += match_w[1] * norm[j]
            per_row[U(rows[j])] += marg[j, 0] * p0 + marg[j, 1] * p1
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
        own[U(rows[j])] += w[U(lang_slots[j])] * norm[j]
    lang = np.empty(n)
    for r in range(n):
        lang[r] = atype_lang[r] + own[r]
    pred = np.empty((len(rows), 2))
    for j in range(len(rows)):
        for c in range(2):
            pred[j, c] = atype_pred[j, c] + w[U(pred_slots[j, c])] * norm[j]
    return rel, lang, pred


@njit(cache=True)
def sample_labels(static, static_exp, flags, v, flag_slots, plabel_slots, temperature, pred_a,
                  pred_b, grounding, match_w, norm, parent, order, lo, hi, uniforms, eb=None,
                  ef=None):
    """Labels z of the words lo..hi of one sentence drawn from p(z | parent's label), parents
    first (each word's label by `draw` from its uniform, as `reference.draw`), and their
    predicate score sum_j pred[j, z_j] (background 0): pred is pred_a + pred_b, the two pieces
    of `text_scores`, and with `grounding` the matches are added as it adds them (pred_b empty:
    pred_a is the full (Wc, 3) score). Parameters: `LabelDraw`. Each word's conditionals are
    computed as it is drawn, with `text_scores`' arithmetic; `eb`, `ef` as `text_expected`
    takes them."""
    eb, ef = label_factors(v, flag_slots, plabel_slots, temperature, eb, ef)
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
