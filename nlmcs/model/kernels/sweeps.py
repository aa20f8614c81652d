"""Compiled (numba) online updates of the value network: the sweeps over one roll-out's
datapoints (`shared_sweeps` for the likelihood-ratio rules, `expected_sweeps` for the `expected`
rule) and the output rows of a drawn decision (`output_rows`).

A sweep scores every datapoint with the weights it starts from, then applies all their steps
together; `passes` sweeps per roll-out. `nlmcs.model.reference.update` is the plain numpy version
these are tested against (within 1e-9, and the same games). The sweeps take their inputs as the
named tuples of `nlmcs.model.kernels.sweep_inputs` (`Rates`, `OutputRows`, ...), which
`nlmcs.model.batch` fills with a roll-out's rows once; the weight tables in `Tables` are changed
in place. Indices read from arrays are cast to unsigned (`U`), which spares numba's check for a
negative index (in the entry loops, more than the arithmetic), and the loops take no slices (a
slice is an array counted in and out). Names follow the paper: u weighs
phi (relevance), v psi (labels), w f (output); D datapoints, R candidate rows (C + 1 per
datapoint: its candidate sentences and NULL, or its latent states), Wz the words of the
sentences the datapoints drew.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba import uint64 as U  # an unsigned index: numba leaves out the negative-index wraparound

from nlmcs.model.kernels.labels import label_marginals, softmax_at
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
        q[U(f.row[e])] += w[U(f.slot[e])] * f.val[e]
    for e in range(len(f.slot)):
        dw[e] = rates.alpha * ((rates.target - q[U(f.row[e])]) * f.val[e]
                               - rates.l2 * w[U(f.slot[e])])


@njit(cache=True)
def _relevance_probs(phi, row_start, u, temperature, logits, prob):
    """Relevance p of every candidate row (R,), a softmax within each datapoint's rows."""
    logits[:] = 0.0
    for e in range(len(phi.slot)):
        logits[phi.row[e]] += u[phi.slot[e]] * phi.val[e]
    for d in range(len(row_start)):
        lo = row_start[d]
        hi = lo + _rows_of(d, row_start, len(logits))
        softmax_at(logits, prob, lo, hi - lo, temperature)


@njit(cache=True)
def _add_at(slot, step, table):
    """Add a sweep's steps to a weight table, entry after entry (after all were computed)."""
    for e in range(len(slot)):
        table[U(slot[e])] += step[e]


@njit(cache=True)
def _label_logits(lab, v, rates, lab_logits, lab_prob, v_at):
    """The label layer's probabilities (Wz, 3) of one sweep, keeping each weight read as the
    sweep found it (`v_at` (Wz, 3, 11)) for the steps' decay: the reference's entries in their
    order, less the flags a word has not, whose value 0 adds nothing to a logit and no step to
    a weight."""
    for j in range(len(lab.owner)):
        pl = U(lab.parent[j])
        for z in range(3):
            x = 0.0
            for t in range(7):
                y = v[U(lab.static[j, z, t])]
                v_at[j, z, t] = y
                x += y
            y = v[U(lab.plabel_slots[pl, z])]
            v_at[j, z, 7] = y
            x += y
            for f in range(3):
                if lab.flags[j, f]:
                    y = v[U(lab.flag_slots[f, z])]
                    v_at[j, z, 8 + f] = y
                    x += y
            lab_logits[3 * j + z] = x
        softmax_at(lab_logits, lab_prob, 3 * j, 3, rates.temperature)


@njit(cache=True)
def _label_step(lab, k, v, rates, lab_prob, v_at):
    """The label layer's likelihood-ratio step, each word's factor k taken from its datapoint,
    added to v entry after entry in the reference's order as it is computed: each decay reads
    the weight as the sweep found it (`v_at`), so every value is that of computing all the
    steps first."""
    h_alpha, h_l2 = rates.h_alpha, rates.h_l2
    for j in range(len(lab.owner)):
        kj = k[U(lab.owner[j])]
        pl = U(lab.parent[j])
        for z in range(3):
            g = kj * ((1.0 if z == lab.label[j] else 0.0) - lab_prob[3 * j + z])
            for t in range(7):
                v[U(lab.static[j, z, t])] += h_alpha * (g - h_l2 * v_at[j, z, t])
            v[U(lab.plabel_slots[pl, z])] += h_alpha * (g - h_l2 * v_at[j, z, 7])
            for f in range(3):
                if lab.flags[j, f]:
                    v[U(lab.flag_slots[f, z])] += h_alpha * (g - h_l2 * v_at[j, z, 8 + f])


@njit(cache=True)
def _rows_of(d, row_start, n_rows):
    """Candidate rows of datapoint d (rows are laid out datapoint after datapoint)."""
    return (row_start[d + 1] if d + 1 < len(row_start) else n_rows) - row_start[d]


@njit(cache=True)
def _runs(phi):
    """The runs of the shared sets' entries that share a row (a sentence's words): each run's
    first entry (and the end), its row among all sets' rows and its set. A run's logit is
    summed in a register and its coefficient read once, the same additions in the same order."""
    n = len(phi.slot)
    lo = np.empty(n + 1, np.int64)
    row = np.empty(n, np.int64)
    owner = np.empty(n, np.int64)
    k = 0
    for g in range(len(phi.first_row)):
        for e in range(phi.start[g], phi.start[g + 1]):
            r = phi.first_row[g] + phi.row[e]
            if k == 0 or e == phi.start[g] or r != row[k - 1]:
                lo[k], row[k], owner[k] = e, r, g
                k += 1
    lo[k] = phi.start[len(phi.first_row)] if len(phi.first_row) else 0
    return lo[:k + 1], row[:k], owner[:k]


@njit(cache=True)
def representatives(phi, cand, n_rows):
    """Each datapoint's representative: the first datapoint whose relevance logits it shares
    bit for bit (the same set, as many rows, the same own entries at the same local rows:
    an agent choosing the same way again), else itself; and each own entry's datapoint. A
    sweep computes the logits and the softmax of representatives only (about a fifth of a
    roll-out's datapoints) and gives the others their probabilities: the same values. Where
    the own entries are not laid out datapoint after datapoint, every datapoint stands for
    itself."""
    n = len(cand.row_start)
    n_own = len(phi.own_slot)
    rep = np.arange(n)
    own_d = np.empty(n_own, np.int64)
    own_lo = np.zeros(n + 1, np.int64)
    ordered = True
    for e in range(n_own):
        d = cand.row_owner[U(phi.own_row[e])]
        own_d[e] = d
        if e and d < own_d[e - 1]:
            ordered = False
        own_lo[d + 1] += 1
    if not ordered:
        return rep, own_d
    for d in range(n):
        own_lo[d + 1] += own_lo[d]
    for d in range(n):
        lo_d, m = own_lo[d], own_lo[d + 1] - own_lo[d]
        rows_d = _rows_of(d, cand.row_start, n_rows)
        for d2 in range(d):
            if (rep[d2] != d2 or phi.owner_set[d2] != phi.owner_set[d]
                    or _rows_of(d2, cand.row_start, n_rows) != rows_d
                    or own_lo[d2 + 1] - own_lo[d2] != m):
                continue
            lo2, same = own_lo[d2], True
            for i in range(m):
                if (phi.own_slot[lo_d + i] != phi.own_slot[lo2 + i]
                        or phi.own_val[lo_d + i] != phi.own_val[lo2 + i]
                        or phi.own_row[lo_d + i] - cand.row_start[d]
                        != phi.own_row[lo2 + i] - cand.row_start[d2]):
                    same = False
                    break
            if same:
                rep[d] = d2
                break
    return rep, own_d


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
    run_lo, run_row, run_set = _runs(phi)
    rep, own_d = representatives(phi, cand, n_rows)
    n_runs = len(run_row)
    q = np.empty(n_data)
    k = np.empty(n_data)
    dw = np.empty(len(f.slot))
    u_sh = np.empty(len(phi.slot))  # u of each entry at the start of the pass
    u_own = np.empty(len(phi.own_slot))
    v_at = np.empty((n_lab, 3, 11))
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
            for j in range(n_runs):
                acc = set_logits[run_row[j]]
                for e in range(U(run_lo[j]), U(run_lo[j + 1])):
                    x = u[U(phi.slot[e])]
                    u_sh[e] = x
                    acc += x * phi.val[e]
                set_logits[run_row[j]] = acc
            for d in range(n_data):
                if rep[d] == d:
                    lo, base = U(row_start[d]), U(phi.first_row[phi.owner_set[d]])
                    for r in range(U(_rows_of(d, row_start, n_rows))):
                        logits[lo + r] = set_logits[base + r]
            for e in range(len(phi.own_slot)):
                x = u[U(phi.own_slot[e])]
                u_own[e] = x
                if rep[U(own_d[e])] == own_d[e]:
                    logits[U(phi.own_row[e])] += x * phi.own_val[e]
            for d in range(n_data):
                lo = row_start[d]
                n = _rows_of(d, row_start, n_rows)
                if rep[d] == d:
                    softmax_at(logits, prob, lo, n, rates.temperature)
                else:
                    lo2 = U(row_start[rep[d]])
                    for r in range(U(n)):
                        prob[U(lo) + r] = prob[lo2 + r]
            set_coef[:] = 0.0
            for d in range(n_data):
                lo, base = U(row_start[d]), U(phi.first_row[phi.owner_set[d]])
                chosen, kd = U(chosen_row[d]), k[d]
                for r in range(U(_rows_of(d, row_start, n_rows))):
                    coef = (1.0 if lo + r == chosen else 0.0) - prob[lo + r]
                    set_coef[base + r] += kd * coef
            # Each step reads u as the pass found it (kept above), so the shared entries, then
            # the own ones, move u as they are computed: the order of the additions, and so
            # every value, is that of computing all the steps first.
            for j in range(n_runs):
                coef, m = set_coef[run_row[j]], members[run_set[j]]
                for e in range(U(run_lo[j]), U(run_lo[j + 1])):
                    decay = h_l2 * u_sh[e] if phi.val[e] != 0 else 0.0
                    u[U(phi.slot[e])] += h_alpha * (coef * phi.val[e] - m * decay)
            for e in range(len(phi.own_slot)):
                r = U(phi.own_row[e])
                d = U(cand.row_owner[r])
                coef = (1.0 if r == U(chosen_row[d]) else 0.0) - prob[r]
                decay = h_l2 * u_own[e] if phi.own_val[e] != 0 else 0.0
                u[U(phi.own_slot[e])] += h_alpha * (k[d] * coef * phi.own_val[e] - decay)
        if n_lab:
            _label_logits(lab, v, rates, lab_logits, lab_prob, v_at)
        _add_at(f.slot, dw, w)
        if n_lab:
            _label_step(lab, k, v, rates, lab_prob, v_at)


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
    v_at = np.empty((n_lab, 3, 11))
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
            _label_logits(lab, v, rates, lab_logits, lab_prob, v_at)
        _add_at(f.slot, dw, w)
        _add_at(phi.slot, du, u)
        if n_lab:
            _label_step(lab, k, v, rates, lab_prob, v_at)
