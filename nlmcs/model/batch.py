"""The rows one roll-out's datapoints learn from, stacked into one sparse batch for the compiled
sweeps (`nlmcs.model.kernels.sweeps`).

A datapoint is a `Decision` (a signature and its drawn y and z; the compiled turns hand theirs
on as runs of signature ids, `DrawnRun`). Its rows are weight-free
(`nlmcs.model.rows`): the output features f of (y, z), the relevance features phi of every
candidate row, and the label features psi of the drawn sentence's words. The process that played
the roll-out builds the batch once (from the signatures' tables in one compiled call where the
network has them, `from_tables`), and every replica of the network learns from the same arrays
(`nlmcs.model.learner`); a batch shipped to another process leaves out the entries it can lay out
again from its own caches (`Batch.restored`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np

from nlmcs.model.compiled import update_rows
from nlmcs.model.kernels.sweep_inputs import (
    Candidates,
    Labels,
    OutputRows,
    Phi,
    RowQ,
    SharedPhi,
)
from nlmcs.model.network import Decision, DrawnRun
from nlmcs.model.rows import FeatureRows, SigFeatures


@dataclass
class Batch:
    """A roll-out's rows as the compiled sweeps take them."""

    f: OutputRows
    cand: Candidates
    labels: Labels
    shared: SharedPhi | None = None  # the likelihood-ratio rules (None: no hidden layer)
    set_sigs: tuple = ()  # a signature of each shared set, whose features lay it out
    phi: Phi | None = None  # the `expected` rule
    row_q: RowQ | None = None  # the `expected` rule

    def __getstate__(self) -> dict:
        # The shared sets' entries are weight-free layouts every process holds or can build
        # from `set_sigs`: a pickled copy (a roll-out shipped to the other workers) leaves them
        # out, and `restored` lays them out again.
        state = dict(self.__dict__)
        if self.shared is not None:
            state["shared"] = self.shared._replace(slot=None, val=None, row=None)
        return state

    def restored(self, rows: FeatureRows) -> Batch:
        """This batch with the shared sets' entries, laid out again if a pickled copy left
        them out."""
        if self.shared is not None and self.shared.slot is None:
            slot, val, row, _ = zip(*(_set_rows(rows, rows.features(sig))
                                      for sig in self.set_sigs), strict=True)
            self.shared = self.shared._replace(slot=np.concatenate(slot),
                                               val=np.concatenate(val), row=np.concatenate(row))
        return self


FLAG_BITS = np.array([1, 2, 4], np.int64)
"""A word's three flags as one number 0..7."""

_INTS = np.zeros(0, np.int64)


def _no_labels(rows: FeatureRows) -> Labels:
    """The label rows of a batch that drew no labelled word."""
    return Labels(np.zeros((0, 3, 7), np.int64), _INTS, np.zeros((0, 3), bool), _INTS, _INTS,
                  rows.flag_slots, rows.plabel_slots)


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
    n_hidden = np.array(n_hidden, np.int64)
    row_start = np.cumsum(n_hidden) - n_hidden
    row_owner = np.repeat(np.arange(len(n_hidden)), n_hidden) if len(n_hidden) else _INTS
    if lab_static:
        labels = Labels(np.concatenate(lab_static), np.concatenate(lab_parent),
                        np.concatenate(lab_flags),
                        np.repeat(np.array(word_owner, np.int64), lab_len),
                        np.concatenate([np.asarray(z, np.int64) for z in word_label]),
                        rows.flag_slots, rows.plabel_slots)
    else:
        labels = _no_labels(rows)
    batch = Batch(
        f=OutputRows(np.concatenate(f_slot), np.concatenate(f_val),
                     np.repeat(np.arange(n), f_len), n),
        cand=Candidates(row_owner, row_start, np.array(chosen, np.int64)),
        labels=labels,
    )
    if expected:
        batch.phi = Phi(np.concatenate(phi_slot), np.concatenate(phi_val),
                        np.concatenate(phi_row) + np.repeat(row_start, phi_len))
        batch.row_q = _row_q_rows(rows, [dec.sig for dec in decisions], row_owner, row_start)
    elif shared is not None:
        batch.shared, batch.set_sigs = shared.finish(row_start)
    return batch


def _table_ids(tables, datapoints) -> tuple | None:
    """(signature ids, y, the labels flat, their bounds) of a roll-out's datapoints
    (`Decision`s and `DrawnRun`s) in `tables`; None where a signature has no id there. A run
    drawn from these tables hands its arrays on as they are; a `Decision`, or a run from before
    the tables started again, is looked up by its signatures."""
    get, own = tables.ids.get, tables.sigs
    sid, y, z, n_z = [], [], [], []
    loose: list[Decision] = []

    def flush() -> bool:
        ids = [get(dec.sig) for dec in loose]
        if None in ids:
            return False
        sid.append(np.array(ids, np.int64))
        y.append(np.fromiter((dec.y for dec in loose), np.int64, len(loose)))
        z.append(np.fromiter(chain.from_iterable(dec.z for dec in loose), np.int64))
        n_z.append(np.fromiter((len(dec.z) for dec in loose), np.int64, len(loose)))
        loose.clear()
        return True

    for d in datapoints:
        if not isinstance(d, DrawnRun):
            loose.append(d)
        elif d.sigs is not own:
            loose.extend(d.decisions())
        elif not loose or flush():
            sid.append(d.sid)
            y.append(d.y)
            z.append(d.z)
            n_z.append(np.diff(d.bounds))
        else:
            return None
    if loose and not flush():
        return None
    if not sid:
        return _INTS, _INTS, _INTS, np.zeros(1, np.int64)
    counts = np.concatenate(n_z)
    z_lo = np.zeros(len(counts) + 1, np.int64)
    np.cumsum(counts, out=z_lo[1:])
    return np.concatenate(sid), np.concatenate(y), np.concatenate(z), z_lo


def from_tables(rows: FeatureRows, tables, datapoints: Sequence) -> Batch | None:
    """`build` of a likelihood-ratio rule's batch from the signatures' integer tables
    (`nlmcs.model.tables.SignatureTables` in one compiled call, `kernels.update_rows`;
    `LatentTables` by `_latent_rows`): the same arrays. None where a datapoint's signature has
    no id there; `build` lays that roll-out out. `datapoints`: `Decision`s and `DrawnRun`s in
    the order drawn."""
    found = _table_ids(tables, datapoints)
    if found is None:
        return None
    sid, y, z, z_lo = found
    if not rows.text:
        return _latent_rows(rows, tables, sid, y)
    (f_slot, f_val, f_row, row_owner, row_start, chosen, static, parent, flags, owner, label,
     sh_slot, sh_val, sh_row, start, first_row, owner_set, own_slot, own_val, own_row,
     set_first) = update_rows().shared_rows(tables.arrays(), rows.row_slots, sid, y, z, z_lo)
    batch = Batch(f=OutputRows(f_slot, f_val, f_row, len(sid)),
                  cand=Candidates(row_owner, row_start, chosen),
                  labels=Labels(static, parent, flags, owner, label, rows.flag_slots,
                                rows.plabel_slots))
    batch.shared = SharedPhi(sh_slot, sh_val, sh_row, start, first_row, owner_set, own_slot,
                             own_val, own_row)
    batch.set_sigs = tuple(tables.sigs[s] for s in sid[set_first].tolist())
    return batch


def _latent_rows(rows: FeatureRows, tables, sid: np.ndarray, y: np.ndarray) -> Batch:
    """`build` of the kinds without text from `LatentTables` (`kernels.update_rows.
    latent_rows`): each datapoint's K latent states are a shared set of its own."""
    n = len(sid)
    (f_slot, f_val, f_row, row_owner, row_start, chosen, slot, val, row,
     starts) = update_rows().latent_rows(tables.arrays(), sid, y)
    no_labels = _no_labels(rows)
    f = OutputRows(f_slot, f_val, f_row, n)
    if rows.config.kind == "linear":
        return Batch(f=f, cand=Candidates(_INTS, _INTS, _INTS), labels=no_labels)
    batch = Batch(f=f, cand=Candidates(row_owner, row_start, chosen), labels=no_labels)
    batch.shared = SharedPhi(slot, val, row, starts, row_start, np.arange(n), _INTS,
                             np.zeros(0), _INTS)
    batch.set_sigs = tuple(tables.sigs[s] for s in sid.tolist())
    return batch


class _SharedBuilder:
    """Collects `SharedPhi`: one set per distinct relevance layout (`FeatureRows.
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

    def finish(self, row_start: np.ndarray) -> tuple[SharedPhi, tuple]:
        """The shared relevance rows and a signature of each set."""
        sizes, n_rows = np.array(self.sizes, np.int64), np.array(self.n_rows, np.int64)
        own = (_INTS, np.zeros(0), _INTS)
        if self.own_slot:
            own = (np.concatenate(self.own_slot), np.concatenate(self.own_val),
                   np.concatenate(self.own_row) + np.repeat(row_start, self.own_len))
        return SharedPhi(
            np.concatenate(self.slot), np.concatenate(self.val), np.concatenate(self.row),
            np.concatenate([[0], np.cumsum(sizes)]), np.cumsum(n_rows) - n_rows,
            np.array(self.owner, np.int64), *own), tuple(self.sigs)


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
                row_start: np.ndarray) -> RowQ:
    """The terms of every candidate row's Q as sparse rows, with the candidate words'
    label-layer slots for the marginals: what the `expected` sweeps need to rescore the rows
    each pass."""
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
    return RowQ(
        first_row[place[row_owner]] + local,
        np.repeat(np.arange(len(pieces)), n_rows),
        np.concatenate(game), np.repeat(np.arange(len(pieces)), [len(g) for g in game]),
        *_shifted([piece[2] for piece in pieces], first_row),
        *_shifted([piece[3] for piece in pieces], 2 * (np.cumsum(n_words) - n_words)),
        word_row + np.repeat(first_row, n_words),
        np.where(parent >= 0, parent + first_word, -1),
        order + first_word,
        static[first],
        flags[first],
        pair.reshape(-1),
    )


def _shifted(parts: list, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Concatenated sparse rows (slot, value, row), each part's rows moved by its offset."""
    s, v, r = zip(*parts, strict=True)
    return (np.concatenate(s), np.concatenate(v),
            np.concatenate(r) + np.repeat(offsets, [len(x) for x in r]))


def _sig_row_q(rows: FeatureRows, sig) -> tuple:
    """(rows, game slots, language rows, predicate rows, candidate words) of one signature,
    indexed from 0; kept per signature like its features."""
    cache = rows.row_q
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
