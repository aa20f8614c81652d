"""A roll-out's update rows laid out from the signatures' integer tables in one compiled call.

`nlmcs.model.batch.build` stacks the rows of a roll-out's datapoints (~40 of them) from the
Python caches of `nlmcs.model.rows`: a dozen small array operations per datapoint, and the
first time a sentence is drawn its rows are cut out of the signature's arrays, about as much
time a step as the compiled turns that drew them. The tables (`nlmcs.model.tables`) hold the
same weight-free slots, so here the same arrays, entry for entry and in the same order, come
from the datapoints' signature ids, sentences and labels (`tests/model/test_model_update_rows.py`
checks them against `build`). Only the likelihood-ratio rules' batch (`SharedPhi`) of the
kinds with tables is laid out here; the `expected` rule's rows stay in `batch`. The kinds
without text (`LatentTables`) have rows of their own (`latent_rows`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from nlmcs.model.kernels.candidates import (
    A_ACTION,
    A_ATYPE,
    K_HI,
    K_LO,
    L_GAME_HI,
    L_GAME_LO,
    L_K,
    L_M,
    L_SLOTS,
    P_ROWS,
    P_WORDS,
    S_ACTION,
    S_FLAGS,
    S_GAME_HI,
    S_GAME_LO,
    S_STATE,
    S_UNIT,
    U_C,
    U_W,
    U_WORDS,
)
from nlmcs.model.kernels.labels import ROOT


@njit(cache=True)
def latent_rows(t, sids, ys):
    """`batch.build`'s rows of the kinds without text (`candidates.LatentTables`), datapoint
    after datapoint: f (its game slots, then its drawn latent state's M output slots, values
    1) and, where there are latent states, its K rows and its own shared set of K x M
    relevance entries (values 1, row k for entries k M .. k M + M - 1). Returns (f slot, f
    value, f row, row owner, row start, chosen row, set slot, value, row, set starts)."""
    n = len(sids)
    n_f, n_rows, n_phi = 0, 0, 0
    for d in range(n):
        meta = t.sig_meta[sids[d]]
        n_f += meta[L_GAME_HI] - meta[L_GAME_LO] + (meta[L_M] if meta[L_K] else 0)
        n_rows += meta[L_K]
        n_phi += meta[L_K] * meta[L_M]
    f_slot = np.empty(n_f, np.int64)
    f_row = np.empty(n_f, np.int64)
    row_owner = np.empty(n_rows, np.int64)
    row_start = np.empty(n, np.int64)
    chosen = np.empty(n, np.int64)
    slot = np.empty(n_phi, np.int64)
    row = np.empty(n_phi, np.int64)
    starts = np.zeros(n + 1, np.int64)
    e, r, q = 0, 0, 0
    for d in range(n):
        meta = t.sig_meta[sids[d]]
        k, m, a0 = meta[L_K], meta[L_M], meta[L_SLOTS]
        for i in range(meta[L_GAME_LO], meta[L_GAME_HI]):
            f_slot[e], f_row[e] = t.game_slots[i], d
            e += 1
        if k:
            for j in range(m):
                f_slot[e], f_row[e] = t.latent_f[a0 + ys[d] * m + j], d
                e += 1
        row_start[d], chosen[d] = r, r + ys[d]
        for _ in range(k):
            row_owner[r] = d
            r += 1
        for i in range(k * m):
            slot[q], row[q] = t.latent_phi[a0 + i], i // m
            q += 1
        starts[d + 1] = q
    return (f_slot, np.ones(n_f), f_row, row_owner, row_start, chosen, slot, np.ones(n_phi),
            row, starts)


@njit(cache=True)
def _span(t, uid, y):
    """First and one-past-last word of sentence y in candidate set `uid` (rows are sorted),
    counted from the set's first word."""
    w0, nw = t.unit_meta[uid, U_WORDS], t.unit_meta[uid, U_W]
    rows = t.unit_rows[w0:w0 + nw]
    return np.searchsorted(rows, y, side="left"), np.searchsorted(rows, y, side="right")


@njit(cache=True)
def _parts(t, s):
    """The part ids of signature `s`: its action type, its unit-action, its state labels."""
    ak, sk = t.sig_meta[s, S_ACTION], t.sig_meta[s, S_STATE]
    lo, hi = t.state_meta[sk, K_LO], t.state_meta[sk, K_HI]
    out = np.empty(2 + hi - lo, np.int64)
    out[0], out[1] = t.act_meta[ak, A_ATYPE], t.act_meta[ak, A_ACTION]
    out[2:] = t.state_parts[lo:hi]
    return out


@njit(cache=True)
def _own_rows(t, parts, slot, values, state, r0, c, o_slot, o_val, o_row, o):
    """A datapoint's own entries of one relevance feature from entry o on, one per candidate
    row: the unit-action part's value (`values`: overlap counts or meaning cosines), or with
    `state` the state labels' values added up in their order. Returns the next entry."""
    for r in range(c):
        if state:
            x = 0.0
            for p in parts[2:]:
                x += values[t.part_meta[p, P_ROWS] + r]
        else:
            x = values[t.part_meta[parts[1], P_ROWS] + r]
        o_slot[o], o_val[o], o_row[o] = slot, x, r0 + r
        o += 1
    return o


@njit(cache=True)
def shared_rows(t, rs, sid, y, z, z_lo):
    """The arrays of `batch.build` for datapoints (signature id `sid`, sentence `y`, labels
    z[z_lo[d]:z_lo[d + 1]]), in its order: output rows (slot, value, datapoint), candidate rows
    (owner, first row, chosen row), label rows (static slots, parent label, flags, owner,
    label), the shared relevance sets (slot, value, row, first entry, first row, set of each
    datapoint, own slot, own value, own row) and the first datapoint of each set."""
    n = len(sid)
    # sizes first, so every array is allocated once
    n_f, n_lab, n_rows, n_own = 0, 0, 0, 0
    per_row = 1 + (1 if rs.overlap_state else 0) + (2 if rs.meaning else 0)  # own entries
    set_part = np.empty(n, np.int64)
    set_first = np.empty(n, np.int64)
    owner_set = np.empty(n, np.int64)
    n_sets, n_shared = 0, 0
    for d in range(n):
        s = sid[d]
        uid = t.sig_meta[s, S_UNIT]
        c, nw = t.unit_meta[uid, U_C], t.unit_meta[uid, U_W]
        sk = t.sig_meta[s, S_STATE]
        n_parts = 2 + t.state_meta[sk, K_HI] - t.state_meta[sk, K_LO]
        n_f += t.sig_meta[s, S_GAME_HI] - t.sig_meta[s, S_GAME_LO]
        if y[d] < c:
            lo, hi = _span(t, uid, y[d])
            n_f += (hi - lo) * n_parts
            if rs.labels and z_lo[d + 1] > z_lo[d]:
                labelled = 0
                for j in range(z_lo[d], z_lo[d + 1]):
                    if z[j] < 2:
                        labelled += 1
                n_f += labelled * (n_parts + (1 if rs.grounding else 0))
                n_lab += hi - lo
        n_rows += c + 1
        n_own += per_row * c + 2  # and NULL's two
        pa = t.act_meta[t.sig_meta[s, S_ACTION], A_ATYPE]
        g = 0
        while g < n_sets and set_part[g] != pa:
            g += 1
        if g == n_sets:
            set_part[g], set_first[g] = pa, d
            n_sets += 1
            n_shared += 3 * nw
        owner_set[d] = g
    f_slot = np.empty(n_f, np.int64)
    f_val = np.empty(n_f)
    f_row = np.empty(n_f, np.int64)
    row_owner = np.empty(n_rows, np.int64)
    row_start = np.empty(n, np.int64)
    chosen = np.empty(n, np.int64)
    l_static = np.empty((n_lab, 3, 7), np.int64)
    l_parent = np.empty(n_lab, np.int64)
    l_flags = np.empty((n_lab, 3), np.bool_)
    l_owner = np.empty(n_lab, np.int64)
    l_label = np.empty(n_lab, np.int64)
    o_slot = np.empty(n_own, np.int64)
    o_val = np.empty(n_own)
    o_row = np.empty(n_own, np.int64)
    e, r0, k, o = 0, 0, 0, 0
    for d in range(n):
        s, yd = sid[d], y[d]
        uid = t.sig_meta[s, S_UNIT]
        c, w0 = t.unit_meta[uid, U_C], t.unit_meta[uid, U_WORDS]
        parts = _parts(t, s)
        first = e
        for i in range(t.sig_meta[s, S_GAME_LO], t.sig_meta[s, S_GAME_HI]):  # game features
            f_slot[e], f_val[e] = t.game_slots[i], 1.0
            e += 1
        if yd < c:
            lo, hi = _span(t, uid, yd)
            for j in range(lo, hi):  # the sentence's language features, word by word
                for p in parts:
                    f_slot[e] = t.part_lang_slots[t.part_meta[p, P_WORDS] + j]
                    f_val[e] = t.unit_norm[w0 + j]
                    e += 1
            zd = z[z_lo[d]:z_lo[d + 1]]
            if rs.labels and len(zd):
                f0 = t.sig_meta[s, S_FLAGS]
                for j in range(lo, hi):  # predicates of the action and state words
                    if zd[j - lo] < 2:
                        for p in parts:
                            f_slot[e] = t.part_pred_slots[t.part_meta[p, P_WORDS] + j,
                                                          zd[j - lo]]
                            f_val[e] = t.unit_norm[w0 + j]
                            e += 1
                if rs.grounding:
                    for j in range(lo, hi):
                        zj = zd[j - lo]
                        if zj < 2:  # matches the action's words (action), a state word (state)
                            match = 1.0 if t.flags[f0 + j, 2 if zj == 0 else 0] else 0.0
                            f_slot[e] = rs.match_slots[zj]
                            f_val[e] = match * t.unit_norm[w0 + j]
                            e += 1
                for j in range(lo, hi):
                    l_static[k] = t.unit_psi[w0 + j]
                    par = t.unit_parent[w0 + j]
                    l_parent[k] = ROOT if par < 0 else zd[par - lo]
                    l_flags[k] = t.flags[f0 + j]
                    l_owner[k], l_label[k] = d, zd[j - lo]
                    k += 1
        f_row[first:e] = d
        row_start[d] = r0
        chosen[d] = r0 + yd
        row_owner[r0:r0 + c + 1] = d
        # own relevance entries: overlap counts (and the state's), meaning, NULL's biases
        o = _own_rows(t, parts, rs.overlap_slot, t.part_overlap, False, r0, c, o_slot, o_val,
                      o_row, o)
        if rs.overlap_state:
            o = _own_rows(t, parts, rs.overlap_state_slot, t.part_overlap, True, r0, c, o_slot,
                          o_val, o_row, o)
        if rs.meaning:
            o = _own_rows(t, parts, rs.meaning_slot, t.part_meaning, False, r0, c, o_slot,
                          o_val, o_row, o)
            o = _own_rows(t, parts, rs.meaning_state_slot, t.part_meaning, True, r0, c, o_slot,
                          o_val, o_row, o)
        for i in range(2):
            o_slot[o], o_val[o], o_row[o] = rs.null_slots[i], 1.0, r0 + c
            o += 1
        r0 += c + 1
    # the shared sets: each candidate set's word entries under its action type, once
    sh_slot = np.empty(n_shared, np.int64)
    sh_val = np.empty(n_shared)
    sh_row = np.empty(n_shared, np.int64)
    start = np.zeros(n_sets + 1, np.int64)
    first_row = np.empty(n_sets, np.int64)
    e, r0 = 0, 0
    for g in range(n_sets):
        s = sid[set_first[g]]
        uid = t.sig_meta[s, S_UNIT]
        c, w0, nw = t.unit_meta[uid, U_C], t.unit_meta[uid, U_WORDS], t.unit_meta[uid, U_W]
        p0 = t.part_meta[set_part[g], P_WORDS]
        for j in range(nw):
            x, row = t.unit_norm[w0 + j], t.unit_rows[w0 + j]
            sh_slot[e], sh_slot[e + 1] = t.unit_phi_word[w0 + j, 0], t.unit_phi_word[w0 + j, 1]
            sh_slot[e + 2] = t.part_phi_slots[p0 + j]
            for i in range(3):
                sh_val[e + i], sh_row[e + i] = x, row
            e += 3
        start[g + 1] = e
        first_row[g] = r0
        r0 += c + 1
    return (f_slot, f_val, f_row, row_owner, row_start, chosen, l_static, l_parent, l_flags,
            l_owner, l_label, sh_slot, sh_val, sh_row, start, first_row, owner_set, o_slot,
            o_val, o_row, set_first[:n_sets].copy())
