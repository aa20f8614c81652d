"""The four-layer value network of Branavan, Silver & Barzilay (IJCAI 2011), scored with numpy.

Layers (paper names): x -> hidden softmax layers y (sentence relevance, weights u over phi) and
z (a label in {action, state, background} per word of the chosen sentence, weights v over psi,
sampled parent before child) -> fixed features f -> Q = w . f.

The weights are three hashed tables. Everything a candidate's features depend on is its
`Signature` (label words), so the network keeps two caches: weight-free feature slots (kept for
the whole search) and scores gathered from the weights (dropped whenever the learner changes a
weight, i.e. per weight snapshot). A search step evaluates all candidates of all agents through
`expected_q`, which fills scores for the new signatures only.

The ops are small sparse gathers and segment sums, where numpy's per-call cost is several times
lower than torch's on one CPU thread; the tables are plain float64 arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nlmcs.model.config import ModelConfig
from nlmcs.model.features import (
    ROOT,
    ManualIndex,
    Signature,
    T,
    game_ids,
    mix,
    sid,
    slots,
    stem_ids,
)


@dataclass
class UnitWords:
    """Weight-free slots of the candidate sentences of one agent word (C sentences, Wc words)."""

    sentences: np.ndarray  # (C,) sentence ids
    words: np.ndarray  # (Wc,) global word index
    rows: np.ndarray  # (Wc,) candidate row of each word
    parent: np.ndarray  # (Wc,) local index of the parent word, -1 under the root
    levels: list[np.ndarray]  # local word indices by depth, parents first
    phi_word: np.ndarray  # (Wc, 2) u slots: bag of words, word x unit
    psi_static: np.ndarray  # (Wc, 3, 7) v slots
    in_unit: np.ndarray  # (Wc,) the word is one of the agent's words


@dataclass
class Part:
    """Weight-free slots of one feature family (an action type, a unit-action, or one state
    label) over the words of one agent word's candidate sentences."""

    phi: np.ndarray | None  # (Wc,) u slots (word x action type), or None
    lang: np.ndarray  # (Wc,) w slots of the language feature
    pred: np.ndarray  # (Wc, 2) w slots of the predicate feature, labels action / state
    mask: np.ndarray  # (Wc,) the word is one of the part's label words
    overlap: np.ndarray | None  # (C,) agent + action label words per sentence (unit-action part)


@dataclass
class SigFeatures:
    """Weight-free features of one signature (mostly references to shared parts)."""

    game: np.ndarray  # (G,) w slots
    unit: UnitWords | None = None
    parts: list[Part] | None = None  # [action type, unit-action, *state labels]
    keys: list[tuple] | None = None  # cache keys of `parts`
    flags: np.ndarray | None = None  # (Wc, 3) word is a state / unit / action word
    flag_key: tuple | None = None  # identifies `flags` for the label-layer cache
    latent_phi: np.ndarray | None = None  # (K, k) u slots of the latent states
    latent_f: np.ndarray | None = None  # (K, k) w slots under each latent state

    @property
    def match(self) -> np.ndarray:
        """(Wc, 2): the word matches the action's words (label action) / a state word (state)."""
        return self.flags[:, [2, 0]].astype(float)

    def lang(self, lo: int, hi: int) -> np.ndarray:
        return np.stack([p.lang[lo:hi] for p in self.parts], axis=1)

    def pred(self, lo: int, hi: int) -> np.ndarray:
        return np.stack([p.pred[lo:hi] for p in self.parts], axis=2)


@dataclass
class SigScores:
    """Scores of one signature under the current weights."""

    game: float
    p: np.ndarray  # (C+1,) relevance, last entry NULL (or (K,) latent states)
    lang: np.ndarray  # (C+1,) w . f_language per row (0 for NULL)
    pred: np.ndarray | None  # (Wc, 3) w . f_predicate per word and label (background 0)
    cond: np.ndarray | None  # (Wc, 4, 3) p(z_j = l | parent label lp), lp = A, S, B, ROOT
    marg: np.ndarray | None  # (Wc, 3) marginal label probabilities
    expected: float  # E[Q] over y and z


@dataclass(frozen=True)
class Decision:
    """One sampled evaluation: the datapoint a roll-out stores (symbolic, cheap to ship)."""

    sig: Signature
    y: int  # candidate row (len(candidates) = NULL) or latent state
    z: tuple[int, ...]  # labels of the chosen sentence's words, in sentence order
    q: float


class ValueNetwork:
    """Q(s, a, d) for every model kind; see `ModelConfig.kind`."""

    def __init__(self, config: ModelConfig, index: ManualIndex | None = None):
        if config.kind in ("relevance", "text") and index is None:
            raise ValueError(f"model kind {config.kind!r} needs a manual index")
        self.config = config
        self.index = index
        self.bits = config.table_bits
        size = 1 << self.bits
        self.u = np.zeros(size)
        self.v = np.zeros(size)
        self.w = np.zeros(size)
        self._units: dict[str, UnitWords] = {}
        self._features: dict[Signature, SigFeatures] = {}
        self._scores: dict[Signature, SigScores] = {}
        self._parts: dict[tuple, Part] = {}
        self._part_cache: dict = {}  # weight-dependent scores of parts, units, label layers
        self._stale: dict[Signature, float] = {}  # E[Q] kept across weight changes
        b = self.bits
        self.null_slots = slots(mix(T.NULL, np.array([0, 1], np.uint64)), b)
        self.overlap_slot = int(slots(mix(T.OVERLAP), b))
        lab = np.arange(3, dtype=np.uint64)
        self.plabel_slots = slots(mix(T.PSI_PLABEL, np.arange(4, dtype=np.uint64)[:, None], lab), b)
        self.flag_slots = slots(mix(T.PSI_FLAG, np.arange(3, dtype=np.uint64)[:, None], lab), b)
        self.match_slots = slots(mix(T.MATCH, np.arange(2, dtype=np.uint64)), b)

    # --- weights ------------------------------------------------------------------------------
    def reset(self) -> None:
        """All weights to zero (the value function is local to the current real state)."""
        self.u[:] = 0.0
        self.v[:] = 0.0
        self.w[:] = 0.0
        self.weights_changed()
        self.refresh_stale()

    def weights_changed(self) -> None:
        self._scores.clear()
        self._part_cache.clear()

    @property
    def text(self) -> bool:
        return self.config.kind in ("relevance", "text")

    # --- weight-free features -----------------------------------------------------------------
    def unit_words(self, agent: tuple[str, ...]) -> UnitWords:
        key = " ".join(agent)
        found = self._units.get(key)
        if found is not None:
            return found
        ix, b = self.index, self.bits
        sentences = ix.candidates(agent, self.config.max_sentences)
        words, rows = ix.words_of(sentences)
        local = np.full(len(ix.stem_id), -1, dtype=np.int64)
        local[words] = np.arange(len(words))
        gparent = ix.parent[words]
        parent = np.where(gparent >= 0, local[np.maximum(gparent, 0)], -1)
        depth = ix.depth[words]
        top = int(depth.max()) + 1 if len(words) else 0
        levels = [np.flatnonzero(depth == d) for d in range(top)]
        stems = ix.stem_id[words]
        phi_word = np.stack(
            [slots(mix(T.BOW, stems), b), slots(mix(T.WORD_UNIT, stems, sid(key)), b)], axis=1
        )
        found = UnitWords(
            sentences, words, rows, parent, levels, phi_word, slots(ix.psi_static[words], b),
            np.isin(stems, stem_ids(agent)),
        )
        self._units[key] = found
        return found

    def _part(self, key: tuple, uw: UnitWords, stems: np.ndarray) -> Part:
        found = self._parts.get(key)
        if found is not None:
            return found
        kind, _, label = key
        b, s = self.bits, stems
        lab = np.arange(2, dtype=np.uint64)[None, :]
        if kind == "atype":
            t = sid(label)
            found = Part(
                slots(mix(T.WORD_ATYPE, s, t), b),
                slots(mix(T.LANG_ATYPE, s, t), b),
                slots(mix(T.PRED_ATYPE, lab, s[:, None], t), b),
                np.zeros(len(s), bool),
                None,
            )
        elif kind == "action":
            unit, act = sid(key[1]), sid(label)
            mask = np.isin(s, stem_ids(label.split()))
            in_labels = np.isin(s, stem_ids([key[1], label]))
            found = Part(
                None,
                slots(mix(T.LANG_UA, s, unit, act), b),
                slots(mix(T.PRED_UA, lab, s[:, None], unit, act), b),
                mask,
                np.bincount(uw.rows, weights=in_labels.astype(float),
                            minlength=len(uw.sentences)),  # fmt: skip
            )
        else:  # one state label
            t = sid(label)
            found = Part(
                None,
                slots(mix(T.LANG_STATE, s, t), b),
                slots(mix(T.PRED_STATE, lab, s[:, None], t), b),
                np.isin(s, stem_ids([label])),
                None,
            )
        self._parts[key] = found
        return found

    def features(self, sig: Signature) -> SigFeatures:
        found = self._features.get(sig)
        if found is not None:
            return found
        if len(self._features) > 50000:  # bound memory over long games
            self._features.clear()
        cfg, b = self.config, self.bits
        use_game = cfg.game_features or cfg.kind in ("linear", "latent")
        game = game_ids(sig, b) if use_game else np.zeros(0, np.int64)
        feats = SigFeatures(game)
        if cfg.kind == "latent":
            k = np.arange(cfg.num_latent, dtype=np.uint64)[:, None]
            state = np.array([sid(s) for s in sig.state], dtype=np.uint64)
            parts = np.concatenate(
                [np.array([sid("u:" + sig.unit), sid("a:" + sig.action_key)], np.uint64), state]
            )
            feats.latent_phi = slots(mix(T.LATENT_PHI, k, parts[None, :]), b)
            feats.latent_f = slots(mix(T.LATENT_F, k, parts[None, :], sid(sig.action_key)), b)
        elif self.text:
            uw = self.unit_words(sig.agent)
            stems = self.index.stem_id[uw.words]
            unit = sig.unit
            keys = [("atype", unit, sig.atype), ("action", unit, sig.action_key)]
            keys += [("state", unit, label) for label in sig.state]
            feats.unit = uw
            feats.keys = keys
            feats.parts = [self._part(k, uw, stems) for k in keys]
            in_state = np.zeros(len(stems), bool)
            for part in feats.parts[2:]:
                in_state |= part.mask
            feats.flags = np.stack([in_state, uw.in_unit, feats.parts[1].mask], axis=1)
            # Equal flags <=> the same label words occur in the sentences: a cheap cache key.
            feats.flag_key = (unit,) + tuple(k for k, p in zip(keys[1:], feats.parts[1:],
                                                                strict=True) if p.mask.any())
        self._features[sig] = feats
        return feats

    # --- scores under the current weights -----------------------------------------------------
    def scores(self, sig: Signature) -> SigScores:
        found = self._scores.get(sig)
        if found is None:
            found = self._compute_scores(sig)
            self._scores[sig] = found
        return found

    def _part_scores(self, key: tuple, part: Part, uw: UnitWords):
        """(phi per row or None, w . f_language per row, w . f_predicate per word (Wc, 2))."""
        found = self._part_cache.get(key)
        if found is None:
            n = len(uw.sentences)
            phi = None
            if part.phi is not None:
                phi = np.bincount(uw.rows, weights=self.u[part.phi], minlength=n)
            lang = np.bincount(uw.rows, weights=self.w[part.lang], minlength=n)
            found = (phi, lang, self.w[part.pred])
            self._part_cache[key] = found
        return found

    def _unit_scores(self, key: str, uw: UnitWords):
        """(phi of bag of words + word x unit per row, static psi score per word (Wc, 3))."""
        found = self._part_cache.get(key)
        if found is None:
            phi = np.bincount(
                uw.rows, weights=self.u[uw.phi_word].sum(axis=1), minlength=len(uw.sentences)
            )
            static = self.v[uw.psi_static].sum(axis=2) if self.config.kind == "text" else None
            found = (phi, static)
            self._part_cache[key] = found
        return found

    def _labels(self, uw: UnitWords, key: tuple, static: np.ndarray, flags: np.ndarray):
        """p(z_j | parent label) (Wc, 4, 3), marginals (Wc, 3) and their cache key; shared by
        signatures with the same agent word and word flags."""
        key = ("labels", key)
        found = self._part_cache.get(key)
        if found is not None:
            return found
        temp = self.config.temperature
        logit = static + flags.astype(float) @ self.v[self.flag_slots]
        logit = logit[:, None, :] + self.v[self.plabel_slots][None, :, :]  # (Wc, 4, 3)
        cond = _softmax(logit / temp, axis=2)
        marg = np.zeros((len(uw.words), 3))
        for level in uw.levels:
            par = uw.parent[level]
            root = par < 0
            marg[level[root]] = cond[level[root], ROOT]
            kids = level[~root]
            if len(kids):
                marg[kids] = np.einsum("kp,kpl->kl", marg[par[~root]], cond[kids, :3])
        found = (cond, marg, key)
        self._part_cache[key] = found
        return found

    def _compute_scores(self, sig: Signature) -> SigScores:
        cfg = self.config
        feats = self.features(sig)
        game = float(self.w[feats.game].sum())
        temp = cfg.temperature
        if cfg.kind == "linear":
            return SigScores(game, np.ones(1), np.zeros(1), None, None, None, game)
        if cfg.kind == "latent":
            p = _softmax(self.u[feats.latent_phi].sum(axis=1) / temp)
            lang = self.w[feats.latent_f].sum(axis=1)
            return SigScores(game, p, lang, None, None, None, game + float(p @ lang))
        uw = feats.unit
        n_rows = len(uw.sentences)
        unit_phi, static = self._unit_scores(sig.unit, uw)
        parts = [self._part_scores(k, p, uw) for k, p in zip(feats.keys, feats.parts,
                                                               strict=True)]  # fmt: skip
        logits = np.empty(n_rows + 1)
        logits[:n_rows] = unit_phi + parts[0][0]
        logits[:n_rows] += self.u[self.overlap_slot] * feats.parts[1].overlap
        logits[n_rows] = self.u[self.null_slots].sum()
        p = _softmax(logits / temp)
        lang = np.zeros(n_rows + 1)
        for part in parts:
            lang[:n_rows] += part[1]
        if cfg.kind == "relevance":
            return SigScores(game, p, lang, None, None, None, game + float(p @ lang))
        cond, marg, mkey = self._labels(uw, feats.flag_key, static, feats.flags)
        per_row = lang.copy()
        for key, part in zip(feats.keys, parts, strict=True):
            per_row[:n_rows] += self._expected_pred(key, mkey, uw, part[2], marg)
        if cfg.grounding_features:
            per_row[:n_rows] += self._expected_pred(
                ("match",), mkey, uw, feats.match * self.w[self.match_slots], marg
            )
        return SigScores(game, p, lang, None, cond, marg, game + float(p @ per_row))

    def _expected_pred(self, key, mkey, uw: UnitWords, pred: np.ndarray, marg: np.ndarray):
        """Per candidate row: sum over its words of E[w . f_predicate] for one feature part."""
        full = (key, mkey)
        found = self._part_cache.get(full)
        if found is None:
            word_q = (marg[:, :2] * pred).sum(axis=1)
            found = np.bincount(uw.rows, weights=word_q, minlength=len(uw.sentences))
            self._part_cache[full] = found
        return found

    def _pred(self, sig: Signature, sc: SigScores) -> np.ndarray:
        """(Wc, 3) w . f_predicate of each word under each label (background 0), on demand."""
        if sc.pred is None:
            feats = self.features(sig)
            uw = feats.unit
            pred = np.zeros((len(uw.words), 3))
            for key, part in zip(feats.keys, feats.parts, strict=True):
                pred[:, :2] += self._part_scores(key, part, uw)[2]
            if self.config.grounding_features:
                pred[:, :2] += feats.match * self.w[self.match_slots]
            sc.pred = pred
        return sc.pred

    # --- evaluation ---------------------------------------------------------------------------
    def expected_q(self, sigs: list[Signature], *, stale: bool = False) -> np.ndarray:
        """E[Q] for each signature. With `stale`, a value computed since the last
        `refresh_stale` is reused even if the weights changed since (a cheap ranking)."""
        if not stale:
            return np.array([self.scores(s).expected for s in sigs])
        out = np.empty(len(sigs))
        cache = self._stale
        for i, s in enumerate(sigs):
            v = cache.get(s)
            if v is None:
                v = cache[s] = self.scores(s).expected
            out[i] = v
        return out

    def refresh_stale(self) -> None:
        self._stale.clear()

    def sample(self, sig: Signature, rng: np.random.Generator) -> Decision:
        """Draw y (and z) at the configured temperature and return the resulting Q = w . f."""
        sc = self.scores(sig)
        if self.config.kind == "linear":
            return Decision(sig, 0, (), sc.game)
        y = int(_draw(sc.p, rng))
        q = sc.game + float(sc.lang[y])
        z: tuple[int, ...] = ()
        if self.config.kind == "text":
            uw = self.features(sig).unit
            if y < len(uw.sentences):
                z, zq = self._sample_labels(sig, sc, uw, y, rng)
                q += zq
        return Decision(sig, y, z, q)

    def _sample_labels(
        self, sig: Signature, sc: SigScores, uw: UnitWords, y: int, rng
    ) -> tuple[tuple, float]:
        lo = int(np.searchsorted(uw.rows, y, side="left"))
        hi = int(np.searchsorted(uw.rows, y, side="right"))
        labels = np.full(hi - lo, -1, dtype=np.int64)
        pred = self._pred(sig, sc)
        order = sorted(range(lo, hi), key=lambda j: self.index.depth[uw.words[j]])
        q = 0.0
        for j in order:
            par = uw.parent[j]
            lp = ROOT if par < 0 else labels[par - lo]
            lab = int(_draw(sc.cond[j, lp], rng))
            labels[j - lo] = lab
            q += pred[j, lab]
        return tuple(int(x) for x in labels), q

    def decision_q(self, sig: Signature, y: int, z: tuple[int, ...]) -> float:
        """Q = w . f for given hidden values (for tests and logs)."""
        sc = self.scores(sig)
        q = sc.game + float(sc.lang[y]) if self.config.kind != "linear" else sc.game
        if z:
            uw = self.features(sig).unit
            lo = int(np.searchsorted(uw.rows, y, side="left"))
            pred = self._pred(sig, sc)
            q += float(sum(pred[lo + k, lab] for k, lab in enumerate(z)))
        return q

    def relevance(self, sig: Signature) -> tuple[np.ndarray, np.ndarray]:
        """Candidate sentence ids (-1 = NULL) and their relevance probabilities."""
        sc = self.scores(sig)
        if not self.text:
            return np.arange(len(sc.p)), sc.p
        sentences = self.features(sig).unit.sentences
        return np.append(sentences, -1), sc.p


def _softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _draw(p: np.ndarray, rng: np.random.Generator) -> int:
    """Index drawn from probabilities `p` with one uniform number."""
    c = np.cumsum(p)
    return min(int(np.searchsorted(c, rng.random() * c[-1], side="right")), len(p) - 1)
