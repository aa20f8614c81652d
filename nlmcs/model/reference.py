"""The value network of Branavan, Silver & Barzilay (2011) in plain numpy: read this to learn it.

This is the reference: `nlmcs.model.network` (with its caches) and the compiled kernels of
`nlmcs.model.kernels` compute the same numbers faster and are tested against it (within 1e-9,
and the same games); `ModelConfig(backend="numpy")` plays with it. Nothing here is cached.

For one candidate, its `Signature` (the agent's, the action's and the state's label words), with
C candidate sentences (those holding the agent's word) of Wc kept words in all, and NULL:

    relevance  p(y)         = softmax_y(u . phi_y / T)                         y in 1..C, NULL
    labels     p(z_j | lp)  = softmax_z((v . psi_jz + v_{lp,z}) / T)           each word j of y,
                                                                               lp its parent's label
    output     Q(y, z)      = w . f(y, z) = game + lang_y + sum_{j in y, z_j != background} pred_jz
    expected   E[Q]         = game + sum_y p_y (lang_y + sum_{j in y} sum_z m_jz pred_jz)

with m the labels' marginals, propagated parent before child down each sentence's dependency
tree. `nonlinear` has `num_latent` hidden states in place of sentences and no labels; `linear` is
Q = game = w . x; `relevance-only` has no label layer. The feature slots come from
`nlmcs.model.rows` (weight-free, built once per signature).

Updates from one roll-out of reward R (R - b under `ModelConfig.center`), `passes` sweeps, each
scoring every datapoint (a drawn y, z) with the weights it starts from, then applying all steps:

    w += alpha   ((R - Q) f - l2 w)                                  output layer
    u += h_alpha (k (1[y] - p) phi - h_l2 u)                         relevance
    v += h_alpha (k (1[z_j] - p(z_j | lp)) psi_j - h_l2 v)           labels, each word of y

with k = (Q - R) Q (`hidden_update="release"`, the 2011 code's sign) or (R - Q) Q ("consistent",
the squared error's gradient). The `expected` rule moves u down the exact gradient of
E_y[(R - Q_y)^2], Q_y the row's Q with labels in expectation: u += h_alpha (-p_y (e_y - E_p[e])
phi_y - h_l2 u), e_y = (R - Q_y)^2, and the labels take k = e_y - (R - Q)^2. The L2 decay acts on
the slots a datapoint touches with a non-zero value.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from nlmcs.model.features import ROOT, Signature
from nlmcs.model.rows import FeatureRows, SigFeatures, row_sums


class Forward(NamedTuple):
    """Everything the forward pass of one signature computes."""

    game: float  # w . x, the game features
    p: np.ndarray  # (C+1,) relevance, NULL last (or (K,) latent states)
    lang: np.ndarray  # (C+1,) w . f_language of each row (0 for NULL)
    pred: np.ndarray | None  # (Wc, 3) w . f_predicate of each word under each label (B: 0)
    cond: np.ndarray | None  # (Wc, 4, 3) p(z_j = z | parent label lp), lp = A, S, B, ROOT
    marg: np.ndarray | None  # (Wc, 3) marginal label probabilities
    row_q: np.ndarray  # (C+1,) Q of each row with the labels in expectation
    expected: float  # E[Q] over y and z


class Weights(NamedTuple):
    u: np.ndarray  # relevance weights (phi)
    v: np.ndarray  # label weights (psi)
    w: np.ndarray  # output weights (f): [game features | text or latent features]


def softmax(x: np.ndarray, temperature: float = 1.0, axis: int = -1) -> np.ndarray:
    z = x / temperature
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def ordered_sum(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """The sum along `axis` taken left to right, as the kernels take it (numpy's `sum` pairs
    terms up, which rounds differently: over many updates the difference would grow)."""
    return np.cumsum(x, axis=axis).take(-1, axis=axis)


def draw(p: np.ndarray, u: float) -> int:
    """The index drawn from probabilities `p` by the uniform number `u`: the first whose running
    sum exceeds u times the total (the last if none)."""
    c = np.cumsum(p)
    return min(int(np.searchsorted(c, u * c[-1], side="right")), len(p) - 1)


def forward(rows: FeatureRows, feats: SigFeatures, wt: Weights) -> Forward:
    """The forward pass of one signature under weights `wt`."""
    cfg = rows.config
    T = cfg.temperature
    game = float(wt.w[feats.game].sum())
    if cfg.kind == "linear":
        return Forward(game, np.ones(1), np.zeros(1), None, None, None, np.array([game]), game)
    if cfg.kind == "nonlinear":  # K latent states, each with its own output features
        p = softmax(wt.u[feats.latent_phi].sum(axis=1), T)  # (K,)
        lang = wt.w[feats.latent_f].sum(axis=1)  # (K,)
        return Forward(game, p, lang, None, None, None, game + lang, game + float(p @ lang))
    uw = feats.unit
    C = len(uw.sentences)
    slot, val, row = rows.relevance_rows(feats)  # phi of C sentences and NULL
    p = softmax(row_sums(row, wt.u[slot] * val, C + 1), T)  # (C+1,)
    lang = np.zeros(C + 1)  # NULL has no language features
    for part in feats.parts:  # action type, unit and action, each state label
        lang[:C] += row_sums(uw.rows, wt.w[part.lang] * uw.norm, C)
    per_row = lang.copy()
    pred = cond = marg = None
    if cfg.kind == "text":
        pred = np.zeros((len(uw.words), 3))  # (Wc, 3), background stays 0
        for part in feats.parts:
            pred[:, :2] += wt.w[part.pred] * uw.norm[:, None]
        if cfg.grounding_features:  # the word names the action (label A) / the state (S)
            pred[:, :2] += feats.match * wt.w[rows.match_slots] * uw.norm[:, None]
        static = wt.v[uw.psi_static].sum(axis=2)  # (Wc, 3)
        flags = feats.flags.astype(float) @ wt.v[rows.flag_slots]  # (Wc, 3)
        logit = (static + flags)[:, None, :] + wt.v[rows.plabel_slots][None]  # (Wc, 4, 3)
        cond = softmax(logit, T, axis=2)
        marg = np.zeros((len(uw.words), 3))
        for level in uw.levels:  # the words at each depth, parents first
            par = uw.parent[level]
            top = par < 0
            marg[level[top]] = cond[level[top], ROOT]
            kids = level[~top]  # m_j = sum_lp m_parent(lp) p(z_j | lp)
            marg[kids] = np.einsum("kp,kpl->kl", marg[par[~top]], cond[kids, :3])
        per_row[:C] += row_sums(uw.rows, (marg[:, :2] * pred[:, :2]).sum(axis=1), C)
    return Forward(game, p, lang, pred, cond, marg, game + per_row, game + float(p @ per_row))


def sample(fwd: Forward, feats: SigFeatures, kind: str, rng: np.random.Generator
           ) -> tuple[int, tuple[int, ...], float]:
    """Draw y, then the labels z of sentence y's words parent before child (one uniform number
    each, from `rng`); return (y, z, Q(y, z))."""
    if kind == "linear":
        return 0, (), fwd.game
    y = draw(fwd.p, rng.random())
    q = fwd.game + float(fwd.lang[y])
    if kind != "text" or y >= len(feats.unit.sentences):
        return y, (), q
    uw = feats.unit
    lo, hi = uw.span(y)
    z = np.full(hi - lo, -1, np.int64)
    zq = 0.0
    for j in uw.order:
        if lo <= j < hi:
            par = uw.parent[j]
            lp = ROOT if par < 0 else z[par - lo]
            z[j - lo] = draw(fwd.cond[j, lp], rng.random())
            zq += fwd.pred[j, z[j - lo]]
    return y, tuple(int(x) for x in z), q + zq


def update(rows: FeatureRows, decisions: Sequence[tuple[Signature, int, tuple[int, ...]]],
           target: float, wt: Weights) -> None:
    """`passes` sweeps of the online updates over one roll-out's datapoints (sig, y, z), all
    learning `target`; the tables of `wt` change in place."""
    cfg = rows.config
    h_alpha, h_l2 = cfg.hidden_rates
    hidden = cfg.kind != "linear"
    for _ in range(cfg.passes):
        steps = {"w": [], "u": [], "v": []}  # (slots, values) to add once the sweep has scored
        for sig, y, z in decisions:
            feats = rows.features(sig)
            f_slot, f_val = rows.output_rows(feats, y, z)
            q = float(ordered_sum(wt.w[f_slot] * f_val)) if len(f_slot) else 0.0
            steps["w"].append((f_slot, cfg.alpha * ((target - q) * f_val - cfg.l2 * wt.w[f_slot])))
            if not hidden:
                continue
            slot, val, row = rows.relevance_rows(feats)
            fwd = forward(rows, feats, wt)  # p under the sweep's weights (and row_q for expected)
            if cfg.hidden_update == "expected":
                err = (target - fwd.row_q) ** 2  # (C+1,)
                coef = -fwd.p * (err - fwd.p @ err)
                k = err[y] - (target - q) ** 2
            else:
                k = (q - target) * q if cfg.hidden_update == "release" else (target - q) * q
                coef = -fwd.p
                coef[y] += 1.0
                coef = k * coef
            steps["u"].append((slot, h_alpha * (coef[row] * val - h_l2 * wt.u[slot] * (val != 0))))
            if z:  # the words of sentence y, each with its 3 label rows of 11 entries
                static, parent, flags = rows.label_rows(feats, y, z)
                slot, val = rows.psi_entries(static, parent, flags)  # (nw, 3, 11)
                p_z = softmax(ordered_sum(wt.v[slot] * val, axis=2), cfg.temperature)  # (nw, 3)
                coef = -p_z
                coef[np.arange(len(z)), np.asarray(z)] += 1.0
                g = k * coef[:, :, None]
                steps["v"].append((slot.ravel(),
                                   (h_alpha * (g * val - h_l2 * wt.v[slot] * (val != 0))).ravel()))
        for name, table in zip("wuv", (wt.w, wt.u, wt.v), strict=True):
            for slot, step in steps[name]:
                np.add.at(table, slot, step)

