"""The label layer's compiled arithmetic, shared by the scoring and the update kernels.

p(z_j = l | parent label lp) is a softmax over l of (a_jl + b_lp) / T, a_jl the word's static
label logit plus the weights of the flags it has, b_lp the parent label's weight (lp = action,
state, background, ROOT). It is computed as e^a e^b / sum(e^a e^b), so a word costs 3
exponentials instead of 12; a row whose product underflows takes the direct softmax. Marginals
are propagated parent before child down each sentence's dependency tree.
`nlmcs.model.reference` is the plain numpy version these are tested against.
"""

from __future__ import annotations

import numpy as np
from numba import njit

ROOT = 3  # parent label of a word under the sentence root (nlmcs.model.features.ROOT)

@njit(cache=True)
def softmax_into(x, out, temperature):
    softmax_at(x, out, 0, len(x), temperature)


@njit(cache=True)
def softmax_at(x, out, lo, n, temperature):
    """`softmax_into` of x[lo:lo + n] into out[lo:lo + n], without the slices: a slice is an
    array counted in and out, which in the sweeps' per-word loops cost more than the softmax."""
    lo = np.uint64(lo)  # unsigned: numba leaves out the negative-index wraparound
    m = x[lo] / temperature
    for i in range(lo + 1, lo + n):
        m = max(m, x[i] / temperature)
    s = 0.0
    for i in range(lo, lo + n):
        out[i] = np.exp(x[i] / temperature - m)
        s += out[i]
    for i in range(lo, lo + n):
        out[i] /= s


@njit(cache=True)
def draw(p, u):
    """`reference.draw` with its uniform number u given: the first index whose running sum of p
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


def static_factors(static, temperature):
    """e^(a / T) of the words' static label logits (Wc, 3), each row shifted by its maximum:
    computed once per agent's words and weights, so scoring a signature takes no exponential
    per word (`conditionals_from_factors`)."""
    return np.exp((static - static.max(axis=1, keepdims=True)) / temperature)


@njit(cache=True)
def parent_factors(v, plabel_slots, temperature):
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
def flag_factors(v, flag_slots, temperature):
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
def factor_rows(ea, eb, out, oj):
    """out[oj, lp] = e^a e^b_lp / sum(e^a e^b_lp) for the 4 parent labels; False (and out left
    unfinished) when a row's sum underflows."""
    for lp in range(4):
        total = ea[0] * eb[lp, 0] + ea[1] * eb[lp, 1] + ea[2] * eb[lp, 2]
        if total <= 1e-250:
            return False
        for lab in range(3):
            out[oj, lp, lab] = ea[lab] * eb[lp, lab] / total
    return True


@njit(cache=True)
def word_rows(lo, hi, logits, flags, eb, v, flag_slots, plabel_slots, temperature, out,
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
        if not factor_rows(ea, eb, out, o):
            for lp in range(4):
                for lab in range(3):
                    row[lab] = logit[lab] + v[plabel_slots[lp, lab]]
                softmax_into(row, out[o, lp], temperature)


@njit(cache=True)
def conditionals_from_factors(static, static_exp, flags, v, flag_slots, plabel_slots,
                               temperature, cond):
    """`label_conditionals` from the words' static logits (Wc, 3) and their factors: a word's
    logits are its static ones plus the weights of its flags, so e^a is the static factor times
    the factor of its flag pattern (8 patterns, taken once per call). A row whose product
    underflows is computed directly."""
    eb = parent_factors(v, plabel_slots, temperature)
    ef = flag_factors(v, flag_slots, temperature)
    ea = np.empty(3)
    for j in range(static.shape[0]):
        pat = int(flags[j, 0]) + 2 * int(flags[j, 1]) + 4 * int(flags[j, 2])
        for lab in range(3):
            ea[lab] = static_exp[j, lab] * ef[pat, lab]
        if not factor_rows(ea, eb, cond, j):
            word_rows(j, j + 1, static, flags, eb, v, flag_slots, plabel_slots,
                       temperature, cond, j)


@njit(cache=True)
def label_conditionals(v, static, flags, flag_slots, plabel_slots, temperature, cond):
    """p(z_j = l | parent label lp) (Wc, 4, 3) of the candidate words (lp = A, S, B, ROOT),
    from the words' static label slots (Wc, 3, 7)."""
    logits = np.empty((static.shape[0], 3))
    for j in range(static.shape[0]):
        for lab in range(3):
            s = 0.0
            for t in range(static.shape[2]):
                s += v[static[j, lab, t]]
            logits[j, lab] = s
    word_rows(0, static.shape[0], logits, flags, parent_factors(v, plabel_slots, temperature),
               v, flag_slots, plabel_slots, temperature, cond, 0)


@njit(cache=True)
def propagate(cond, pair, parent, order, marg):
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
def label_marginals(v, static, flags, pair, parent, order, flag_slots, plabel_slots,
                     temperature, cond, marg):
    """Marginal label probabilities (Wc, 3) of many signatures' candidate words at once. A
    manual word with the same flags has the same conditionals in every signature that holds
    it, so they are computed once per distinct (word, flags), the rows of `static` and `flags`,
    and word j reads row pair[j] (in the ablations' games a roll-out's candidate words repeat
    3-6 times)."""
    label_conditionals(v, static, flags, flag_slots, plabel_slots, temperature, cond)
    propagate(cond, pair, parent, order, marg)
