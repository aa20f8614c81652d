"""Compiled (numba) online updates of the value network: the sweeps over one roll-out's
datapoints (`shared_sweeps` for the likelihood-ratio rules, `expected_sweeps` for the `expected`
rule) and the output rows of a drawn decision (`output_rows`).

A sweep scores every datapoint with the weights it starts from, then applies all their steps
together; `passes` sweeps per roll-out. `nlmcs.model.reference.update` is the plain numpy version
these are tested against (within 1e-9, and the same games). The sweeps take their inputs as the
named tuples of `nlmcs.model.kernels.sweep_inputs` (`Rates`, `OutputRows`, ...), which
`nlmcs.model.batch` fills with a roll-out's rows once; the weight tables in `Tables` are changed
in place. Names follow the paper: u weighs
phi (relevance), v psi (labels), w f (output); D datapoints, R candidate rows (C + 1 per
datapoint: its candidate sentences and NULL, or its latent states), Wz the words of the
sentences the datapoints drew.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from nlmcs.model.kernels.labels import label_marginals, softmax_into
from nlmcs.model.kernels.sweep_inputs import RELEASE


@njit(cache=True)
def output_rows(head_slot, head_val, pred, norm, match, z, match_slots, grounding):
    """`FeatureRows.output_rows` of a drawn sentence's labels z (a word's label < 2: action or
    state): the head entries, each labelled word's predicate slots (pred (nw, 2, parts)) with
    its norm, then with `grounding` each labelled word's match; the same entries in the same
    order as the numpy code, in one call instead of a dozen small array operations (one call
    per datapoint: positional parameters, as the scoring kernels)."""
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
def _output_step(f, w, rates, q, dw):
    """Q = w . f of every datapoint (into q (D,)) and the output layer's step dw (E,)."""
    q[:] = 0.0
    for e in range(len(f.slot)):
        q[f.row[e]] += w[f.slot[e]] * f.val[e]
    for e in range(len(f.slot)):
        dw[e] = rates.alpha * ((rates.target - q[f.row[e]]) * f.val[e] - rates.l2 * w[f.slot[e]])


@njit(cache=True)
def _relevance_probs(phi, row_start, u, temperature, logits, prob):
    """Relevance p of every candidate row (R,), a softmax within each datapoint's rows."""
    logits[:] = 0.0
    for e in range(len(phi.slot)):
        logits[phi.row[e]] += u[phi.slot[e]] * phi.val[e]
    for d in range(len(row_start)):
        lo = row_start[d]
        hi = lo + _rows_of(d, row_start, len(logits))
        softmax_into(logits[lo:hi], prob[lo:hi], temperature)


@njit(cache=True)
def _add_at(slot, step, table):
    """Add a sweep's steps to a weight table, entry after entry (after all were computed)."""
    for e in range(len(slot)):
        table[slot[e]] += step[e]


@njit(cache=True)
def _label_step(lab, k, v, rates, lab_logits, lab_prob, dv):
    """The label layer's likelihood-ratio step dv (Wz, 3, 11) of one sweep, each word's factor
    k taken from its datapoint: the reference's entries in their order, less the flags a word
    has not, whose value 0 adds nothing to a logit and no step to a weight."""
    for j in range(len(lab.owner)):
        pl = lab.parent[j]
        for z in range(3):
            x = 0.0
            for t in range(7):
                x += v[lab.static[j, z, t]]
            x += v[lab.plabel_slots[pl, z]]
            for f in range(3):
                if lab.flags[j, f]:
                    x += v[lab.flag_slots[f, z]]
            lab_logits[3 * j + z] = x
        softmax_into(lab_logits[3 * j: 3 * j + 3], lab_prob[3 * j: 3 * j + 3],
                     rates.temperature)
    h_alpha, h_l2 = rates.h_alpha, rates.h_l2
    for j in range(len(lab.owner)):
        kj = k[lab.owner[j]]
        pl = lab.parent[j]
        for z in range(3):
            g = kj * ((1.0 if z == lab.label[j] else 0.0) - lab_prob[3 * j + z])
            for t in range(7):
                dv[j, z, t] = h_alpha * (g - h_l2 * v[lab.static[j, z, t]])
            dv[j, z, 7] = h_alpha * (g - h_l2 * v[lab.plabel_slots[pl, z]])
            for f in range(3):
                if lab.flags[j, f]:
                    dv[j, z, 8 + f] = h_alpha * (g - h_l2 * v[lab.flag_slots[f, z]])


@njit(cache=True)
def _apply_labels(lab, dv, v):
    """Add the label step to v, entry after entry in the reference's order."""
    for j in range(len(lab.parent)):
        pl = lab.parent[j]
        for z in range(3):
            for t in range(7):
                v[lab.static[j, z, t]] += dv[j, z, t]
            v[lab.plabel_slots[pl, z]] += dv[j, z, 7]
            for f in range(3):
                if lab.flags[j, f]:
                    v[lab.flag_slots[f, z]] += dv[j, z, 8 + f]


@njit(cache=True)
def _rows_of(d, row_start, n_rows):
    """Candidate rows of datapoint d (rows are laid out datapoint after datapoint)."""
    return (row_start[d + 1] if d + 1 < len(row_start) else n_rows) - row_start[d]


@njit(cache=True)
def shared_sweeps(rates, f, cand, phi, lab, tables):
    """`rates.passes` sweeps of the likelihood-ratio rules over one roll-out's datapoints
    (`Rates`, `OutputRows`, `Candidates`, `SharedPhi`, `Labels`, `Tables`): each scores them
    all with the weights it starts from, then applies their updates together. A set's logits
    are summed once and its entries move by the sum of its datapoints' steps,
    k_d (1[y_d = r] - p_d(r)) phi less the L2 decay once per datapoint, which is the
    reference's per-datapoint sum in another order."""
    u, v, w = tables.u, tables.v, tables.w
    n_data = f.n
    n_rows = len(cand.row_owner)
    n_lab = len(lab.owner)
    n_sets = len(phi.first_row)
    row_start, chosen_row = cand.row_start, cand.chosen_row
    set_rows = 0
    members = np.zeros(n_sets)
    if n_rows:  # else no hidden layer (linear)
        for d in range(n_data):
            rows_d = _rows_of(d, row_start, n_rows)
            set_rows = max(set_rows, phi.first_row[phi.owner_set[d]] + rows_d)
            members[phi.owner_set[d]] += 1.0
    q = np.empty(n_data)
    k = np.empty(n_data)
    dw = np.empty(len(f.slot))
    u_sh = np.empty(len(phi.slot))  # u of each entry at the start of the pass
    u_own = np.empty(len(phi.own_slot))
    dv = np.empty((n_lab, 3, 11))
    logits = np.empty(n_rows)
    prob = np.empty(n_rows)
    set_logits = np.empty(set_rows)
    set_coef = np.empty(set_rows)
    lab_logits = np.empty(3 * n_lab)
    lab_prob = np.empty(3 * n_lab)
    target, h_alpha, h_l2 = rates.target, rates.h_alpha, rates.h_l2
    for _ in range(rates.passes):
        _output_step(f, w, rates, q, dw)
        for d in range(n_data):
            if rates.rule == RELEASE:
                k[d] = (q[d] - target) * q[d]
            else:
                k[d] = (target - q[d]) * q[d]
        if n_rows:
            set_logits[:] = 0.0
            for g in range(n_sets):
                base = phi.first_row[g]
                for e in range(phi.start[g], phi.start[g + 1]):
                    x = u[phi.slot[e]]
                    u_sh[e] = x
                    set_logits[base + phi.row[e]] += x * phi.val[e]
            for d in range(n_data):
                lo, base = row_start[d], phi.first_row[phi.owner_set[d]]
                for r in range(_rows_of(d, row_start, n_rows)):
                    logits[lo + r] = set_logits[base + r]
            for e in range(len(phi.own_slot)):
                x = u[phi.own_slot[e]]
                u_own[e] = x
                logits[phi.own_row[e]] += x * phi.own_val[e]
            for d in range(n_data):
                lo = row_start[d]
                hi = lo + _rows_of(d, row_start, n_rows)
                softmax_into(logits[lo:hi], prob[lo:hi], rates.temperature)
            set_coef[:] = 0.0
            for d in range(n_data):
                lo, base = row_start[d], phi.first_row[phi.owner_set[d]]
                for r in range(_rows_of(d, row_start, n_rows)):
                    coef = (1.0 if lo + r == chosen_row[d] else 0.0) - prob[lo + r]
                    set_coef[base + r] += k[d] * coef
            # Each step reads u as the pass found it (kept above), so the shared entries, then
            # the own ones, move u as they are computed: the order of the additions, and so
            # every value, is that of computing all the steps first.
            for g in range(n_sets):
                base = phi.first_row[g]
                for e in range(phi.start[g], phi.start[g + 1]):
                    decay = h_l2 * u_sh[e] if phi.val[e] != 0 else 0.0
                    u[phi.slot[e]] += h_alpha * (set_coef[base + phi.row[e]] * phi.val[e]
                                                 - members[g] * decay)
            for e in range(len(phi.own_slot)):
                r = phi.own_row[e]
                d = cand.row_owner[r]
                coef = (1.0 if r == chosen_row[d] else 0.0) - prob[r]
                decay = h_l2 * u_own[e] if phi.own_val[e] != 0 else 0.0
                u[phi.own_slot[e]] += h_alpha * (k[d] * coef * phi.own_val[e] - decay)
        if n_lab:
            _label_step(lab, k, v, rates, lab_logits, lab_prob, dv)
        _add_at(f.slot, dw, w)
        _apply_labels(lab, dv, v)


@njit(cache=True)
def _row_q_into(rq, lab, w, v, temperature, game, pred, cond, marg, row_q):
    """Q of every distinct candidate row with the labels in expectation (`RowQ`; the
    reference's `row_q`): the signature's game score, the row's language (or latent) score
    and, over the row's words, E_z[w . f_predicate] under the label marginals."""
    game[:] = 0.0
    for e in range(len(rq.game_slot)):
        game[rq.game_owner[e]] += w[rq.game_slot[e]]
    for r in range(len(rq.row_sig)):
        row_q[r] = game[rq.row_sig[r]]
    for e in range(len(rq.lang_slot)):
        row_q[rq.lang_row[e]] += w[rq.lang_slot[e]] * rq.lang_val[e]
    if len(rq.word_row) == 0:
        return
    pred[:] = 0.0
    for e in range(len(rq.pred_slot)):
        pred[rq.pred_idx[e]] += w[rq.pred_slot[e]] * rq.pred_val[e]
    label_marginals(v, rq.static, rq.flags, rq.pair, rq.parent, rq.order, lab.flag_slots,
                    lab.plabel_slots, temperature, cond, marg)
    for j in range(len(rq.word_row)):
        row_q[rq.word_row[j]] += marg[j, 0] * pred[2 * j] + marg[j, 1] * pred[2 * j + 1]


@njit(cache=True)
def expected_sweeps(rates, f, cand, phi, lab, rq, tables):
    """The sweeps of `hidden_update="expected"` (`Rates`, `OutputRows`, `Candidates`, `Phi`,
    `Labels`, `RowQ`, `Tables`): each pass scores every candidate row of every datapoint under
    the weights it starts from, moves u by -p_y (e_y - E_p[e]) phi_y, e_y = (R - Q_y)^2, and the
    labels by the likelihood-ratio step with k = e(expected labels) - e(sampled)."""
    u, v, w = tables.u, tables.v, tables.w
    n_data = f.n
    row_owner, row_start, chosen_row = cand.row_owner, cand.row_start, cand.chosen_row
    n_rows = len(row_owner)
    n_lab = len(lab.owner)
    q = np.empty(n_data)
    k = np.zeros(n_data)
    dw = np.empty(len(f.slot))
    du = np.empty(len(phi.slot))
    dv = np.empty((n_lab, 3, 11))
    logits = np.empty(n_rows)
    prob = np.empty(n_rows)
    err = np.empty(n_rows)
    mean_err = np.empty(n_data)
    row_q = np.empty(len(rq.row_sig))
    game = np.empty(n_data)
    pred = np.empty(2 * len(rq.word_row))
    marg = np.empty((len(rq.word_row), 3))
    cond = np.empty((len(rq.static), 4, 3))
    lab_logits = np.empty(3 * n_lab)
    lab_prob = np.empty(3 * n_lab)
    target, h_alpha, h_l2 = rates.target, rates.h_alpha, rates.h_l2
    for _ in range(rates.passes):
        _output_step(f, w, rates, q, dw)
        if n_rows:
            _row_q_into(rq, lab, w, v, rates.temperature, game, pred, cond, marg, row_q)
            _relevance_probs(phi, row_start, u, rates.temperature, logits, prob)
            mean_err[:] = 0.0
            for r in range(n_rows):
                err[r] = (target - row_q[rq.row_src[r]]) ** 2
                mean_err[row_owner[r]] += prob[r] * err[r]
            for d in range(n_data):
                k[d] = err[chosen_row[d]] - (target - q[d]) ** 2
            for e in range(len(phi.slot)):
                r = phi.row[e]
                coef = -prob[r] * (err[r] - mean_err[row_owner[r]])
                decay = h_l2 * u[phi.slot[e]] if phi.val[e] != 0 else 0.0
                du[e] = h_alpha * (coef * phi.val[e] - decay)
        if n_lab:
            _label_step(lab, k, v, rates, lab_logits, lab_prob, dv)
        _add_at(f.slot, dw, w)
        _add_at(phi.slot, du, u)
        _apply_labels(lab, dv, v)
