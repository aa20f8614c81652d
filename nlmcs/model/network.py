"""The four-layer value network of Branavan, Silver & Barzilay (IJCAI 2011): weights and scoring.

`nlmcs.model.reference` says what the network computes, in plain numpy; this module computes the
same fast. The weights are three hashed tables of float64 (u: relevance, v: labels, w: output).
Everything a candidate's features depend on is its `Signature` (label words); the weight-free
feature rows come from `nlmcs.model.rows` (kept for the whole search). On the compiled backend
the text kinds are scored by `nlmcs.model.kernels.scoring` from weight sums that many signatures
share (an agent's candidate set, an action type, an action, a state label), each kept in its own
cache (`ScoreCache`) until a weight changes (a weight snapshot); `nonlinear` by
`kernels.candidates.latent_values` (what its tables compute); the numpy backend and `linear`
by the reference. A search step evaluates all candidates of all
agents through `expected_q`, which scores the new signatures only, or, where the candidates
have a key (a board's agents) and the configuration has tables, through `agent_expected`: one
compiled call per candidate set on the signatures' integer tables (`nlmcs.model.tables`), the
same values to the last bit.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import numpy as np

from nlmcs.model import reference
from nlmcs.model.compiled import candidates, scoring
from nlmcs.model.config import ModelConfig
from nlmcs.model.features import ManualIndex, Signature
from nlmcs.model.rows import (
    FeatureRows,
    Part,
    SigFeatures,
    UnitWords,
    meaning_sum,
    overlap_sum,
    row_sums,
)
from nlmcs.model.shared_scores import SharedScores, signature_key
from nlmcs.model.tables import tables_for


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


@dataclass(frozen=True, eq=False)
class DrawnRun:
    """Datapoints the compiled turns drew, kept as the tables' signature ids: a roll-out draws
    hundreds, and a `Decision` built for each, whose signature's id was then looked up again
    to lay out its rows, cost ~3% of a text game. `Decision`s are made of a run only where a
    caller needs them (`decisions`). `sigs` is the tables' list of signatures by id when the
    run was drawn; the tables start a new list when they start again, so the ids stay
    readable and a run whose list is not the tables' own is known to be from before."""

    sigs: list
    sid: np.ndarray  # (D,) signature ids
    y: np.ndarray  # (D,)
    q: np.ndarray  # (D,)
    z: np.ndarray  # the labels, flat: datapoint d's are z[bounds[d]:bounds[d + 1]]
    bounds: np.ndarray  # (D + 1,)

    def __len__(self) -> int:
        return len(self.sid)

    def decisions(self) -> list[Decision]:
        sigs, labels, bounds = self.sigs, self.z.tolist(), self.bounds.tolist()
        return [Decision(sigs[s], row, tuple(labels[bounds[d]:bounds[d + 1]]), value)
                for d, (s, row, value) in enumerate(zip(self.sid.tolist(), self.y.tolist(),
                                                        self.q.tolist(), strict=True))]


def decisions_of(datapoints) -> list[Decision]:
    """A roll-out's datapoints (`Decision`s and `DrawnRun`s, in the order drawn) as
    `Decision`s."""
    out: list[Decision] = []
    for d in datapoints:
        if isinstance(d, DrawnRun):
            out.extend(d.decisions())
        else:
            out.append(d)
    return out


@dataclass
class ScoreCache:
    """What the current weights give, by kind of entry; all of it goes when a weight changes."""

    scores: dict = field(default_factory=dict)  # signature -> SigScores
    known: dict = field(default_factory=dict)  # signature -> E[Q], this worker's or another's
    units: dict = field(default_factory=dict)  # candidate set -> (phi (C,), static (Wc, 3))
    parts: dict = field(default_factory=dict)  # (family, set, label) -> (phi, lang, pred)
    action_sums: dict = field(default_factory=dict)  # (set, action type, action) -> sums
    state_sums: dict = field(default_factory=dict)  # (set, state labels) -> sums
    whole_sums: dict = field(default_factory=dict)  # a ranked set's sums, of its whole set
    static_factors: dict = field(default_factory=dict)  # candidate set -> (Wc, 3)
    label_marginals: dict = field(default_factory=dict)  # candidate set -> (marg, flags)
    agents: dict = field(default_factory=dict)  # `State.candidates_key` -> E[Q] of the candidates
    table_weights: list = field(default_factory=list)  # [the table kernels' weights], once made
    null: list = field(default_factory=list)  # [NULL's logit], once computed

    def clear(self) -> None:
        for f in fields(self):
            getattr(self, f.name).clear()


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
        self.compiled = config.backend == "numba"
        self.reward_sum = 0.0  # rewards learned from in this real step (for `center`)
        self.reward_count = 0
        self._started = False  # persistent weights are initialised once per game
        self.cache = ScoreCache()
        self.shared: SharedScores | None = None  # E[Q] shared with the other roll-out workers
        self.snapshot = 0  # weight changes so far: the same count in every replica
        self.epoch = 0  # weight changes so far in this process (never set back: the stamps)
        # the signatures as integer tables, for the compiled E[Q] of a candidate set
        self.tables = tables_for(self.rows) if self.compiled else None
        self._keys: dict[Signature, tuple[int, int]] = {}  # signature -> its shared key
        # u, v, w as a replica in another process last copied them (`keep_changes`)
        self._shipped: tuple[np.ndarray, ...] | None = None

    @property
    def weights(self) -> reference.Weights:
        return reference.Weights(self.u, self.v, self.w)

    @property
    def text(self) -> bool:
        return self.rows.text

    def features(self, sig: Signature) -> SigFeatures:
        return self.rows.features(sig)

    # --- weights ------------------------------------------------------------------------------
    def reset(self) -> None:
        """A new real step: the game-feature weights start from zero (the value function is
        local to the current state); so do u, v and the text half of w, unless they persist
        (`ModelConfig.persist`), in which case they start from zero once per game."""
        half = self.rows.text_offset
        self.w[:half] = 0.0
        if self.config.persist == "none" or not self._started:
            self.u[:] = 0.0
            self.v[:] = 0.0
            self.w[half:] = 0.0
            self._started = True
            self.u[self.prior_slots()] = self.config.relevance_prior
            self.u[self.meaning_slots()] = self.config.meaning_prior
        self.reward_sum, self.reward_count = 0.0, 0
        self.weights_changed()
        if self._shipped is not None:  # the other replica resets alike
            for table, copy in zip((self.u, self.v, self.w), self._shipped, strict=True):
                np.copyto(copy, table)

    def prior_slots(self) -> list[int]:
        """The u slots `relevance_prior` starts each step at (the overlap features; none
        without text or without a prior): relevance starts in favour of sentences naming the
        move and, under `overlap_state`, the situation."""
        if not (self.config.relevance_prior and self.text):
            return []
        return [self.rows.overlap_slot] + ([self.rows.overlap_state_slot]
                                           if self.config.overlap_state else [])

    def meaning_slots(self) -> list[int]:
        """The u slots `meaning_prior` starts each step at: the meaning features (none
        without text or without `meaning`)."""
        if not (self.config.meaning and self.text):
            return []
        return [self.rows.meaning_slot, self.rows.meaning_state_slot]

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
        self.cache.clear()
        self.snapshot += 1
        self.epoch += 1

    # --- scores under the current weights -----------------------------------------------------
    def scores(self, sig: Signature) -> SigScores:
        """Every piece of a signature's scores, the label layer's per-word arrays included."""
        found = self.cache.scores.get(sig)
        if found is None or (found.cond is None and self.config.kind == "text"):
            found = self.cache.scores[sig] = self._score(sig, full=True)
        return found

    def _value(self, sig: Signature) -> SigScores:
        """What the search reads (E[Q], relevance p, language scores): on the compiled
        backend the text kinds' per-word arrays are left out (`scoring.text_expected`) and
        `scores` adds them only for a signature something asks them of."""
        found = self.cache.scores.get(sig)
        if found is None:
            found = self.cache.scores[sig] = self._score(sig, full=False)
        return found

    def _score(self, sig: Signature, *, full: bool) -> SigScores:
        if self.compiled and self.text:
            return self._compiled_scores(sig, full=full)
        if self.compiled and self.config.kind == "nonlinear":  # what its tables compute
            feats = self.features(sig)
            k, m = feats.latent_phi.shape
            game, p, lang, expected = candidates().latent_values(
                self.u, self.w, feats.latent_phi.ravel(), feats.latent_f.ravel(), k, m,
                feats.game, self.config.temperature)
            return SigScores(game, p, lang, None, None, None, expected)
        f = reference.forward(self.rows, self.features(sig), self.weights)
        return SigScores(f.game, f.p, f.lang, f.pred, f.cond, f.marg, f.expected)

    def _compiled_scores(self, sig: Signature, *, full: bool) -> SigScores:
        """The text kinds' scores with the label layer and expectations in one compiled call
        (`scoring.text_scores`, or `scoring.text_expected` without the per-word arrays) on the
        weight sums signatures share (`_action_sums`, `_state_sums`)."""
        kernels = scoring()
        cfg, rows = self.config, self.rows
        feats = self.features(sig)
        uw = feats.unit
        game = float(self.w[feats.game].sum())
        labels = cfg.kind == "text"
        rel_a, lang_a, pred_a = self._action_sums(feats)
        rel_b, lang_b, pred_b = self._state_sums(feats)
        static, static_exp = self._static(uw) if labels else (_NO_STATIC, _NO_STATIC)
        inputs = kernels.ScoreInputs(
            n_rows=len(uw.sentences), rows=uw.rows, parent=uw.parent, order=uw.order,
            rel_a=rel_a, rel_b=rel_b, null_logit=self._null_logit(), lang_a=lang_a,
            lang_b=lang_b, pred_a=pred_a, pred_b=pred_b, norm=uw.norm,
            grounding=cfg.grounding_features, match_w=self.w[rows.match_slots], static=static,
            static_exp=static_exp, flags=feats.flags, labels=labels, v=self.v,
            flag_slots=rows.flag_slots, plabel_slots=rows.plabel_slots,
            temperature=cfg.temperature, game=game)  # fmt: skip
        if not full:
            # The agent's first candidate scored under these weights lends its label marginals
            # to the others (`text_expected`'s base): they differ in a few words' flags.
            lent = self.cache.label_marginals
            base = lent.get(uw.key, _NO_BASE) if labels else _NO_BASE
            p, lang, expected, marg = kernels.text_expected(*inputs, *base)
            if labels and base is _NO_BASE:
                lent[uw.key] = (marg, feats.flags)
            return SigScores(game, p, lang, None, None, None, expected,
                             (pred_a, pred_b) if labels else None)
        p, lang, cond, marg, pred, expected = kernels.text_scores(*inputs)
        if not labels:
            return SigScores(game, p, lang, None, None, None, expected)
        return SigScores(game, p, lang, pred, cond, marg, expected)

    def _action_sums(self, feats: SigFeatures):
        """The compiled kernels' inputs that depend on the candidate's action (unit, action
        type, action): relevance logits (C,) without the state overlap, language score (C,)
        and predicate score per word (Wc, 2) of the action type and action parts. A ranked
        set takes its rows and words of the agent's whole set's sums (`_ranked_cut`)."""
        key = (feats.keys[0], feats.keys[1])
        found = self.cache.action_sums.get(key)
        if found is None:
            uw = feats.unit
            if uw.full is not None:
                found = self._ranked_cut(feats, self._action_sums_of, 0, 2)
            else:
                found = self._action_sums_of(feats.keys[:2], feats.parts[:2], uw)
            self.cache.action_sums[key] = found
        return found

    def _action_sums_of(self, keys: list, parts: list, uw: UnitWords):
        a = self._part_scores(keys[0], parts[0], uw)
        action = parts[1]
        rel, *rest = scoring().action_sums(*scoring().ActionInputs(
            rows=uw.rows, norm=uw.norm, unit_phi=self._unit_scores(uw)[0], atype_phi=a[0],
            atype_lang=a[1], atype_pred=a[2], w=self.w, lang_slots=action.lang,
            pred_slots=action.pred, overlap_w=self.u[self.rows.overlap_slot],
            overlap=action.overlap))  # fmt: skip
        if self.config.meaning:  # the meaning feature of the move (a new array: cached)
            rel = rel + self.u[self.rows.meaning_slot] * action.meaning
        return (rel, *rest)

    def _state_sums(self, feats: SigFeatures):
        """The same for the agent's state labels (unit, state labels), which every candidate
        of one agent shares: the state overlap's relevance (C,) (zeros without
        `overlap_state`), language score (C,) and predicate score per word (Wc, 2)."""
        uw = feats.unit
        key = feats.derived.get("state key")
        if key is None:
            key = feats.derived["state key"] = (uw.key, *(k[2] for k in feats.keys[2:]))
        found = self.cache.state_sums.get(key)
        if found is None:
            if uw.full is not None:
                found = self._ranked_cut(feats, self._state_sums_of, 2, len(feats.keys))
            else:
                found = self._state_sums_of(feats.keys[2:], feats.parts[2:], uw)
            self.cache.state_sums[key] = found
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
        if self.config.meaning:
            rel = rel + self.u[self.rows.meaning_state_slot] * meaning_sum(parts, n)
        return rel, lang, pred

    def _ranked_cut(self, feats: SigFeatures, sums_of, lo: int, hi: int):
        """A ranked set's sums (`sums_of` over its parts lo..hi) as the rows and words it
        keeps of the agent's whole set's sums, which all ranked sets of that agent and those
        labels share (kept per weight snapshot): the same values, each the same sum of the
        same numbers, as summing the set's own cut-out parts."""
        uw, whole, rows = feats.unit, feats.unit.full, self.rows
        keys = [(k[0], whole.key, k[2]) for k in feats.keys[lo:hi]]
        key = (lo, *keys)
        found = self.cache.whole_sums.get(key)
        if found is None:
            parts = [rows.part(k[0], k[2], whole) for k in keys]
            found = self.cache.whole_sums[key] = sums_of(keys, parts, whole)
        rel, lang, pred = found
        return rel[uw.picked_rows], lang[uw.picked_rows], pred[uw.pick]

    def _static(self, uw: UnitWords) -> tuple[np.ndarray, np.ndarray]:
        """The words' static label logits (Wc, 3) and their factors
        (`kernels.labels.static_factors`) under the current weights."""
        static = self._unit_scores(uw)[1]
        static_exp = self.cache.static_factors.get(uw.key)
        if static_exp is None:
            if uw.full is not None:  # per word: the whole set's, cut out
                static_exp = self._static(uw.full)[1][uw.pick]
            else:
                static_exp = scoring().static_factors(static, self.config.temperature)
            self.cache.static_factors[uw.key] = static_exp
        return static, static_exp

    def _null_logit(self) -> float:
        if not self.cache.null:
            self.cache.null.append(float(self.u[self.rows.null_slots].sum()))
        return self.cache.null[0]

    def _part_scores(self, key: tuple, part: Part, uw: UnitWords):
        """(phi per row or None, w . f_language per row, w . f_predicate per word (Wc, 2))."""
        found = self.cache.parts.get(key)
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
            self.cache.parts[key] = found
        return found

    def _unit_scores(self, uw: UnitWords):
        """(phi of bag of words + word x unit per row, static psi score per word (Wc, 3))."""
        found = self.cache.units.get(uw.key)
        if found is None:
            if uw.full is not None:  # a ranked set: its rows and words of the whole set's
                phi, static = self._unit_scores(uw.full)
                found = (phi[uw.picked_rows], None if static is None else static[uw.pick])
            else:
                phi = row_sums(uw.rows, self.u[uw.phi_word].sum(axis=1) * uw.norm,
                               len(uw.sentences))
                static = (self.v[uw.psi_static].sum(axis=2) if self.config.kind == "text"
                          else None)
                found = (phi, static)
            self.cache.units[uw.key] = found
        return found

    # --- evaluation ---------------------------------------------------------------------------
    def expected_q(self, sigs: list[Signature]) -> np.ndarray:
        """E[Q] for each signature under the current weights."""
        get, value = self.cache.scores.get, self._value
        if self.shared is None:
            return np.array([(get(s) or value(s)).expected for s in sigs])
        out = list(map(self.cache.known.get, sigs))
        if None in out:
            for i, v in enumerate(out):
                if v is None:
                    out[i] = self._shared_expected(sigs[i])
        return np.array(out)

    def agent_expected(self, sids: np.ndarray) -> np.ndarray:
        """E[Q] of one agent's candidates by their ids in `tables` (`SignatureTables.of`), in
        one compiled call (`candidates.agent_expected`): the same values as `expected_q`."""
        if not len(sids):
            return np.zeros(0)
        return candidates().agent_expected(self.tables.arrays(), self.table_weights(), sids,
                                           self.epoch)

    def table_weights(self):
        """The weights and scalars the table kernels read (`candidates.Weights`), made once
        per snapshot."""
        found = self.cache.table_weights
        if not found:
            cfg, rows = self.config, self.rows
            found.append(candidates().Weights(
                self.u, self.v, self.w, self._null_logit(), self.w[rows.match_slots],
                rows.flag_slots, rows.plabel_slots, cfg.temperature, cfg.grounding_features,
                cfg.kind == "text", float(self.u[rows.overlap_slot]), cfg.overlap_state,
                float(self.u[rows.overlap_state_slot]), cfg.meaning,
                float(self.u[rows.meaning_slot]), float(self.u[rows.meaning_state_slot]),
                *scoring().label_factors(self.v, rows.flag_slots, rows.plabel_slots,
                                         cfg.temperature)))
        return found[0]

    def _table_value(self, sig: Signature) -> SigScores:
        """`_value` of a signature from `tables` (scored there first under these weights if
        it was not)."""
        tables = self.tables
        s = tables.ids.get(sig)
        if s is None or not tables.scored(s, self.epoch):
            s = int(tables.of([sig])[0])
            self.agent_expected(np.array([s]))
        game, p, lang, expected, pred_a, pred_b = tables.values(s)
        pred_in = (pred_a, pred_b) if self.config.kind == "text" else None
        return SigScores(game, p, lang, None, None, None, expected, pred_in)

    def _shared_expected(self, sig: Signature) -> float:
        """E[Q] of a signature not asked yet under these weights: this process's scores,
        another worker's value (`shared_scores`), else computed here and published."""
        found = self.cache.scores.get(sig)
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
        self.cache.known[sig] = value
        return value

    def sample(self, sig: Signature, rng: np.random.Generator) -> Decision:
        """Draw y (and z) at the configured temperature and return the resulting Q = w . f."""
        sc = self._value(sig) if self.tables is None else self._table_value(sig)
        kind = self.config.kind
        if not self.compiled or kind == "linear":
            f = reference.Forward(sc.game, sc.p, sc.lang, sc.pred, sc.cond, sc.marg, None,
                                  sc.expected)  # fmt: skip
            return Decision(sig, *reference.sample(f, self.features(sig), kind, rng))
        y = scoring().draw(sc.p, rng.random())  # `reference.draw`'s index for the same number
        q = sc.game + float(sc.lang[y])
        z: tuple[int, ...] = ()
        if kind == "text":
            uw = self.features(sig).unit
            if y < len(uw.sentences):
                z, zq = self._sample_labels(sig, sc, uw, y, rng)
                q += zq
        return Decision(sig, y, z, q)

    def _sample_labels(self, sig: Signature, sc: SigScores, uw: UnitWords, y: int, rng
                       ) -> tuple[tuple, float]:
        """The labels of sentence y's words, drawn in one compiled call."""
        cfg, rows = self.config, self.rows
        lo, hi = uw.span(y)
        static, static_exp = self._static(uw)
        if sc.pred_in is None:  # full scores: their pred has the matches in already
            pred_a, pred_b, grounding = sc.pred, _NO_PRED, False
        else:
            (pred_a, pred_b), grounding = sc.pred_in, cfg.grounding_features
        kernels = scoring()
        labels, q = kernels.sample_labels(*kernels.LabelDraw(
            static=static, static_exp=static_exp, flags=self.features(sig).flags, v=self.v,
            flag_slots=rows.flag_slots, plabel_slots=rows.plabel_slots,
            temperature=cfg.temperature, pred_a=pred_a, pred_b=pred_b, grounding=grounding,
            match_w=self.w[rows.match_slots], norm=uw.norm, parent=uw.parent, order=uw.order,
            lo=lo, hi=hi, uniforms=rng.random(hi - lo)))  # fmt: skip
        return tuple(labels.tolist()), q

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
