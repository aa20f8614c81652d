"""The rows one roll-out's datapoints learn from, stacked into one sparse batch for the compiled
sweeps (`nlmcs.model.kernels.sweeps`).

A datapoint is a `Decision` (a signature and its drawn y and z). Its rows are weight-free
(`nlmcs.model.rows`): the output features f of (y, z), the relevance features phi of every
candidate row, and the label features psi of the drawn sentence's words. The process that played
the roll-out builds the batch once, and every replica of the network learns from the same arrays
(`nlmcs.model.learner`); a batch shipped to another process leaves out the entries it can lay out
again from its own caches (`SharedRows`).
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from nlmcs.model.network import Decision
from nlmcs.model.rows import FeatureRows, SigFeatures


@dataclass
class _Sparse:
    """Concatenated (slot, value) pairs with the row each belongs to."""

    slot: np.ndarray
    val: np.ndarray
    row: np.ndarray


def _cat(parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> _Sparse:
    if not parts:
        z = np.zeros(0, np.int64)
        return _Sparse(z, np.zeros(0), z)
    s, v, r = zip(*parts, strict=True)
    return _Sparse(np.concatenate(s), np.concatenate(v), np.concatenate(r))


@dataclass
class Batch:
    n: int  # datapoints
    f: _Sparse  # rows = datapoints
    phi: _Sparse | None  # rows = candidate rows of all datapoints
    row_owner: np.ndarray  # (R,) datapoint of each candidate row
    row_start: np.ndarray  # (D,) first candidate row of each datapoint
    chosen_row: np.ndarray  # (D,) global candidate row picked
    labels: LabelRows | None  # psi of the sampled sentences' words
    word_owner: np.ndarray  # (Wz,) datapoint of each labelled word
    word_label: np.ndarray  # (Wz,) sampled label
    sigs: tuple  # the datapoints' signatures (the `expected` rule scores all their rows)
    row_q: RowQRows | None = None  # the same for the compiled `expected` sweeps
    shared: SharedRows | None = None  # phi of the compiled sweeps (then `phi` is None)


@dataclass
class LabelRows:
    """psi of the words of the sentences a roll-out's datapoints drew, word after word
    (`FeatureRows.label_rows`; `FeatureRows.psi_entries` spells each word's 3 label rows out
    as 11 slots and values for the numpy reference)."""

    static: np.ndarray  # (Wz, 3, 7) static v slots under each label
    parent: np.ndarray  # (Wz,) the parent's drawn label, ROOT under the root
    flags: np.ndarray  # (Wz, 3) the word's flags (bool)


NO_LABELS = LabelRows(np.zeros((0, 3, 7), np.int64), np.zeros(0, np.int64),
                      np.zeros((0, 3), bool))


@dataclass
class SharedRows:
    """The relevance rows phi of a roll-out's datapoints for the compiled sweeps
    (`kernels.shared_sweeps`), with the word features of each candidate set and action type
    stored once: the datapoints that share them (an agent deciding again, or another agent of
    its kind) share those rows' values, so a sweep scores and updates them once per set rather
    than once per datapoint. Each datapoint keeps its own entries (overlap counts, NULL)."""

    slot: np.ndarray  # the sets' word entries, set after set
    val: np.ndarray
    row: np.ndarray  # candidate row of each entry within its set
    start: np.ndarray  # (G+1,) first entry of each set
    first_row: np.ndarray  # (G,) first row of each set among all sets' rows
    owner_set: np.ndarray  # (D,) set of each datapoint
    own: _Sparse  # the datapoints' own entries, rows among all datapoints' candidate rows
    sigs: tuple = ()  # (G,) a signature of each set, whose features lay it out

    def __getstate__(self) -> dict:
        # The sets' entries are weight-free layouts every process holds or can build from
        # `sigs`: a pickled copy (a roll-out shipped to the other workers) leaves them out,
        # and `learn` lays them out again (`restored`).
        return {**self.__dict__, "slot": None, "val": None, "row": None}

    def restored(self, rows: FeatureRows) -> SharedRows:
        """The sets' entries, laid out again from `sigs` if a pickled copy left them out."""
        if self.slot is None:
            slot, val, row, _ = zip(*(_set_rows(rows, rows.features(sig)) for sig in self.sigs),
                                    strict=True)
            self.slot, self.val, self.row = map(np.concatenate, (slot, val, row))
        return self


@dataclass
class RowQRows:
    """Weight-free rows of every candidate row's Q with the labels in expectation
    (`ValueNetwork.row_q`), so the compiled `expected` sweeps score all of a roll-out's rows in
    one call per pass instead of one network call per signature. A signature the roll-out
    holds several times is scored once: its rows are the `distinct` rows."""

    row_src: np.ndarray  # (R,) distinct row each candidate row of the batch reads
    row_sig: np.ndarray  # (Ru,) distinct signature of each distinct row
    game: _Sparse  # rows = distinct signatures
    lang: _Sparse  # rows = distinct rows: language (or latent) output features
    pred: _Sparse  # rows = 2 word + label (action, state): predicate features, matches
    word_row: np.ndarray  # (Wc,) distinct row of each candidate word (text kind)
    parent: np.ndarray  # (Wc,) parent word, -1 under the root
    order: np.ndarray  # (Wc,) the words, parents before children
    static: np.ndarray  # (K, 3, 7) v slots of each distinct (manual word, flags)
    flags: np.ndarray  # (K, 3) its word flags of the label layer
    pair: np.ndarray  # (Wc,) distinct (word, flags) of each candidate word: its conditionals


FLAG_BITS = np.array([1, 2, 4], np.int64)
"""A word's three flags as one number 0..7."""

_ROW_Q_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""Per `FeatureRows`: each signature's row-Q pieces (`_sig_row_q`), weight-free like them."""


def build(rows: FeatureRows, decisions: Sequence[Decision]) -> Batch:
    """Stack the rows (`nlmcs.model.rows`) of every datapoint into one sparse batch: each
    datapoint contributes its pieces and the batch concatenates (and offsets) them once."""
    kind = rows.config.kind
    f_slot, f_val, f_len = [], [], []
    phi_slot, phi_val, phi_row, phi_len = [], [], [], []
    lab_static, lab_parent, lab_flags, lab_len = [], [], [], []
    n_hidden, chosen, word_owner, word_label = [], [], [], []
    n_rows = 0
    expected = rows.config.hidden_update == "expected" and kind != "linear"
    shared = None if expected or kind == "linear" else _SharedBuilder()
    for d, dec in enumerate(decisions):
        feats = rows.features(dec.sig)
        slot, val = rows.output_rows(feats, dec.y, dec.z)
        f_slot.append(slot)
        f_val.append(val)
        f_len.append(len(slot))
        if kind == "linear":
            continue
        if shared is not None:
            shared.add(rows, feats, d, dec.sig)
        else:
            slot, val, row = rows.relevance_pieces(feats)
            phi_slot.append(slot)
            phi_val.extend(val)
            phi_row.append(row)
            phi_len.append(len(slot))
        if kind == "text" and dec.z:
            static, parent, flags = rows.label_rows(feats, dec.y, dec.z)
            lab_static.append(static)
            lab_parent.append(parent)
            lab_flags.append(flags)
            lab_len.append(len(parent))
            word_owner.append(d)
            word_label.append(dec.z)
        k = rows.num_hidden(feats)
        n_hidden.append(k)
        chosen.append(n_rows + dec.y)
        n_rows += k
    n = len(decisions)
    ints = np.zeros(0, np.int64)
    n_hidden = np.array(n_hidden, np.int64)
    row_start = np.cumsum(n_hidden) - n_hidden
    row_owner = np.repeat(np.arange(len(n_hidden)), n_hidden) if len(n_hidden) else ints
    phi = labels = None
    if phi_slot:
        phi = _Sparse(np.concatenate(phi_slot), np.concatenate(phi_val),
                      np.concatenate(phi_row) + np.repeat(row_start, phi_len))
    words = np.array(lab_len, np.int64)
    if lab_static:
        labels = LabelRows(np.concatenate(lab_static), np.concatenate(lab_parent),
                           np.concatenate(lab_flags))
    row_q = None
    if expected:
        row_q = _row_q_rows(rows, [dec.sig for dec in decisions], row_owner, row_start)
    return Batch(
        n=n,
        f=_Sparse(np.concatenate(f_slot), np.concatenate(f_val),
                  np.repeat(np.arange(n), f_len)) if n else _cat([]),
        phi=phi,
        row_owner=row_owner,
        row_start=row_start,
        chosen_row=np.array(chosen, np.int64),
        labels=labels,
        word_owner=np.repeat(np.array(word_owner, np.int64), words) if lab_static else ints,
        word_label=np.concatenate([np.asarray(z, np.int64) for z in word_label]) if lab_static
        else ints,
        sigs=tuple(dec.sig for dec in decisions),
        row_q=row_q,
        shared=shared.finish(row_start) if shared is not None and n_hidden.size else None,
    )


class _SharedBuilder:
    """Collects `SharedRows`: one set per distinct relevance layout (`FeatureRows.
    relevance_template`) among a roll-out's datapoints; the latent states of `nonlinear`
    are a datapoint's own set."""

    def __init__(self):
        self.sets: dict[int, int] = {}  # id of a shared layout -> set
        self.slot, self.val, self.row, self.sizes, self.n_rows = [], [], [], [], []
        self.sigs: list = []
        self.owner: list[int] = []
        self.own_slot, self.own_val, self.own_row, self.own_len = [], [], [], []
        self._keep = []  # the layouts, alive while their ids are keys

    def add(self, rows: FeatureRows, feats: SigFeatures, d: int, sig) -> None:
        if rows.config.kind == "nonlinear":
            self._new_set(*_set_rows(rows, feats), sig)
            self.owner.append(len(self.sizes) - 1)
            self.own_len.append(0)
            return
        layout = rows.relevance_template(feats)
        slot, word_val, row, _ = layout
        nw = len(word_val)
        g = self.sets.get(id(layout))
        if g is None:
            g = self.sets[id(layout)] = len(self.sizes)
            self._keep.append(layout)
            self._new_set(*_set_rows(rows, feats), sig)
        self.owner.append(g)
        self.own_slot.append(slot[nw:])
        self.own_row.append(row[nw:])
        self.own_len.append(len(slot) - nw)
        self.own_val.extend(rows.own_relevance_values(feats))

    def _new_set(self, slot, val, row, n_rows: int, sig) -> None:
        self.slot.append(slot)
        self.val.append(val)
        self.row.append(row)
        self.sizes.append(len(slot))
        self.n_rows.append(n_rows)
        self.sigs.append(sig)

    def finish(self, row_start: np.ndarray) -> SharedRows:
        sizes, n_rows = np.array(self.sizes, np.int64), np.array(self.n_rows, np.int64)
        own = _cat([])
        if self.own_slot:
            own = _Sparse(np.concatenate(self.own_slot), np.concatenate(self.own_val),
                          np.concatenate(self.own_row) + np.repeat(row_start, self.own_len))
        return SharedRows(
            slot=np.concatenate(self.slot), val=np.concatenate(self.val),
            row=np.concatenate(self.row), start=np.concatenate([[0], np.cumsum(sizes)]),
            first_row=np.cumsum(n_rows) - n_rows, owner_set=np.array(self.owner, np.int64),
            own=own, sigs=tuple(self.sigs),
        )


def _set_rows(rows: FeatureRows, feats: SigFeatures):
    """(slot, value, row, rows) of the shared set a signature's relevance rows belong to: its
    candidate set's word entries for its action type, or for `nonlinear` its latent states."""
    if rows.config.kind == "nonlinear":
        slot, (val,), row = rows.relevance_pieces(feats)
        return slot, val, row, rows.num_hidden(feats)
    slot, word_val, row, _ = rows.relevance_template(feats)
    nw = len(word_val)
    return slot[:nw], word_val, row[:nw], rows.num_hidden(feats)


def _row_q_rows(rows: FeatureRows, sigs: list, row_owner: np.ndarray,
                row_start: np.ndarray) -> RowQRows:
    """The terms of every candidate row's Q (`ValueNetwork.row_q`) as sparse rows, with the
    candidate words' label-layer slots for the marginals: what `kernels.expected_sweeps`
    needs to rescore the rows each pass."""
    distinct: dict = {}
    place = np.array([distinct.setdefault(sig, len(distinct)) for sig in sigs])
    pieces = [_sig_row_q(rows, sig) for sig in distinct]
    n_rows = np.array([piece[0] for piece in pieces])
    first_row = np.cumsum(n_rows) - n_rows
    words = [piece[4] for piece in pieces]
    n_words = np.array([len(w[0]) for w in words])
    first_word = np.repeat(np.cumsum(n_words) - n_words, n_words)
    word_row, parent, order, static, flags, manual_word = (
        np.concatenate(a) for a in zip(*words, strict=True))
    # A manual word's label slots are the same in every candidate set: with its flags it
    # fixes the word's conditionals, which the sweeps then compute once per distinct pair.
    _, first, pair = np.unique(manual_word * 8 + flags @ FLAG_BITS, return_index=True,
                               return_inverse=True)
    game = [piece[1] for piece in pieces]
    local = np.arange(len(row_owner)) - row_start[row_owner]
    return RowQRows(
        row_src=first_row[place[row_owner]] + local,
        row_sig=np.repeat(np.arange(len(pieces)), n_rows),
        game=_Sparse(np.concatenate(game), np.ones(sum(len(g) for g in game)),
                     np.repeat(np.arange(len(pieces)), [len(g) for g in game])),
        lang=_shifted([piece[2] for piece in pieces], first_row),
        pred=_shifted([piece[3] for piece in pieces], 2 * (np.cumsum(n_words) - n_words)),
        word_row=word_row + np.repeat(first_row, n_words),
        parent=np.where(parent >= 0, parent + first_word, -1),
        order=order + first_word,
        static=static[first],
        flags=flags[first],
        pair=pair.reshape(-1),
    )


def _shifted(parts: list, offsets: np.ndarray) -> _Sparse:
    """Concatenated sparse rows, each part's row indices moved by its offset."""
    s, v, r = zip(*parts, strict=True)
    return _Sparse(np.concatenate(s), np.concatenate(v),
                   np.concatenate(r) + np.repeat(offsets, [len(x) for x in r]))


def _sig_row_q(rows: FeatureRows, sig) -> tuple:
    """(rows, game slots, language rows, predicate rows, candidate words) of one signature,
    indexed from 0; kept per signature like its features."""
    cache = _ROW_Q_CACHE.setdefault(rows, {})
    found = cache.get(sig)
    if found is None:
        if len(cache) > 50000:  # bound memory over long games
            cache.clear()
        found = cache[sig] = _local_row_q(rows, rows.features(sig))
    return found


def _local_row_q(rows: FeatureRows, feats: SigFeatures) -> tuple:
    kind = rows.config.kind
    ints = np.zeros(0, np.int64)
    no_pred = (ints, np.zeros(0), ints)
    no_words = (ints, ints, ints, np.zeros((0, 3, 7), np.int64), np.zeros((0, 3), bool), ints)
    n_rows = rows.num_hidden(feats)
    if kind == "nonlinear":
        lf = feats.latent_f
        lang = (lf.ravel(), np.ones(lf.size), np.repeat(np.arange(lf.shape[0]), lf.shape[1]))
        return n_rows, feats.game, lang, no_pred, no_words
    uw = feats.unit
    n_parts = len(feats.parts)
    lang = (np.concatenate([part.lang for part in feats.parts]), np.tile(uw.norm, n_parts),
            np.tile(uw.rows, n_parts))
    if kind != "text":
        return n_rows, feats.game, lang, no_pred, no_words
    words = (uw.rows, uw.parent, uw.order, uw.psi_static, feats.flags, uw.words)
    return n_rows, feats.game, lang, _pred_rows(rows, feats), words


def _pred_rows(rows: FeatureRows, feats: SigFeatures) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(slot, value, 2 word + label) of w . f_predicate of every candidate word under the
    labels action and state (background adds nothing): each part's predicate feature and the
    grounding matches."""
    uw = feats.unit
    nw, n_parts = len(uw.words), len(feats.parts)
    idx = 2 * np.arange(nw)[:, None] + np.arange(2)  # (Wc, 2)
    slot = [np.stack([part.pred for part in feats.parts]).ravel()]  # (parts, Wc, 2)
    val = [np.broadcast_to(uw.norm[:, None], (n_parts, nw, 2)).ravel()]
    row = [np.broadcast_to(idx, (n_parts, nw, 2)).ravel()]
    if rows.config.grounding_features:
        slot.append(np.broadcast_to(rows.match_slots, (nw, 2)).ravel())
        val.append((feats.match * uw.norm[:, None]).ravel())
        row.append(idx.ravel())
    return np.concatenate(slot), np.concatenate(val), np.concatenate(row)
