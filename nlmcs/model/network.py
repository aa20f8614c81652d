"""The four-layer value network of Branavan, Silver & Barzilay (IJCAI 2011), scored with numpy.

Layers (paper names): x -> hidden softmax layers y (sentence relevance, weights u over phi) and
z (a label in {action, state, background} per word of the chosen sentence, weights v over psi,
sampled parent before child) -> fixed features f -> Q = w . f.

The weights are three hashed tables of float64. Everything a candidate's features depend on is
its `Signature` (label words); the weight-free feature rows come from `nlmcs.model.rows` (kept for
the whole search) and the scores gathered from the weights are cached per signature and per shared
part (dropped whenever the learner changes a weight, i.e. per weight snapshot). A search step
evaluates all candidates of all agents through `expected_q`, which fills scores for the new
signatures only. The ops are small sparse gathers and segment sums, where numpy's per-call cost
is several times lower than torch's on one CPU thread.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nlmcs.model.compiled import kernels
from nlmcs.model.config import ModelConfig
from nlmcs.model.features import ROOT, ManualIndex, Signature
from nlmcs.model.rows import FeatureRows, Part, SigFeatures, UnitWords, overlap_sum, row_sums
from nlmcs.model.shared_scores import SharedScores, signature_key


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
    pred_in: tuple | None = None  # (Wc, 2) x 2: the predicate sums' two pieces (compiled)


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
        self.config = config
        self.index = index
        self.rows = FeatureRows(config, index)
        size = 1 << config.table_bits
        self.u = np.zeros(size)
        self.v = np.zeros(size)
        self.w = np.zeros(2 * size)  # [game features | text or latent output features]
        self.reward_sum = 0.0  # rewards learned from in this real step (for `center`)
        self.reward_count = 0
        self._started = False  # persistent weights are initialised once per game
        self._scores: dict[Signature, SigScores] = {}
        self._part_cache: dict = {}  # weight-dependent scores of parts, units, label layers
        self.shared: SharedScores | None = None  # E[Q] shared with the other roll-out workers
        self.snapshot = 0  # weight changes so far: the same count in every replica
        # E[Q] under the current weights when workers share them: this worker's or another's
        self._known: dict[Signature, float] = {}
        self._keys: dict[Signature, tuple[int, int]] = {}
        # u, v, w as a replica in another process last copied them (`keep_changes`)
        self._shipped: tuple[np.ndarray, ...] | None = None

    # --- weights ------------------------------------------------------------------------------
    def reset(self) -> None:
        """A new real step: the game-feature weights start from zero (the value function is
        local to the current state); so do u, v and the text half of w, unless they persist
        (`ModelConfig.persist`), in which case they start from zero and their priors once."""
        half = self.rows.text_offset
        self.w[:half] = 0.0
        if self.config.persist == "none" or not self._started:
            self.u[:] = 0.0
            self.v[:] = 0.0
            self.w[half:] = 0.0
            self._started = True
        self.reward_sum, self.reward_count = 0.0, 0
        self.weights_changed()
        if self._shipped is not None:  # the other replica resets alike
            for table, copy in zip((self.u, self.v, self.w), self._shipped, strict=True):
                np.copyto(copy, table)

    def learned(self) -> tuple:
        """Everything learning changes (weights and this step's reward totals): what a replica
        in another process copies instead of replaying the updates."""
        return (self.u, self.v, self.w, self.reward_sum, self.reward_count, self._started)

    def load_learned(self, learned: tuple) -> None:
        u, v, w, self.reward_sum, self.reward_count, self._started = learned
        self.u[:], self.v[:], self.w[:] = u, v, w
        self.weights_changed()

    def keep_changes(self) -> None:
        """Note the weights as they are now, as a replica identical to this one holds them:
        `changes` then gives what moved since (or since the last `changes` or reset)."""
        self._shipped = (self.u.copy(), self.v.copy(), self.w.copy())

    def changes(self) -> tuple:
        """What learning changed since `keep_changes`, the last call or the last reset,
        picklable: the slots whose bits differ and their values, the reward totals and the
        snapshot. A replica that was identical to this one then, and reset alike, becomes
        identical again with `load_changes` (a step moves a small share of the tables)."""
        moved = []
        for table, copy in zip((self.u, self.v, self.w), self._shipped, strict=True):
            # bits, not values: -0.0 == 0.0 and nan != nan
            slots = np.flatnonzero(table.view(np.int64) != copy.view(np.int64))
            values = table[slots]
            copy[slots] = values
            moved.append((slots, values))
        return tuple(moved), self.reward_sum, self.reward_count, self._started, self.snapshot

    def load_changes(self, changes: tuple) -> None:
        moved, self.reward_sum, self.reward_count, self._started, snapshot = changes
        for table, (slots, values) in zip((self.u, self.v, self.w), moved, strict=True):
            table[slots] = values
        self.weights_changed()
        self.snapshot = snapshot

    def weights_changed(self) -> None:
        self._scores.clear()
        self._part_cache.clear()
        self._known.clear()
        self.snapshot += 1

    @property
    def text(self) -> bool:
        return self.rows.text

    def features(self, sig: Signature) -> SigFeatures:
        return self.rows.features(sig)

    # --- scores under the current weights -----------------------------------------------------
    def scores(self, sig: Signature) -> SigScores:
        """Every piece of a signature's scores, the label layer's per-word arrays included."""
        found = self._scores.get(sig)
        if found is None or (found.cond is None and self.config.kind == "text"):
            found = self._scores[sig] = self._score(sig, full=True)
        return found

    def _value(self, sig: Signature) -> SigScores:
        """What the search reads (E[Q], relevance p, language scores): on the compiled
        backend the text kinds' per-word arrays are left out (`kernels.text_expected`) and
        `scores` adds them only for a signature something asks them of."""
        found = self._scores.get(sig)
        if found is None:
            found = self._scores[sig] = self._score(sig, full=False)
        return found

    def _score(self, sig: Signature, *, full: bool) -> SigScores:
        if self.config.backend == "numba" and self.text:
            return self._compiled_scores(sig, full=full)
        return self._compute_scores(sig)

    def _compiled_scores(self, sig: Signature, *, full: bool) -> SigScores:
        """The text kinds' scores with the label layer and expectations in one compiled call
        (`kernels.text_scores`, or `kernels.text_expected` without the per-word arrays) on
        the weight sums signatures share (`_action_sums`, `_state_sums`); the numpy code below
        (`_compute_scores`) is the reference they are tested against."""
        compiled = kernels()
        cfg, rows = self.config, self.rows
        feats = self.features(sig)
        uw = feats.unit
        game = float(self.w[feats.game].sum())
        labels = cfg.kind == "text"
        rel_a, lang_a, pred_a = self._action_sums(feats)
        rel_b, lang_b, pred_b = self._state_sums(feats)
        if labels:
            static, static_exp = self._static(uw)
        else:
            static, static_exp = _NO_STATIC, _NO_STATIC
        args = (len(uw.sentences), uw.rows, uw.parent, uw.order, rel_a, rel_b,
                self._null_logit(), lang_a, lang_b, pred_a, pred_b, uw.norm,
                cfg.grounding_features, self.w[rows.match_slots], static, static_exp,
                feats.flags, labels, self.v, rows.flag_slots, rows.plabel_slots,
                cfg.temperature, game)
        if not full:
            # The agent's first candidate scored under these weights lends its label marginals
            # to the others (`text_expected`'s base): they differ in a few words' flags.
            key = ("label marginals", uw.key)
            base = self._part_cache.get(key, _NO_BASE) if labels else _NO_BASE
            p, lang, expected, marg = compiled.text_expected(*args, *base)
            if labels and base is _NO_BASE:
                self._part_cache[key] = (marg, feats.flags)
            return SigScores(game, p, lang, None, None, None, expected,
                             (pred_a, pred_b) if labels else None)
        p, lang, cond, marg, pred, expected = compiled.text_scores(*args)
        if not labels:
            return SigScores(game, p, lang, None, None, None, expected)
        return SigScores(game, p, lang, pred, cond, marg, expected)

    def _action_sums(self, feats: SigFeatures):
        """The compiled kernels' inputs that depend on the candidate's action (unit, action
        type, action): relevance logits (C,) without the state overlap, language score (C,)
        and predicate score per word (Wc, 2) of the action type and action parts. A ranked
        set takes its rows and words of the agent's whole set's sums (`_ranked_cut`)."""
        key = ("action sums", feats.keys[0], feats.keys[1])
        found = self._part_cache.get(key)
        if found is None:
            uw = feats.unit
            if uw.full is not None:
                found = self._ranked_cut(feats, self._action_sums_of, 0, 2)
            else:
                found = self._action_sums_of(feats.keys[:2], feats.parts[:2], uw)
            self._part_cache[key] = found
        return found

    def _action_sums_of(self, keys: list, parts: list, uw: UnitWords):
        a = self._part_scores(keys[0], parts[0], uw)
        action = parts[1]
        return kernels().action_sums(uw.rows, uw.norm, self._unit_scores(uw.key, uw)[0], a[0],
                                      a[1], a[2], self.w, action.lang, action.pred,
                                      self.u[self.rows.overlap_slot], action.overlap)

    def _state_sums(self, feats: SigFeatures):
        """The same for the agent's state labels (unit, state labels), which every candidate
        of one agent shares: the state overlap's relevance (C,) (zeros without
        `overlap_state`), language score (C,) and predicate score per word (Wc, 2)."""
        uw = feats.unit
        key = feats.derived.get("state key")
        if key is None:
            key = feats.derived["state key"] = ("state sums", uw.key,
                                                *(k[2] for k in feats.keys[2:]))
        found = self._part_cache.get(key)
        if found is None:
            if uw.full is not None:
                found = self._ranked_cut(feats, self._state_sums_of, 2, len(feats.keys))
            else:
                found = self._state_sums_of(feats.keys[2:], feats.parts[2:], uw)
            self._part_cache[key] = found
        return found

    def _state_sums_of(self, keys: list, parts: list, uw: UnitWords):
        n = len(uw.sentences)
        lang = np.zeros(n)
        pred = np.zeros((len(uw.words), 2))
        for k, part in zip(keys, parts, strict=True):
            scores = self._part_scores(k, part, uw)
            lang += scores[1]
            pred += scores[2]
        rel = (self.u[self.rows.overlap_state_slot] * overlap_sum(parts, n)
               if self.config.overlap_state else np.zeros(n))
        return rel, lang, pred

    def _ranked_cut(self, feats: SigFeatures, sums_of, lo: int, hi: int):
        """A ranked set's sums (`sums_of` over its parts lo..hi) as the rows and words it
        keeps of the agent's whole set's sums, which all ranked sets of that agent and those
        labels share (kept per weight snapshot): the same values, each the same sum of the
        same numbers, as summing the set's own cut-out parts."""
        uw, whole, rows = feats.unit, feats.unit.full, self.rows
        keys = [(k[0], whole.key, k[2]) for k in feats.keys[lo:hi]]
        key = ("whole sums", lo, *keys)
        found = self._part_cache.get(key)
        if found is None:
            parts = [rows.part(k[0], k[2], whole) for k in keys]
            found = self._part_cache[key] = sums_of(keys, parts, whole)
        rel, lang, pred = found
        return rel[uw.picked_rows], lang[uw.picked_rows], pred[uw.pick]

    def _static(self, uw: UnitWords) -> tuple[np.ndarray, np.ndarray]:
        """The words' static label logits (Wc, 3) and their factors (`kernels.static_factors`)
        under the current weights."""
        static = self._unit_scores(uw.key, uw)[1]
        key = ("static factors", uw.key)
        static_exp = self._part_cache.get(key)
        if static_exp is None:
            if uw.full is not None:  # per word: the whole set's, cut out
                static_exp = self._static(uw.full)[1][uw.pick]
            else:
                static_exp = kernels().static_factors(static, self.config.temperature)
            self._part_cache[key] = static_exp
        return static, static_exp

    def _null_logit(self) -> float:
        found = self._part_cache.get("null")
        if found is None:
            found = self._part_cache["null"] = float(self.u[self.rows.null_slots].sum())
        return found

    def _row_inputs(self, feats: SigFeatures):
        """What the text kinds' scores are built from: relevance logits per candidate row (C,),
        language score per row (C,), each feature part's cached sums and the words' static
        label logits (Wc, 3) (None for relevance-only)."""
        cfg, rows = self.config, self.rows
        uw = feats.unit
        unit_phi, static = self._unit_scores(uw.key, uw)
        parts = [self._part_scores(k, p, uw) for k, p in zip(feats.keys, feats.parts,
                                                               strict=True)]  # fmt: skip
        relevance = unit_phi + parts[0][0]
        relevance += self.u[rows.overlap_slot] * feats.parts[1].overlap
        if cfg.overlap_state:
            relevance += self.u[rows.overlap_state_slot] * rows.state_overlap(feats)
        lang = parts[0][1].copy()
        for part in parts[1:]:
            lang += part[1]
        return relevance, lang, parts, static

    def _part_scores(self, key: tuple, part: Part, uw: UnitWords):
        """(phi per row or None, w . f_language per row, w . f_predicate per word (Wc, 2))."""
        found = self._part_cache.get(key)
        if found is None:
            if uw.full is not None:  # a ranked set: cut out of the agent's whole set's sums
                whole = uw.full
                phi, lang, pred = self._part_scores(
                    (key[0], whole.key, key[2]), self.rows.part(key[0], key[2], whole), whole)
                found = (None if phi is None else phi[uw.picked_rows], lang[uw.picked_rows],
                         pred[uw.pick])
            else:
                n = len(uw.sentences)
                phi = None
                if part.phi is not None:
                    phi = row_sums(uw.rows, self.u[part.phi] * uw.norm, n)
                lang = row_sums(uw.rows, self.w[part.lang] * uw.norm, n)
                found = (phi, lang, self.w[part.pred] * uw.norm[:, None])
            self._part_cache[key] = found
        return found

    def _unit_scores(self, key: tuple, uw: UnitWords):
        """(phi of bag of words + word x unit per row, static psi score per word (Wc, 3))."""
        found = self._part_cache.get(key)
        if found is None:
            if uw.full is not None:  # a ranked set: its rows and words of the whole set's
                phi, static = self._unit_scores(uw.full.key, uw.full)
                found = (phi[uw.picked_rows], None if static is None else static[uw.pick])
            else:
                phi = row_sums(uw.rows, self.u[uw.phi_word].sum(axis=1) * uw.norm,
                               len(uw.sentences))
                static = (self.v[uw.psi_static].sum(axis=2) if self.config.kind == "text"
                          else None)
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
        logit = static + flags.astype(float) @ self.v[self.rows.flag_slots]
        logit = logit[:, None, :] + self.v[self.rows.plabel_slots][None, :, :]  # (Wc, 4, 3)
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
        if cfg.kind == "nonlinear":
            p = _softmax(self.u[feats.latent_phi].sum(axis=1) / temp)
            lang = self.w[feats.latent_f].sum(axis=1)
            return SigScores(game, p, lang, None, None, None, game + float(p @ lang))
        uw = feats.unit
        n_rows = len(uw.sentences)
        relevance, row_lang, parts, static = self._row_inputs(feats)
        logits = np.empty(n_rows + 1)
        logits[:n_rows] = relevance
        logits[n_rows] = self.u[self.rows.null_slots].sum()
        p = _softmax(logits / temp)
        lang = np.zeros(n_rows + 1)
        lang[:n_rows] = row_lang
        if cfg.kind == "relevance-only":
            return SigScores(game, p, lang, None, None, None, game + float(p @ lang))
        cond, marg, mkey = self._labels(uw, feats.flag_key, static, feats.flags)
        per_row = lang.copy()
        for key, part in zip(feats.keys, parts, strict=True):
            per_row[:n_rows] += self._expected_pred(key, mkey, uw, part[2], marg)
        if cfg.grounding_features:
            match = feats.match * self.w[self.rows.match_slots] * uw.norm[:, None]
            per_row[:n_rows] += self._expected_pred(("match",), mkey, uw, match, marg)
        return SigScores(game, p, lang, None, cond, marg, game + float(p @ per_row))

    def _expected_pred(self, key, mkey, uw: UnitWords, pred: np.ndarray, marg: np.ndarray):
        """Per candidate row: sum over its words of E[w . f_predicate] for one feature part."""
        full = (key, mkey)
        found = self._part_cache.get(full)
        if found is None:
            word_q = (marg[:, :2] * pred).sum(axis=1)
            found = row_sums(uw.rows, word_q, len(uw.sentences))
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
                pred[:, :2] += feats.match * self.w[self.rows.match_slots] * uw.norm[:, None]
            sc.pred = pred
        return sc.pred

    # --- evaluation ---------------------------------------------------------------------------
    def expected_q(self, sigs: list[Signature]) -> np.ndarray:
        """E[Q] for each signature under the current weights."""
        get, value = self._scores.get, self._value
        if self.shared is None:
            return np.array([(get(s) or value(s)).expected for s in sigs])
        out = list(map(self._known.get, sigs))
        if None in out:
            for i, v in enumerate(out):
                if v is None:
                    out[i] = self._shared_expected(sigs[i])
        return np.array(out)

    def _shared_expected(self, sig: Signature) -> float:
        """E[Q] of a signature not asked yet under these weights: this process's scores,
        another worker's value (`shared_scores`), else computed here and published."""
        found = self._scores.get(sig)
        if found is not None:
            value = found.expected
        else:
            key = self._keys.get(sig)
            if key is None:
                if len(self._keys) > 100_000:  # bound memory over long games
                    self._keys.clear()
                key = self._keys[sig] = signature_key(sig)
            value = self.shared.get(key, self.snapshot)
            if value is None:
                value = self._value(sig).expected
                self.shared.put(key, self.snapshot, value)
        self._known[sig] = value
        return value

    def sample(self, sig: Signature, rng: np.random.Generator) -> Decision:
        """Draw y (and z) at the configured temperature and return the resulting Q = w . f."""
        sc = self._value(sig)
        if self.config.kind == "linear":
            return Decision(sig, 0, (), sc.game)
        if self.config.backend == "numba":
            y = kernels().draw(sc.p, rng.random())  # `_draw`'s index for the same number
        else:
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
        lo, hi = uw.span(y)
        if self.config.backend == "numba":  # the same draws, in one compiled call
            cfg, rows = self.config, self.rows
            static, static_exp = self._static(uw)
            if sc.pred_in is None:  # full scores: their pred has the matches in already
                pred_a, pred_b, grounding = self._pred(sig, sc), _NO_PRED, False
            else:
                (pred_a, pred_b), grounding = sc.pred_in, cfg.grounding_features
            labels, q = kernels().sample_labels(
                static, static_exp, self.features(sig).flags, self.v, rows.flag_slots,
                rows.plabel_slots, cfg.temperature, pred_a, pred_b, grounding,
                self.w[rows.match_slots], uw.norm, uw.parent, uw.order, lo, hi,
                rng.random(hi - lo))
            return tuple(labels.tolist()), q
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

    def row_q(self, sig: Signature) -> np.ndarray:
        """Q of every candidate row (NULL last), the labels z taken in expectation: what each
        sentence alone predicts, so the relevance layer can be moved towards the ones whose
        prediction is closest to the reward (`hidden_update="expected"`)."""
        sc = self.scores(sig)
        if self.config.kind == "linear":
            return np.array([sc.game])
        per_row = sc.lang.copy()
        if self.config.kind == "text":
            uw = self.features(sig).unit
            word_q = (sc.marg * self._pred(sig, sc)).sum(axis=1)
            per_row[: len(uw.sentences)] += row_sums(uw.rows, word_q, len(uw.sentences))
        return sc.game + per_row

    def decision_q(self, sig: Signature, y: int, z: tuple[int, ...]) -> float:
        """Q = w . f for given hidden values, from the output rows the learner uses."""
        slot, val = self.rows.output_rows(self.features(sig), y, z)
        return float(self.w[slot] @ val)

    def relevance(self, sig: Signature) -> tuple[np.ndarray, np.ndarray]:
        """Candidate sentence ids (-1 = NULL) and their relevance probabilities."""
        sc = self._value(sig)
        if not self.text:
            return np.arange(len(sc.p)), sc.p
        sentences = self.features(sig).unit.sentences
        return np.append(sentences, -1), sc.p


_NO_PRED = np.zeros((0, 2))  # the relevance-only kind has no label layer
_NO_STATIC = np.zeros((0, 3))
_NO_BASE = (np.zeros((0, 3)), np.zeros((0, 3), np.bool_))  # `text_expected` without a base


def _softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _draw(p: np.ndarray, rng: np.random.Generator) -> int:
    """Index drawn from probabilities `p` with one uniform number."""
    c = np.cumsum(p)
    return min(int(np.searchsorted(c, rng.random() * c[-1], side="right")), len(p) - 1)
