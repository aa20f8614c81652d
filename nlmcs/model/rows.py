"""The feature rows of every model kind, laid out once and read by both scoring and learning.

For one candidate `Signature` the network has, per hidden unit y (a candidate sentence, NULL, or
a latent state), a row of relevance features phi (weights u), for each word of a sentence three
label rows of psi (weights v, one per label), and for a drawn (y, z) the active output features f
(weights w). Everything here is weight-free, so it is built once per signature and kept for the
whole search; `nlmcs.model.network` reads the same arrays to score (with partial sums cached per
shared part) and `nlmcs.model.learner` reads them, through `relevance_rows`, `label_rows` and
`output_rows`, to update.

Sharing: the sentences and words of an agent word (`UnitWords`) and the slots of one feature
family over them (`Part`: an action type, a unit-action pair, or one state label) are shared by
all signatures that have them, which keeps memory and the network's caches small.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from manual_pipeline.words import stem
from nlmcs.model.compiled import sweeps
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
from nlmcs.model.kernels.sweep_inputs import RowSlots


def overlap_sum(parts: list, n: int) -> np.ndarray:
    """(n,) the overlap counts of state-label parts added up, per candidate sentence."""
    found = np.zeros(n)
    for part in parts:
        found += part.overlap
    return found


def meaning_sum(parts: list, n: int) -> np.ndarray:
    """(n,) the meaning cosines of state-label parts added up, per candidate sentence."""
    found = np.zeros(n)
    for part in parts:
        found += part.meaning
    return found


def row_sums(rows: np.ndarray, weights: np.ndarray, n: int) -> np.ndarray:
    """Per-row sums of word values (n,), always float: for an agent with no candidate words
    numpy's weighted bincount returns int64, which in-place float updates refuse."""
    return np.bincount(rows, weights=weights, minlength=n).astype(float, copy=False)


@dataclass
class UnitWords:
    """Weight-free slots of one candidate-sentence set (C sentences, Wc words): all sentences of
    an agent word, or, ranked by overlap, the top ones for a set of label words."""

    key: tuple  # identifies the set in every cache: (agent word,) or (agent word, label stems)
    unit: str  # the agent's words
    sentences: np.ndarray  # (C,) sentence ids
    words: np.ndarray  # (Wc,) global word index
    rows: np.ndarray  # (Wc,) candidate row of each word
    parent: np.ndarray  # (Wc,) local index of the parent word, -1 under the root
    levels: list[np.ndarray]  # local word indices by depth, parents first
    order: np.ndarray  # (Wc,) the same, flat
    phi_word: np.ndarray  # (Wc, 2) u slots: bag of words, word x unit
    psi_static: np.ndarray  # (Wc, 3, 7) v slots
    in_unit: np.ndarray  # (Wc,) the word is one of the agent's words
    norm: np.ndarray  # (Wc,) value of a word feature: 1, or 1 / its sentence's word count
    full: UnitWords | None = None  # a ranked set: the agent's whole set it was cut from,
    pick: np.ndarray | None = None  # (Wc,) its words' places there,
    picked_rows: np.ndarray | None = None  # (C,) and its sentences' rows there
    bounds: list[int] | None = None  # first word of each row and one past the last, on first use

    def span(self, y: int) -> tuple[int, int]:
        """First and one-past-last word of candidate row `y` (`rows` is sorted: the words of
        row y end where those of row y + 1 begin)."""
        if not 0 <= y <= len(self.sentences):
            return (int(np.searchsorted(self.rows, y, side="left")),
                    int(np.searchsorted(self.rows, y, side="right")))
        if self.bounds is None:
            self.bounds = np.searchsorted(self.rows, np.arange(len(self.sentences) + 2),
                                          side="left").tolist()  # fmt: skip
        return self.bounds[y], self.bounds[y + 1]


@dataclass
class Part:
    """Weight-free slots of one feature family (an action type, a unit-action, or one state
    label) over the words of one agent word's candidate sentences."""

    phi: np.ndarray | None  # (Wc,) u slots (word x action type), or None
    lang: np.ndarray  # (Wc,) w slots of the language feature
    pred: np.ndarray  # (Wc, 2) w slots of the predicate feature, labels action / state
    mask: np.ndarray  # (Wc,) the word is one of the part's label words
    overlap: np.ndarray | None  # (C,) label words per sentence: agent + action words for the
    # unit-action part, the state word for a state part, None for the action-type part
    meaning: np.ndarray | None = None  # (C,) with `ModelConfig.meaning`: the cosine between
    # each sentence and the same label words (agent + action, or the state label), else None


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
    derived: dict = field(default_factory=dict)  # weight-free rows built from the above, kept

    @property
    def match(self) -> np.ndarray:
        """(Wc, 2): the word matches the action's words (label action) / a state word (state)."""
        return self.match_of(0, len(self.flags))

    def match_of(self, lo: int, hi: int) -> np.ndarray:
        """`match` of the words lo..hi only (a new array)."""
        return self.flags[lo:hi, [2, 0]].astype(float)

    def lang(self, lo: int, hi: int) -> np.ndarray:
        return np.stack([p.lang[lo:hi] for p in self.parts], axis=1)

    def pred(self, lo: int, hi: int) -> np.ndarray:
        return np.stack([p.pred[lo:hi] for p in self.parts], axis=2)


@dataclass
class SentenceRows:
    """What the update rows of one candidate sentence of a signature need, whatever labels are
    drawn (small: the rest are views of the signature's arrays)."""

    lo: int  # its first word among the signature's candidate words
    lang: tuple[np.ndarray, np.ndarray]  # (slots, values) of the language features
    pred: np.ndarray  # (nw, 2, parts) w slots of the predicate features
    norm: np.ndarray  # (nw,)
    match: np.ndarray  # (nw, 2)
    parent: np.ndarray  # (nw,) parent's place in the sentence, -1 under the root
    head: Sparse | None = None  # output rows whatever the labels: game, language
    static: np.ndarray | None = None  # (nw, 3, 7) static label-row slots: a view of the
    # candidate set's (shared by every signature with that set: read only)

    @staticmethod
    def build(feats: SigFeatures, y: int) -> SentenceRows:
        uw = feats.unit
        lo, hi = uw.span(y)
        norm = uw.norm[lo:hi]
        lang = feats.lang(lo, hi)
        par = uw.parent[lo:hi]
        return SentenceRows(
            lo=lo,
            lang=(lang.ravel(), np.repeat(norm, lang.shape[1])),
            pred=feats.pred(lo, hi),
            norm=norm,
            match=feats.match_of(lo, hi),
            parent=np.where(par < 0, -1, par - lo),
        )


Sparse = tuple[np.ndarray, np.ndarray]
"""(slots, values) of a set of active features."""


class FeatureRows:
    """Builds and caches the weight-free rows of each signature for one model configuration.

    Output slots of the text (or latent) features are offset by `text_offset` into the second
    half of w, so game and text features never share a weight.
    """

    def __init__(self, config: ModelConfig, index: ManualIndex | None = None):
        if config.kind in ("relevance-only", "text") and index is None:
            raise ValueError(f"model kind {config.kind!r} needs a manual index")
        self.config = config
        self.index = index
        self.bits = b = config.table_bits
        self.text_offset = off = 1 << b
        self._units: dict[str, UnitWords] = {}
        self._features: dict[Signature, SigFeatures] = {}
        self._parts: dict[tuple, Part] = {}
        self._state_flags: dict[tuple, tuple] = {}  # (set, state labels) -> `_state_words`
        self._templates: dict[tuple, tuple] = {}  # weight-free row layouts shared by signatures
        # each signature's row-Q pieces (`nlmcs.model.batch`), weight-free like the rest; kept
        # here, not in a weak dictionary, whose callbacks swallow a signal that lands in them
        self.row_q: dict = {}
        self._stem_masks: dict[str, np.ndarray | None] = {}
        lab = np.arange(3, dtype=np.uint64)
        self.null_slots = slots(mix(T.NULL, np.array([0, 1], np.uint64)), b)
        self.overlap_slot = int(slots(mix(T.OVERLAP), b))
        self.overlap_state_slot = int(slots(mix(T.OVERLAP_STATE), b))
        self.meaning_slot = int(slots(mix(T.MEANING), b))
        self.meaning_state_slot = int(slots(mix(T.MEANING_STATE), b))
        if config.meaning and self.text and index.vectors is None:
            raise ValueError("ModelConfig.meaning needs an index built with meaning "
                             "(`load_index(..., meaning=True)`)")
        self.plabel_slots = slots(mix(T.PSI_PLABEL, np.arange(4, dtype=np.uint64)[:, None], lab), b)
        self.flag_slots = slots(mix(T.PSI_FLAG, np.arange(3, dtype=np.uint64)[:, None], lab), b)
        self.match_slots = slots(mix(T.MATCH, np.arange(2, dtype=np.uint64)), b) + off
        self.row_slots = RowSlots(
            config.kind == "text", config.grounding_features, config.overlap_state,
            config.meaning, self.overlap_slot, self.overlap_state_slot, self.meaning_slot,
            self.meaning_state_slot, self.null_slots, self.match_slots)

    @property
    def text(self) -> bool:
        return self.config.kind in ("relevance-only", "text")

    def candidate_words(self, sig: Signature) -> UnitWords:
        """The candidate sentences of `sig` with their words' weight-free slots."""
        cfg, unit = self.config, sig.unit
        if cfg.rank_sentences != "document" and cfg.max_sentences is not None:
            phrases = sig.state + sig.action
            labels = tuple(sorted({stem(w) for phrase in phrases for w in phrase.split()}))
            key = (unit, labels)
            found = self._units.get(key)
            if found is None:
                found = self._subset(key, self._all_words(sig.agent, None), labels)
            return found
        return self._all_words(sig.agent, cfg.max_sentences)

    def _all_words(self, agent: tuple[str, ...], cap: int | None) -> UnitWords:
        key = (" ".join(agent),)
        found = self._units.get(key)
        if found is None:
            found = self._words(key, agent, self.index.candidates(agent, cap))
        return found

    def _subset(self, key: tuple, full: UnitWords, labels: tuple[str, ...]) -> UnitWords:
        """The `max_sentences` sentences of `full` holding most of the label stems (ties: the
        earlier sentence), in document order, cut out of `full` with their words' slots."""
        ix = self.index
        score = np.zeros(len(full.sentences))
        for label in labels:
            holds = self._stem_mask(label)
            if holds is not None:
                score += holds[full.sentences]
        picked = np.sort(np.lexsort((full.sentences, -score))[: self.config.max_sentences])
        chosen = np.zeros(len(full.sentences), bool)
        chosen[picked] = True
        pick = np.flatnonzero(chosen[full.rows])
        row_of = np.full(len(full.sentences), -1)
        row_of[picked] = np.arange(len(picked))
        place = np.full(len(full.words), -1)
        place[pick] = np.arange(len(pick))
        parent = full.parent[pick]
        parent = np.where(parent >= 0, place[np.maximum(parent, 0)], -1)
        depth = ix.depth[full.words[pick]]
        levels = [np.flatnonzero(depth == d) for d in range(int(depth.max()) + 1 if len(pick)
                                                             else 0)]  # fmt: skip
        found = UnitWords(
            key, full.unit, full.sentences[picked], full.words[pick], row_of[full.rows[pick]],
            parent, levels, np.argsort(depth, kind="stable"), full.phi_word[pick],
            full.psi_static[pick], full.in_unit[pick], full.norm[pick], full, pick, picked,
        )
        self._remember(key, found)
        return found

    def _stem_mask(self, label: str) -> np.ndarray | None:
        """Which of the manual's sentences hold the stem `label` (None: none does), kept per
        stem: a ranked set scores its sentences by indexing it (labels recur, sets differ)."""
        found = self._stem_masks.get(label, False)
        if found is False:
            ids = self.index.by_stem.get(label)
            if ids is not None:
                found = np.zeros(self.index.num_sentences, bool)
                found[ids] = True
            else:
                found = None
            self._stem_masks[label] = found
        return found

    def _words(self, key: tuple, agent: tuple[str, ...], sentences: np.ndarray) -> UnitWords:
        ix, b = self.index, self.bits
        unit = " ".join(agent)
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
            [slots(mix(T.BOW, stems), b), slots(mix(T.WORD_UNIT, stems, sid(unit)), b)], axis=1
        )
        norm = np.ones(len(words))
        if self.config.normalize and len(words):
            norm = 1.0 / np.bincount(rows, minlength=len(sentences))[rows]
        found = UnitWords(
            key, unit, sentences, words, rows, parent, levels, np.argsort(depth, kind="stable"),
            phi_word,
            slots(ix.psi_static[words], b), np.isin(stems, stem_ids(agent)), norm,
        )
        self._remember(key, found)
        return found

    def _remember(self, key: tuple, words: UnitWords) -> None:
        if len(self._units) > 20000:  # bound memory over long games
            self._units.clear()
            self._parts.clear()
            self._state_flags.clear()
            self._templates.clear()
        self._units[key] = words

    def part(self, kind: str, label: str, uw: UnitWords) -> Part:
        """The slots of one feature family over a candidate set (kept per set and label)."""
        key = (kind, uw.key, label)
        found = self._parts.get(key)
        if found is not None:
            return found
        if uw.full is not None:  # a ranked set: cut the part out of the agent's whole set
            whole = self.part(kind, label, uw.full)
            found = Part(
                None if whole.phi is None else whole.phi[uw.pick], whole.lang[uw.pick],
                whole.pred[uw.pick], whole.mask[uw.pick],
                None if whole.overlap is None else whole.overlap[uw.picked_rows],
                None if whole.meaning is None else whole.meaning[uw.picked_rows],
            )
            self._parts[key] = found
            return found
        b, s, off = self.bits, self.index.stem_id[uw.words], self.text_offset
        lab = np.arange(2, dtype=np.uint64)[None, :]
        n = len(uw.sentences)
        if kind == "atype":
            t = sid(label)
            found = Part(
                slots(mix(T.WORD_ATYPE, s, t), b),
                slots(mix(T.LANG_ATYPE, s, t), b) + off,
                slots(mix(T.PRED_ATYPE, lab, s[:, None], t), b) + off,
                np.zeros(len(s), bool),
                None,
            )
        elif kind == "action":
            unit, act = sid(uw.unit), sid(label)
            mask = np.isin(s, stem_ids(label.split()))
            in_labels = np.isin(s, stem_ids([uw.unit, label]))
            found = Part(
                None,
                slots(mix(T.LANG_UA, s, unit, act), b) + off,
                slots(mix(T.PRED_UA, lab, s[:, None], unit, act), b) + off,
                mask,
                row_sums(uw.rows, in_labels.astype(float), n),
                self._meaning(uw, f"{uw.unit} {label}"),
            )
        else:  # one state label
            t = sid(label)
            mask = np.isin(s, stem_ids([label]))
            found = Part(
                None,
                slots(mix(T.LANG_STATE, s, t), b) + off,
                slots(mix(T.PRED_STATE, lab, s[:, None], t), b) + off,
                mask,
                row_sums(uw.rows, mask.astype(float), n),
                self._meaning(uw, label),
            )
        self._parts[key] = found
        return found

    def _meaning(self, uw: UnitWords, words: str) -> np.ndarray | None:
        """(C,) cosines of the candidate sentences with `words` (None without meaning)."""
        if not (self.config.meaning and self.text):
            return None
        from manual_pipeline.meaning import text_vector

        return self.index.vectors[uw.sentences] @ text_vector(words).astype(np.float64)

    def features(self, sig: Signature) -> SigFeatures:
        found = self._features.get(sig)
        if found is not None:
            return found
        if len(self._features) > 50000:  # bound memory over long games
            self._features.clear()
        cfg, b = self.config, self.bits
        feats = SigFeatures(game_ids(sig, b))
        if cfg.kind == "nonlinear":
            k = np.arange(cfg.num_latent, dtype=np.uint64)[:, None]
            state = np.array([sid(s) for s in sig.state], dtype=np.uint64)
            parts = np.concatenate(
                [np.array([sid("u:" + sig.unit), sid("a:" + sig.action_key)], np.uint64), state]
            )
            feats.latent_phi = slots(mix(T.LATENT_PHI, k, parts[None, :]), b)
            feats.latent_f = (slots(mix(T.LATENT_F, k, parts[None, :], sid(sig.action_key)), b)
                              + self.text_offset)
        elif self.text:
            uw = self.candidate_words(sig)
            unit = uw.key
            keys = [("atype", unit, sig.atype), ("action", unit, sig.action_key)]
            keys += [("state", unit, label) for label in sig.state]
            feats.unit = uw
            feats.keys = keys
            feats.parts = [self.part(k[0], k[2], uw) for k in keys]
            in_state, named = self._state_words(uw, sig.state, keys[2:], feats.parts[2:])
            action = feats.parts[1]
            feats.flags = flags = np.empty((len(uw.words), 3), bool)
            flags[:, 0], flags[:, 1], flags[:, 2] = in_state, uw.in_unit, action.mask
            # Equal flags <=> the same label words occur in the sentences: a cheap cache key.
            feats.flag_key = (unit,) + ((keys[1],) if action.mask.any() else ()) + named
        self._features[sig] = feats
        return feats

    def _state_words(self, uw: UnitWords, labels: tuple, keys: list, parts: list) -> tuple:
        """(which candidate words name one of the state labels (Wc,), the keys of the labels
        named in some sentence), kept per candidate set and labels: an agent's candidates all
        share them."""
        key = (uw.key, labels)
        found = self._state_flags.get(key)
        if found is None:
            if len(self._state_flags) > 20000:  # bound memory over long games
                self._state_flags.clear()
            in_state = np.zeros(len(uw.words), bool)
            for part in parts:
                in_state |= part.mask
            named = tuple(k for k, p in zip(keys, parts, strict=True) if p.mask.any())
            found = self._state_flags[key] = (in_state, named)
        return found

    # --- the sparse rows of one decision ------------------------------------------------------
    def num_hidden(self, feats: SigFeatures) -> int:
        """Values the relevance layer can take: candidate sentences + NULL, or latent states."""
        if self.config.kind == "nonlinear":
            return feats.latent_phi.shape[0]
        return len(feats.unit.sentences) + 1

    def relevance_rows(self, feats: SigFeatures) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """phi of every value of y as (slots, values, row): text kinds have a row per candidate
        sentence (bag of words, word x unit, word x action type, the overlap counts) and NULL
        last (two bias slots); `nonlinear` has a row per latent state."""
        slot, val, row = self.relevance_pieces(feats)
        return slot, np.concatenate(val), row

    def relevance_pieces(self, feats: SigFeatures) -> tuple[np.ndarray, list, np.ndarray]:
        """`relevance_rows` with the values still in pieces (for the text kinds the shared
        word values, then `own_relevance_values`), so a batch concatenates them once. The
        slots and rows of the text kinds depend only on the candidate set and the action type
        and are shared (read-only) by every signature that has them."""
        if self.config.kind == "nonlinear":
            k = feats.latent_phi.shape[0]
            sl = feats.latent_phi.ravel()
            return sl, [np.ones(len(sl))], np.repeat(np.arange(k), feats.latent_phi.shape[1])
        slot, word_val, row, _ = self.relevance_template(feats)
        return slot, [word_val, *self.own_relevance_values(feats)], row

    def own_relevance_values(self, feats: SigFeatures) -> list[np.ndarray]:
        """The values of a text signature's relevance entries after its words': the overlap
        counts (and the state overlap) per candidate sentence, then NULL's two biases."""
        val = [feats.parts[1].overlap]
        if self.config.overlap_state:
            val.append(self.state_overlap(feats))
        if self.config.meaning:
            val += [feats.parts[1].meaning, self.state_meaning(feats)]
        val.append(self.relevance_template(feats)[3])
        return val

    def relevance_template(self, feats: SigFeatures) -> tuple:
        """(slots, word values, rows, NULL values) of `relevance_pieces` for the signature's
        candidate set and action type, one object per set and type (read-only)."""
        uw = feats.unit
        key = (uw.key, feats.keys[0][2])
        found = self._templates.get(key)
        if found is None:
            c = len(uw.sentences)
            word_slots = np.concatenate([uw.phi_word, feats.parts[0].phi[:, None]], axis=1)
            slot = [word_slots.ravel(), np.full(c, self.overlap_slot)]
            row = [np.repeat(uw.rows, 3), np.arange(c)]
            if self.config.overlap_state:
                slot.append(np.full(c, self.overlap_state_slot))
                row.append(np.arange(c))
            if self.config.meaning:
                slot += [np.full(c, self.meaning_slot), np.full(c, self.meaning_state_slot)]
                row += [np.arange(c), np.arange(c)]
            slot.append(self.null_slots)
            row.append(np.full(2, c))
            found = (np.concatenate(slot), np.repeat(uw.norm, 3), np.concatenate(row),
                     np.ones(2))
            self._templates[key] = found
        return found

    @staticmethod
    def state_meaning(feats: SigFeatures) -> np.ndarray:
        """(C,) the summed meaning cosines of each candidate sentence with the agent's state
        labels (kept with the signature's features)."""
        found = feats.derived.get("state meaning")
        if found is None:
            found = feats.derived["state meaning"] = meaning_sum(feats.parts[2:],
                                                                 len(feats.unit.sentences))
        return found

    @staticmethod
    def state_overlap(feats: SigFeatures) -> np.ndarray:
        """(C,) words per candidate sentence that name one of the agent's state labels (kept
        with the signature's features)."""
        found = feats.derived.get("state overlap")
        if found is None:
            found = feats.derived["state overlap"] = overlap_sum(feats.parts[2:],
                                                                 len(feats.unit.sentences))
        return found

    def output_rows(self, feats: SigFeatures, y: int, z: tuple[int, ...]) -> Sparse:
        """f active for hidden values (y, z): game features; the latent state's features; or
        the chosen sentence's language features, and for its action- and state-labelled words
        the predicate features (and the grounding matches). Background words add nothing."""
        kind = self.config.kind
        if kind in ("nonlinear", "linear") or y >= len(feats.unit.sentences):
            parts = [(feats.game, np.ones(len(feats.game)))]
            if kind == "nonlinear":
                fy = feats.latent_f[y]
                parts.append((fy, np.ones(len(fy))))
        else:
            sent = self._sentence(feats, y)
            if not (kind == "text" and z):
                return sent.head
            if self.config.backend == "numba":
                return sweeps().output_rows(*sent.head, sent.pred, sent.norm, sent.match,
                                             np.array(z, np.int64), self.match_slots,
                                             self.config.grounding_features)  # fmt: skip
            z = np.asarray(z)
            labelled = np.flatnonzero(z < 2)
            pred = sent.pred[labelled, z[labelled]]  # (labelled words, parts)
            parts = [sent.head, (pred.ravel(), np.repeat(sent.norm[labelled], pred.shape[1]))]
            if self.config.grounding_features:
                match = sent.match[labelled, z[labelled]] * sent.norm[labelled]
                parts.append((self.match_slots[z[labelled]], match))
        s, v = zip(*parts, strict=True)
        return np.concatenate(s), np.concatenate(v)

    def label_rows(self, feats: SigFeatures, y: int, z: tuple[int, ...]
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """psi of the words of sentence y, by word: the 7 static slots under each label
        (nw, 3, 7), the parent's drawn label (nw,) (ROOT under the root; from `z`) and the 3
        word flags (nw, 3). Each label row of a word is its 7 static slots, the parent label's
        slot (`plabel_slots`) and the slots of the flags it has (`flag_slots`), all with value
        1; `psi_entries` spells them out."""
        sent = self._sentence(feats, y)
        par = sent.parent
        parent = np.where(par < 0, ROOT, np.asarray(z)[np.maximum(par, 0)])
        return sent.static, parent, feats.flags[sent.lo:sent.lo + len(par)]

    def psi_entries(self, static: np.ndarray, parent: np.ndarray, flags: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
        """The label rows of `label_rows` as (nw, 3 labels, 11) slots and values: the 7 static
        slots, the parent label's, then the 3 flags' (value 1 where the word has the flag, else
        0), each crossed with the label."""
        nw = len(parent)
        sl = np.empty((nw, 3, 11), np.int64)
        sl[:, :, :7] = static
        sl[:, :, 7] = self.plabel_slots[parent]
        sl[:, :, 8:] = self.flag_slots.T
        val = np.ones(sl.shape)
        val[:, :, 8:] = flags[:, None, :]
        return sl, val

    def _sentence(self, feats: SigFeatures, y: int) -> SentenceRows:
        """The weight-free rows of candidate sentence y of a signature, built once."""
        found = feats.derived.get(y)
        if found is None:
            found = feats.derived[y] = SentenceRows.build(feats, y)
            found.head = (np.concatenate([feats.game, found.lang[0]]),
                          np.concatenate([np.ones(len(feats.game)), found.lang[1]]))
            if self.config.kind == "text":
                found.static = feats.unit.psi_static[found.lo:found.lo + len(found.parent)]
        return found
