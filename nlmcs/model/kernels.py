"""Compiled (numba) loops for the value network's hot paths: scoring a candidate (in full,
`text_scores`, or only what the search reads, `text_expected`), drawing a sentence's labels and
the online update's sweeps (`shared_sweeps`, `expected_sweeps`).

Each kernel computes exactly what the numpy code in `nlmcs.model.network` and
`nlmcs.model.learner` computes (those stay the reference; `tests/model/test_model_kernels.py`
checks both agree within 1e-9 and play the same games), but in one call with plain loops: the
numpy code spends most of its time in per-call overhead on arrays of a few hundred entries.
Names follow the paper: u weighs phi (relevance), v psi (labels), w f (output).
"""

from __future__ import annotations

import numpy as np
from numba import njit

ROOT = 3  # parent label of a word under the sentence root (nlmcs.model.features.ROOT)


@njit(cache=True)
def _softmax_into(x, out, temperature):
    m = x[0] / temperature
    for i in range(1, len(x)):
        m = max(m, x[i] / temperature)
    s = 0.0
    for i in range(len(x)):
        out[i] = np.exp(x[i] / temperature - m)
        s += out[i]
    for i in range(len(x)):
        out[i] /= s


@njit(cache=True)
def _relevance_rows(n_rows, rel_a, rel_b, null_logit, lang_a, lang_b, temperature):
    """Relevance p (C+1, NULL last) and language score per row (C+1) from their two pieces."""
    logits = np.empty(n_rows + 1)
    lang = np.zeros(n_rows + 1)
    for r in range(n_rows):
        logits[r] = rel_a[r] + rel_b[r]
        lang[r] = lang_a[r] + lang_b[r]
    logits[n_rows] = null_logit
    p = np.empty(n_rows + 1)
    _softmax_into(logits, p, temperature)
    return p, lang


@njit(cache=True)
def text_scores(
    n_rows, rows, parent, order,  # candidate sentences and their words (Wc)
    rel_a, rel_b, null_logit,  # (C,) relevance logits in two pieces (see below), NULL's logit
    lang_a, lang_b, pred_a, pred_b,  # (C,) w . f_lang and (Wc, 2) w . f_pred, two pieces each
    norm, grounding, match_w,  # word weights; the grounding features' two weights
    static, static_exp, flags, labels,  # (Wc, 3) static label logits and their exp factors
    v, flag_slots, plabel_slots, temperature, game,  # (`static_factors`), (Wc, 3) word flags
):
    """E[Q] of one signature of the text kinds and the pieces sampling needs: relevance p
    (C+1), language score per row (C+1), p(z | parent label) (Wc, 4, 3), label marginals
    (Wc, 3) and predicate score per word and label (Wc, 3). The weight sums that signatures
    share come in precomputed (`ValueNetwork`), each as the sum of a piece of the candidate's
    action and a piece of the agent's state (which all of its candidates share)."""
    n_words = len(rows)
    p, lang = _relevance_rows(n_rows, rel_a, rel_b, null_logit, lang_a, lang_b, temperature)
    cond = np.zeros((n_words, 4, 3))
    marg = np.zeros((n_words, 3))
    pred = np.zeros((n_words, 3))
    per_row = lang.copy()
    if labels:
        _conditionals_from_factors(static, static_exp, flags, v, flag_slots, plabel_slots,
                                   temperature, cond)
        _propagate(cond, np.arange(len(parent)), parent, order, marg)
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
    """`text_scores` without the per-word arrays only sampling needs: relevance p (C+1),
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
    p, lang = _relevance_rows(n_rows, rel_a, rel_b, null_logit, lang_a, lang_b, temperature)
    per_row = lang.copy()
    marg = np.empty((n_words if labels else 0, 3))
    if labels and n_words:
        eb = _parent_factors(v, plabel_slots, temperature)
        ef = _flag_factors(v, flag_slots, temperature)
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
            if low:  # `_factor_rows` would fall back: take the direct conditionals
                _word_rows(j, j + 1, static, flags, eb, v, flag_slots, plabel_slots,
                           temperature, block, 0)
                for lab in range(3):
                    if par < 0:
                        marg[j, lab] = block[0, ROOT, lab]
                    else:
                        marg[j, lab] = (marg[par, 0] * block[0, 0, lab]
                                        + marg[par, 1] * block[0, 1, lab]
                                        + marg[par, 2] * block[0, 2, lab])
            elif par < 0:  # only the rows a marginal reads, each as `_factor_rows` has it
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
def draw(p, u):
    """`network._draw` with its uniform number u given: the first index whose running sum of p
    exceeds u times the total (the last if none), the sums taken in numpy's order (the
    running sums are added up again rather than kept: the same values, no array)."""
    n = len(p)
    total = 0.0
    for i in range(n):
        total += p[i]
    x = u * total
    acc = 0.0
    for i in range(n):
        acc += p[i]
        if acc > x:
            return i
    return n - 1


@njit(cache=True)
def action_sums(rows, norm, unit_phi, atype_phi, atype_lang, atype_pred, w, lang_slots,
                pred_slots, overlap_w, overlap):
    """`text_expected`'s action-side inputs (rel_a, lang_a, pred_a) of one candidate action:
    the agent's and action type's sums (cached, shared by the type's actions) plus the action
    part's language and predicate weights per word, with `network`'s numpy arithmetic in its
    order (np.bincount adds a row's words in word order from 0), so the same values to the
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
    first (each word's label by `draw` from its uniform, as `network._draw`), and their
    predicate score sum_j pred[j, z_j] (background 0): pred is pred_a + pred_b, the two pieces
    of `text_scores`, and with `grounding` the matches are added as it adds them (pred_b empty:
    pred_a is the full (Wc, 3) score).
    Each word's conditionals are computed as it is drawn, with `text_scores`' arithmetic."""
    eb = _parent_factors(v, plabel_slots, temperature)
    ef = _flag_factors(v, flag_slots, temperature)
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
        if not _factor_rows(ea, eb, block, 0):
            _word_rows(j, j + 1, static, flags, eb, v, flag_slots, plabel_slots, temperature,
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


@njit(cache=True)
def output_rows(head_slot, head_val, pred, norm, match, z, match_slots, grounding):
    """`FeatureRows.output_rows` of a drawn sentence's labels z (a word's label < 2: action or
    state): the head entries, each labelled word's predicate slots (pred (nw, 2, parts)) with
    its norm, then with `grounding` each labelled word's match; the same entries in the same
    order as the numpy code, in one call instead of a dozen small array operations."""
    nw, _, n_parts = pred.shape
    labelled = 0
    for j in range(nw):
        if z[j] < 2:
            labelled += 1
    n = len(head_slot) + labelled * (n_parts + (1 if grounding else 0))
    slot = np.empty(n, np.int64)
    val = np.empty(n)
    i = len(head_slot)
    slot[:i] = head_slot
    val[:i] = head_val
    for j in range(nw):
        if z[j] < 2:
            for k in range(n_parts):
                slot[i] = pred[j, z[j], k]
                val[i] = norm[j]
                i += 1
    if grounding:
        for j in range(nw):
            if z[j] < 2:
                slot[i] = match_slots[z[j]]
                val[i] = match[j, z[j]] * norm[j]
                i += 1
    return slot, val


@njit(cache=True)
def _output_step(f_slot, f_val, f_row, w, target, alpha, l2, q, dw):
    """Q = w . f of every datapoint (into q) and the output layer's step dw of one sweep."""
    q[:] = 0.0
    for e in range(len(f_slot)):
        q[f_row[e]] += w[f_slot[e]] * f_val[e]
    for e in range(len(f_slot)):
        dw[e] = alpha * ((target - q[f_row[e]]) * f_val[e] - l2 * w[f_slot[e]])


@njit(cache=True)
def _relevance_probs(phi_slot, phi_val, phi_row, row_start, u, temperature, logits, prob):
    """Relevance p of every candidate row, a softmax within each datapoint's rows."""
    n_rows = len(logits)
    logits[:] = 0.0
    for e in range(len(phi_slot)):
        logits[phi_row[e]] += u[phi_slot[e]] * phi_val[e]
    for d in range(len(row_start)):
        lo = row_start[d]
        hi = row_start[d + 1] if d + 1 < len(row_start) else n_rows
        _softmax_into(logits[lo:hi], prob[lo:hi], temperature)


@njit(cache=True)
def _apply(f_slot, dw, w, phi_slot, du, u):
    """Add a sweep's steps to the output and relevance weights (after all were computed)."""
    for e in range(len(f_slot)):
        w[f_slot[e]] += dw[e]
    for e in range(len(phi_slot)):
        u[phi_slot[e]] += du[e]


@njit(cache=True)
def _label_step(lab_static, lab_parent, lab_flags, flag_slots, plabel_slots, word_owner,
                word_label, k, v, h_alpha, h_l2, temperature, lab_logits, lab_prob, dv):
    """The label layer's likelihood-ratio step dv (Wz, 3, 11) of one sweep, each word's factor
    k taken from its datapoint. A word's label row is its 7 static slots, its parent label's
    slot and the slots of the flags it has, each with value 1 (`FeatureRows.label_rows`): the
    reference's entries in their order, less the flags it has not, whose value 0 adds nothing
    to a logit and no step to a weight."""
    for j in range(len(word_owner)):
        pl = lab_parent[j]
        for lab in range(3):
            x = 0.0
            for t in range(7):
                x += v[lab_static[j, lab, t]]
            x += v[plabel_slots[pl, lab]]
            for f in range(3):
                if lab_flags[j, f]:
                    x += v[flag_slots[f, lab]]
            lab_logits[3 * j + lab] = x
        _softmax_into(lab_logits[3 * j: 3 * j + 3], lab_prob[3 * j: 3 * j + 3], temperature)
    for j in range(len(word_owner)):
        kj = k[word_owner[j]]
        pl = lab_parent[j]
        for lab in range(3):
            g = kj * ((1.0 if lab == word_label[j] else 0.0) - lab_prob[3 * j + lab])
            for t in range(7):
                dv[j, lab, t] = h_alpha * (g - h_l2 * v[lab_static[j, lab, t]])
            dv[j, lab, 7] = h_alpha * (g - h_l2 * v[plabel_slots[pl, lab]])
            for f in range(3):
                if lab_flags[j, f]:
                    dv[j, lab, 8 + f] = h_alpha * (g - h_l2 * v[flag_slots[f, lab]])


@njit(cache=True)
def _apply_labels(lab_static, lab_parent, lab_flags, flag_slots, plabel_slots, dv, v):
    """Add the label step to v, entry after entry in the reference's order."""
    for j in range(len(lab_parent)):
        pl = lab_parent[j]
        for lab in range(3):
            for t in range(7):
                v[lab_static[j, lab, t]] += dv[j, lab, t]
            v[plabel_slots[pl, lab]] += dv[j, lab, 7]
            for f in range(3):
                if lab_flags[j, f]:
                    v[flag_slots[f, lab]] += dv[j, lab, 8 + f]


@njit(cache=True)
def shared_sweeps(
    passes, target, rule, alpha, l2, h_alpha, h_l2, temperature,
    f_slot, f_val, f_row, n_data,  # output features per datapoint
    sh_slot, sh_val, sh_row, sh_start, set_first_row, owner_set,  # shared relevance rows
    own_slot, own_val, own_row, row_owner, row_start, chosen_row,  # each datapoint's own
    lab_static, lab_parent, lab_flags, word_owner, word_label,  # label rows, 3 per word
    flag_slots, plabel_slots,
    u, v, w,
):
    """`passes` sweeps of `nlmcs.model.learner.update` over one roll-out's datapoints: each
    scores them all with the weights it starts from, then applies their updates together.
    The word entries of phi are stored once per set of datapoints that share them
    (`learner.SharedRows`): a set's logits are summed once and its entries move by the sum of
    its datapoints' steps, k_d (1[y_d = r] - p_d(r)) phi less the L2 decay once per
    datapoint, which is the reference's per-datapoint sum in another order."""
    n_rows = len(row_owner)
    n_lab = len(word_owner)
    n_sets = len(set_first_row)
    set_rows = 0
    members = np.zeros(n_sets)
    if n_rows:  # else no hidden layer (linear)
        for d in range(n_data):
            rows_d = _rows_of(d, row_start, n_rows)
            set_rows = max(set_rows, set_first_row[owner_set[d]] + rows_d)
            members[owner_set[d]] += 1.0
    q = np.empty(n_data)
    k = np.empty(n_data)
    dw = np.empty(len(f_slot))
    du_sh = np.empty(len(sh_slot))
    du_own = np.empty(len(own_slot))
    dv = np.empty((n_lab, 3, 11))
    logits = np.empty(n_rows)
    prob = np.empty(n_rows)
    set_logits = np.empty(set_rows)
    set_coef = np.empty(set_rows)
    lab_logits = np.empty(3 * n_lab)
    lab_prob = np.empty(3 * n_lab)
    for _ in range(passes):
        _output_step(f_slot, f_val, f_row, w, target, alpha, l2, q, dw)
        for d in range(n_data):
            if rule == 0:  # release
                k[d] = (q[d] - target) * q[d]
            else:  # consistent
                k[d] = (target - q[d]) * q[d]
        if n_rows:
            set_logits[:] = 0.0
            for g in range(n_sets):
                base = set_first_row[g]
                for e in range(sh_start[g], sh_start[g + 1]):
                    set_logits[base + sh_row[e]] += u[sh_slot[e]] * sh_val[e]
            for d in range(n_data):
                lo, base = row_start[d], set_first_row[owner_set[d]]
                for r in range(_rows_of(d, row_start, n_rows)):
                    logits[lo + r] = set_logits[base + r]
            for e in range(len(own_slot)):
                logits[own_row[e]] += u[own_slot[e]] * own_val[e]
            for d in range(n_data):
                lo = row_start[d]
                hi = lo + _rows_of(d, row_start, n_rows)
                _softmax_into(logits[lo:hi], prob[lo:hi], temperature)
            set_coef[:] = 0.0
            for d in range(n_data):
                lo, base = row_start[d], set_first_row[owner_set[d]]
                for r in range(_rows_of(d, row_start, n_rows)):
                    coef = (1.0 if lo + r == chosen_row[d] else 0.0) - prob[lo + r]
                    set_coef[base + r] += k[d] * coef
            for g in range(n_sets):
                base = set_first_row[g]
                for e in range(sh_start[g], sh_start[g + 1]):
                    decay = h_l2 * u[sh_slot[e]] if sh_val[e] != 0 else 0.0
                    du_sh[e] = h_alpha * (set_coef[base + sh_row[e]] * sh_val[e]
                                          - members[g] * decay)
            for e in range(len(own_slot)):
                r = own_row[e]
                d = row_owner[r]
                coef = (1.0 if r == chosen_row[d] else 0.0) - prob[r]
                decay = h_l2 * u[own_slot[e]] if own_val[e] != 0 else 0.0
                du_own[e] = h_alpha * (k[d] * coef * own_val[e] - decay)
        if n_lab:
            _label_step(lab_static, lab_parent, lab_flags, flag_slots, plabel_slots,
                        word_owner, word_label, k, v, h_alpha, h_l2, temperature, lab_logits,
                        lab_prob, dv)
        if not n_rows:
            du_sh[:] = 0.0
            du_own[:] = 0.0
        _apply(f_slot, dw, w, sh_slot, du_sh, u)
        _apply_labels(lab_static, lab_parent, lab_flags, flag_slots, plabel_slots, dv, v)
        for e in range(len(own_slot)):
            u[own_slot[e]] += du_own[e]


@njit(cache=True)
def _rows_of(d, row_start, n_rows):
    """Candidate rows of datapoint d (rows are laid out datapoint after datapoint)."""
    return (row_start[d + 1] if d + 1 < len(row_start) else n_rows) - row_start[d]


@njit(cache=True)
def _parent_factors(v, plabel_slots, temperature):
    """e^(b_lp / T) of the parent-label weights (4, 3), each row shifted by its maximum."""
    eb = np.empty((4, 3))
    for lp in range(4):
        m = v[plabel_slots[lp, 0]]
        for lab in range(1, 3):
            m = max(m, v[plabel_slots[lp, lab]])
        for lab in range(3):
            eb[lp, lab] = np.exp((v[plabel_slots[lp, lab]] - m) / temperature)
    return eb


@njit(cache=True)
def _word_rows(lo, hi, logits, flags, eb, v, flag_slots, plabel_slots, temperature, out,
               first):
    """out[first + j - lo] (4, 3) for the words j = lo..hi-1: softmax over labels of
    (a + b_lp) / T for the 4 parent labels, a the word's static logit (`logits`) plus its
    flags' weights, as e^a e^b_lp / sum(e^a e^b_lp), so a word costs 3 exponentials instead of
    12 (exp is most of the label layer's time); a word whose product underflows takes the
    direct softmax. One call for many words: a call per word with this many arrays would cost
    more than the word's arithmetic."""
    logit, ea, row = np.empty(3), np.empty(3), np.empty(3)
    for j in range(lo, hi):
        for lab in range(3):
            logit[lab] = logits[j, lab]
        for f in range(3):
            if flags[j, f]:
                for lab in range(3):
                    logit[lab] += v[flag_slots[f, lab]]
        m = max(logit[0], max(logit[1], logit[2]))
        for lab in range(3):
            ea[lab] = np.exp((logit[lab] - m) / temperature)
        o = first + j - lo
        if not _factor_rows(ea, eb, out, o):
            for lp in range(4):
                for lab in range(3):
                    row[lab] = logit[lab] + v[plabel_slots[lp, lab]]
                _softmax_into(row, out[o, lp], temperature)


@njit(cache=True)
def _factor_rows(ea, eb, out, oj):
    """out[oj, lp] = e^a e^b_lp / sum(e^a e^b_lp) for the 4 parent labels; False (and out left
    unfinished) when a row's sum underflows."""
    for lp in range(4):
        total = ea[0] * eb[lp, 0] + ea[1] * eb[lp, 1] + ea[2] * eb[lp, 2]
        if total <= 1e-250:
            return False
        for lab in range(3):
            out[oj, lp, lab] = ea[lab] * eb[lp, lab] / total
    return True


def static_factors(static, temperature):
    """e^(a / T) of the words' static label logits (Wc, 3), each row shifted by its maximum:
    computed once per agent's words and weights, so scoring a signature takes no exponential
    per word (`_conditionals_from_factors`)."""
    return np.exp((static - static.max(axis=1, keepdims=True)) / temperature)


@njit(cache=True)
def _flag_factors(v, flag_slots, temperature):
    """e^(flags' weights / T) (8, 3) of the 8 flag patterns, each row shifted by its maximum."""
    fsum = np.zeros((8, 3))
    ef = np.empty((8, 3))
    for pat in range(8):
        for lab in range(3):
            for f in range(3):
                if pat >> f & 1:
                    fsum[pat, lab] += v[flag_slots[f, lab]]
        m = max(fsum[pat, 0], max(fsum[pat, 1], fsum[pat, 2]))
        for lab in range(3):
            ef[pat, lab] = np.exp((fsum[pat, lab] - m) / temperature)
    return ef


@njit(cache=True)
def _conditionals_from_factors(static, static_exp, flags, v, flag_slots, plabel_slots,
                               temperature, cond):
    """`_label_conditionals` from the words' static logits (Wc, 3) and their factors: a word's
    logits are its static ones plus the weights of its flags, so e^a is the static factor times
    the factor of its flag pattern (8 patterns, taken once per call). A row whose product
    underflows is computed directly."""
    eb = _parent_factors(v, plabel_slots, temperature)
    ef = _flag_factors(v, flag_slots, temperature)
    ea = np.empty(3)
    for j in range(static.shape[0]):
        pat = int(flags[j, 0]) + 2 * int(flags[j, 1]) + 4 * int(flags[j, 2])
        for lab in range(3):
            ea[lab] = static_exp[j, lab] * ef[pat, lab]
        if not _factor_rows(ea, eb, cond, j):
            _word_rows(j, j + 1, static, flags, eb, v, flag_slots, plabel_slots,
                       temperature, cond, j)


@njit(cache=True)
def _propagate(cond, pair, parent, order, marg):
    """Marginal label probabilities (Wc, 3) from the conditionals, parents before children;
    word j's conditionals are row pair[j] of `cond` (its own row, or the row of its distinct
    word-and-flags pair in the sweeps)."""
    for i in range(len(order)):
        j = order[i]
        par = parent[j]
        c = pair[j]
        for lab in range(3):
            if par < 0:
                marg[j, lab] = cond[c, ROOT, lab]
            else:
                marg[j, lab] = (marg[par, 0] * cond[c, 0, lab] + marg[par, 1] * cond[c, 1, lab]
                                + marg[par, 2] * cond[c, 2, lab])


@njit(cache=True)
def _label_conditionals(v, static, flags, flag_slots, plabel_slots, temperature, cond):
    """p(z_j = l | parent label lp) (Wc, 4, 3) of the candidate words (lp = A, S, B, ROOT),
    from the words' static label slots (Wc, 3, 7)."""
    logits = np.empty((static.shape[0], 3))
    for j in range(static.shape[0]):
        for lab in range(3):
            s = 0.0
            for t in range(static.shape[2]):
                s += v[static[j, lab, t]]
            logits[j, lab] = s
    _word_rows(0, static.shape[0], logits, flags, _parent_factors(v, plabel_slots, temperature),
               v, flag_slots, plabel_slots, temperature, cond, 0)


@njit(cache=True)
def _label_marginals(v, static, flags, pair, parent, order, flag_slots, plabel_slots,
                     temperature, cond, marg):
    """Marginal label probabilities (Wc, 3) of many signatures' candidate words at once. A
    manual word with the same flags has the same conditionals in every signature that holds
    it, so they are computed once per distinct (word, flags), the rows of `static` and `flags`,
    and word j reads row pair[j] (in the ablations' games a roll-out's candidate words repeat
    3-6 times)."""
    _label_conditionals(v, static, flags, flag_slots, plabel_slots, temperature, cond)
    _propagate(cond, pair, parent, order, marg)


@njit(cache=True)
def _row_q_into(w, v, row_sig, game_slot, game_owner, lang_slot, lang_val, lang_row,
                pred_slot, pred_val, pred_idx, word_row, parent, order, static, flags, pair,
                flag_slots, plabel_slots, temperature, game, pred, cond, marg, row_q):
    """Q of every distinct candidate row with the labels in expectation
    (`ValueNetwork.row_q`): the signature's game score, the row's language (or latent) score
    and, over the row's words, E_z[w . f_predicate] under the label marginals."""
    game[:] = 0.0
    for e in range(len(game_slot)):
        game[game_owner[e]] += w[game_slot[e]]
    for r in range(len(row_sig)):
        row_q[r] = game[row_sig[r]]
    for e in range(len(lang_slot)):
        row_q[lang_row[e]] += w[lang_slot[e]] * lang_val[e]
    if len(word_row) == 0:
        return
    pred[:] = 0.0
    for e in range(len(pred_slot)):
        pred[pred_idx[e]] += w[pred_slot[e]] * pred_val[e]
    _label_marginals(v, static, flags, pair, parent, order, flag_slots, plabel_slots,
                     temperature, cond, marg)
    for j in range(len(word_row)):
        row_q[word_row[j]] += marg[j, 0] * pred[2 * j] + marg[j, 1] * pred[2 * j + 1]


@njit(cache=True)
def expected_sweeps(
    passes, target, alpha, l2, h_alpha, h_l2, temperature,
    f_slot, f_val, f_row, n_data,  # output features per datapoint
    phi_slot, phi_val, phi_row, row_owner, row_start, chosen_row,  # relevance rows
    lab_static, lab_parent, lab_flags, word_owner, word_label,  # label rows, 3 per word
    row_src, row_sig,  # Q of every candidate row, from its signature's distinct rows: game,
    game_slot, game_owner, lang_slot, lang_val, lang_row,  # language (or latent) and the
    pred_slot, pred_val, pred_idx, word_row, parent, order, static, flags,  # expected labels
    pair,  # (Wc,) row of `static` and `flags` (distinct word and flags) of each candidate word
    flag_slots, plabel_slots,
    u, v, w,
):
    """`sweeps` for `hidden_update="expected"` (`nlmcs.model.learner._expected_factors`): each
    pass scores every candidate row of every datapoint under the weights it starts from, moves
    u by -p_y (e_y - E_p[e]) phi_y and the labels by k = e(expected labels) - e(sampled)."""
    n_rows = len(row_owner)
    n_lab = len(word_owner)
    q = np.empty(n_data)
    k = np.zeros(n_data)
    dw = np.empty(len(f_slot))
    du = np.empty(len(phi_slot))
    dv = np.empty((n_lab, 3, 11))
    logits = np.empty(n_rows)
    prob = np.empty(n_rows)
    err = np.empty(n_rows)
    mean_err = np.empty(n_data)
    row_q = np.empty(len(row_sig))
    game = np.empty(n_data)
    pred = np.empty(2 * len(word_row))
    marg = np.empty((len(word_row), 3))
    cond = np.empty((len(static), 4, 3))
    lab_logits = np.empty(3 * n_lab)
    lab_prob = np.empty(3 * n_lab)
    for _ in range(passes):
        _output_step(f_slot, f_val, f_row, w, target, alpha, l2, q, dw)
        if n_rows:
            _row_q_into(w, v, row_sig, game_slot, game_owner, lang_slot, lang_val, lang_row,
                        pred_slot, pred_val, pred_idx, word_row, parent, order, static, flags,
                        pair, flag_slots, plabel_slots, temperature, game, pred, cond, marg,
                        row_q)
            _relevance_probs(phi_slot, phi_val, phi_row, row_start, u, temperature, logits,
                             prob)
            mean_err[:] = 0.0
            for r in range(n_rows):
                err[r] = (target - row_q[row_src[r]]) ** 2
                mean_err[row_owner[r]] += prob[r] * err[r]
            for d in range(n_data):
                k[d] = err[chosen_row[d]] - (target - q[d]) ** 2
            for e in range(len(phi_slot)):
                r = phi_row[e]
                coef = -prob[r] * (err[r] - mean_err[row_owner[r]])
                decay = h_l2 * u[phi_slot[e]] if phi_val[e] != 0 else 0.0
                du[e] = h_alpha * (coef * phi_val[e] - decay)
        if n_lab:
            _label_step(lab_static, lab_parent, lab_flags, flag_slots, plabel_slots,
                        word_owner, word_label, k, v, h_alpha, h_l2, temperature, lab_logits,
                        lab_prob, dv)
        _apply(f_slot, dw, w, phi_slot, du, u)
        _apply_labels(lab_static, lab_parent, lab_flags, flag_slots, plabel_slots, dv, v)


def warm_up(expected: bool = False) -> None:
    """Load (or compile) the kernels now, on tiny inputs, so the first real step does not pay
    for it: numba compiles on first call and caches the machine code on disk. `expected`: also
    the sweeps of that rule."""
    i0, f0 = np.zeros(0, np.int64), np.zeros(0)
    one = np.zeros(1)
    table = np.zeros(4)
    text_scores(
        0, i0, i0, i0, f0, f0, 0.0, f0, f0, np.zeros((0, 2)), np.zeros((0, 2)), f0, True,
        np.zeros(2), np.zeros((0, 3)), np.zeros((0, 3)),
        np.zeros((0, 3), np.bool_), True, table, np.zeros((3, 3), np.int64),
        np.zeros((4, 3), np.int64), 1.0, 0.0,
    )  # fmt: skip
    text_expected(
        0, i0, i0, i0, f0, f0, 0.0, f0, f0, np.zeros((0, 2)), np.zeros((0, 2)), f0, True,
        np.zeros(2), np.zeros((0, 3)), np.zeros((0, 3)),
        np.zeros((0, 3), np.bool_), True, table, np.zeros((3, 3), np.int64),
        np.zeros((4, 3), np.int64), 1.0, 0.0, np.zeros((0, 3)), np.zeros((0, 3), np.bool_),
    )  # fmt: skip
    action_sums(i0, f0, f0, f0, f0, np.zeros((0, 2)), table, i0, np.zeros((0, 2), np.int64),
                0.0, f0)
    draw(one, 0.5)
    output_rows(i0, f0, np.zeros((0, 2, 2), np.int64), f0, np.zeros((0, 2)), i0,
                np.zeros(2, np.int64), True)
    sample_labels(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3), np.bool_), table,
                  np.zeros((3, 3), np.int64), np.zeros((4, 3), np.int64), 1.0,
                  np.zeros((0, 2)), np.zeros((0, 2)), True, np.zeros(2), f0, i0, i0, 0, 0, f0)
    no_labels = (np.zeros((0, 3, 7), np.int64), i0, np.zeros((0, 3), np.bool_), i0, i0)
    label_slots = (np.zeros((3, 3), np.int64), np.zeros((4, 3), np.int64))
    shared_sweeps(1, 0.0, 0, 0.0, 0.0, 0.0, 0.0, 1.0, np.zeros(1, np.int64), one,
                  np.zeros(1, np.int64), 1, i0, f0, i0, i0, i0, i0, i0, f0, i0, i0, i0, i0,
                  *no_labels, *label_slots, table, table, table.copy())
    if expected:
        expected_sweeps(
            1, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, np.zeros(1, np.int64), one, np.zeros(1, np.int64), 1,
            i0, f0, i0, i0, i0, i0, *no_labels, i0, i0, i0, i0, i0, f0, i0, i0, f0, i0, i0,
            i0, i0,
            np.zeros((0, 3, 7), np.int64), np.zeros((0, 3), np.bool_), i0, *label_slots,
            table, table, table.copy(),
        )  # fmt: skip
