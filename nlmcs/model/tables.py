"""Signatures as integer tables, so that compiled code scores whole candidate sets.

`ValueNetwork` on the compiled backend scores a text signature from weight sums many signatures
share (`ScoreCache`); gluing those sums per signature in Python cost more than the arithmetic
(docs/performance.md). Here every signature, its candidate set (`UnitWords`), its action key
(action type + unit-action), its state key (the agent's state labels) and the parts behind
them get an integer id and rows in flat arrays, weight-free and kept for the search
(`nlmcs.model.rows` builds the slots; this only lays them out), and beside them the sums a
weight snapshot gives, stamped with the snapshot they were computed under
(`nlmcs.model.kernels.candidates` fills an entry the first time a snapshot asks for it, a
candidate set's own sums included: its words' relevance, static label logits and their
factors).

Only candidate sets in document order have tables (no ranked set, `UnitWords.full`): a ranked
set's sums are cut out of its whole set's, which these tables do not model. The kinds without
text have tables of their own (`LatentTables`: a signature's game and latent slots), so every
learned kind plays its roll-outs' turns in compiled calls.
"""

from __future__ import annotations

import numpy as np

from nlmcs.model.compiled import candidates, turns
from nlmcs.model.features import Signature
from nlmcs.model.rows import FeatureRows, UnitWords

LIMIT = 50_000
"""Signatures (and candidate-set keys) kept before the tables start again: memory over long
games stays bounded as `FeatureRows` bounds its features (their words' slots, which the
tables hold on to)."""

STAMP = -1
"""A stamp no snapshot has: the entry is not computed yet."""


class Column:
    """A growing array: rows appended at the end, capacity doubled as needed; `data` is the
    whole buffer (its unused tail is never read), so a kernel reads it without a copy."""

    def __init__(self, width: tuple = (), dtype=np.float64, fill=0):
        self.fill = fill
        self.data = np.full((64, *width), fill, dtype)
        self.size = 0

    def extend(self, values: np.ndarray | int) -> int:
        """Append `values` (or that many rows of the fill value); the first new row's index."""
        n = values if isinstance(values, int) else len(values)
        lo, hi = self.size, self.size + n
        if hi > len(self.data):
            grown = np.full((max(hi, 2 * len(self.data)), *self.data.shape[1:]), self.fill,
                            self.data.dtype)
            grown[:lo] = self.data[:lo]
            self.data = grown
        if not isinstance(values, int):
            self.data[lo:hi] = values
        self.size = hi
        return lo


COLUMNS = {  # name -> (row shape, dtype, fill), in `kernels.candidates.Tables` order
    "sig_meta": ((7,), np.int64, STAMP), "sig_rows_lo": ((), np.int64, 0),
    "sig_game": ((), np.float64, 0), "sig_expected": ((), np.float64, 0),
    "sig_p": ((), np.float64, 0), "sig_lang": ((), np.float64, 0),
    "game_slots": ((), np.int64, 0), "flags": ((3,), np.bool_, False),
    "act_meta": ((5,), np.int64, STAMP), "act_rel": ((), np.float64, 0),
    "act_lang": ((), np.float64, 0), "act_pred": ((2,), np.float64, 0),
    "part_meta": ((4,), np.int64, STAMP), "part_phi_slots": ((), np.int64, 0),
    "part_lang_slots": ((), np.int64, 0), "part_pred_slots": ((2,), np.int64, 0),
    "part_overlap": ((), np.float64, 0), "part_meaning": ((), np.float64, 0),
    "part_phi": ((), np.float64, 0), "part_lang": ((), np.float64, 0),
    "part_pred": ((2,), np.float64, 0),
    "unit_meta": ((7,), np.int64, STAMP), "unit_rows": ((), np.int64, 0),
    "unit_parent": ((), np.int64, 0), "unit_order": ((), np.int64, 0),
    "unit_norm": ((), np.float64, 0), "unit_phi": ((), np.float64, 0),
    "unit_static": ((3,), np.float64, 0), "unit_sexp": ((3,), np.float64, 0),
    "unit_marg": ((3,), np.float64, 0), "unit_psi": ((3, 7), np.int64, 0),
    "unit_phi_word": ((2,), np.int64, 0),
    "state_meta": ((5,), np.int64, STAMP), "state_parts": ((), np.int64, 0),
    "state_rel": ((), np.float64, 0), "state_lang": ((), np.float64, 0),
    "state_pred": ((2,), np.float64, 0),
}  # fmt: skip


LATENT_COLUMNS = {  # in `kernels.candidates.LatentTables` order
    "sig_meta": ((7,), np.int64, STAMP), "sig_game": ((), np.float64, 0),
    "sig_expected": ((), np.float64, 0), "sig_p": ((), np.float64, 0),
    "sig_lang": ((), np.float64, 0), "game_slots": ((), np.int64, 0),
    "latent_phi": ((), np.int64, 0), "latent_f": ((), np.int64, 0),
}  # fmt: skip


class _Tables:
    """What both kinds of tables share: ids by signature, candidate sets by agent key, the
    board keys, and columns that grow (`COLUMNS` of the subclass)."""

    COLUMNS: dict = {}
    KERNEL = ""  # the `kernels.candidates` named tuple of the arrays

    def __init__(self, rows: FeatureRows):
        self.rows = rows
        self.clear()

    def clear(self) -> None:
        self.generation = getattr(self, "generation", -1) + 1  # ids given before a clear are void
        self.ids: dict[Signature, int] = {}  # signature -> id
        self.agents: dict = {}  # `State.candidates_key` -> the candidates' ids (n,)
        self.sigs: list[Signature] = []  # by signature id
        self.columns = {name: Column(*spec) for name, spec in self.COLUMNS.items()}
        self._arrays = None
        self.board_keys: dict = {}  # a board game (`BoardState.ctx`) -> its `BoardKeys`

    def keys_of(self, game) -> BoardKeys:
        """The compiled key table of a board game's agents (cleared with the tables)."""
        found = self.board_keys.get(game)
        if found is None:
            found = self.board_keys[game] = BoardKeys()
        return found

    def of(self, sigs: list[Signature], *, start_again: bool = True) -> np.ndarray:
        """The ids of `sigs` (one agent's candidates), registering the new ones; with
        `start_again`, the tables start again first where they are full."""
        if start_again and (len(self.ids) + len(sigs) > LIMIT or len(self.agents) > LIMIT):
            self.clear()
        get = self.ids.get
        out = np.empty(len(sigs), np.int64)
        for i, sig in enumerate(sigs):
            found = get(sig)
            if found is None:
                found = self.ids[sig] = self._register(sig)
                self.sigs.append(sig)
            out[i] = found
        return out

    def _register(self, sig: Signature) -> int:
        """Lay out a new signature's rows (the subclass's columns); its id."""
        raise NotImplementedError

    def arrays(self):
        """The tables as their kernels take them (`kernels.candidates.Tables`, `LatentTables`;
        the same object until one grows)."""
        if self._arrays is None:
            kind = getattr(candidates(), self.KERNEL)
            self._arrays = kind(**{n: c.data for n, c in self.columns.items()})
        return self._arrays

    def _add(self, name: str, values) -> int:
        column = self.columns[name]
        before = column.data
        lo = column.extend(values)
        if column.data is not before:
            self._arrays = None
        return lo

    def scored(self, s: int, epoch: int) -> bool:
        """Whether signature `s` was scored under snapshot `epoch`."""
        return bool(self.columns["sig_meta"].data[s, 0] == epoch)


class SignatureTables(_Tables):
    """The integer tables of the text kinds' signatures one network has scored (see the
    module)."""

    COLUMNS = COLUMNS
    KERNEL = "Tables"

    @staticmethod
    def supports(rows: FeatureRows) -> bool:
        """Whether tables model this configuration's candidate sets (the text kinds, in
        document order)."""
        cfg = rows.config
        return rows.text and not (cfg.rank_sentences != "document"
                                  and cfg.max_sentences is not None)

    def clear(self) -> None:
        super().clear()
        self._actions: dict[tuple, int] = {}  # (atype key, action key) -> action key id
        self._parts: dict[tuple, int] = {}  # a part's key (`SigFeatures.keys`) -> part id
        self._units: dict[tuple, int] = {}  # `UnitWords.key` -> candidate-set id
        self._states: dict[tuple, int] = {}  # (set key, state labels) -> state key id
        self.units: list[UnitWords] = []  # by candidate-set id

    def _register(self, sig: Signature) -> int:
        feats = self.rows.features(sig)
        uw = feats.unit
        c, nw = len(uw.sentences), len(uw.words)
        uid = self._unit(uw)
        ak = self._actions.get((feats.keys[0], feats.keys[1]))
        if ak is None:
            pa = self._part(feats.keys[0], feats.parts[0], c, nw)
            pb = self._part(feats.keys[1], feats.parts[1], c, nw)
            ak = self._actions[(feats.keys[0], feats.keys[1])] = self._add("act_meta", np.array(
                [[STAMP, pa, pb, self._add("act_rel", c), self._add("act_pred", nw)]]))
            self._add("act_lang", c)
        skey = (uw.key, *(k[2] for k in feats.keys[2:]))
        sk = self._states.get(skey)
        if sk is None:
            parts = [self._part(k, p, c, nw) for k, p in zip(feats.keys[2:], feats.parts[2:],
                                                             strict=True)]
            lo = self._add("state_parts", np.array(parts, np.int64))
            sk = self._states[skey] = self._add("state_meta", np.array(
                [[STAMP, lo, lo + len(parts), self._add("state_rel", c),
                  self._add("state_pred", nw)]]))
            self._add("state_lang", c)
        g0 = self._add("game_slots", feats.game)
        s = self._add("sig_meta", np.array([[STAMP, ak, g0, g0 + len(feats.game),
                                             self._add("flags", feats.flags), uid, sk]]))
        self._add("sig_rows_lo", np.array([self._add("sig_p", c + 1)]))
        self._add("sig_lang", c + 1)
        self._add("sig_game", 1)
        self._add("sig_expected", 1)
        return s

    def _unit(self, uw: UnitWords) -> int:
        found = self._units.get(uw.key)
        if found is not None:
            return found
        c, nw = len(uw.sentences), len(uw.words)
        w0 = self._add("unit_rows", uw.rows)
        self._add("unit_parent", uw.parent)
        self._add("unit_order", uw.order)
        self._add("unit_norm", uw.norm)
        self._add("unit_psi", uw.psi_static)
        self._add("unit_phi_word", uw.phi_word)
        for name in ("unit_static", "unit_sexp", "unit_marg"):
            self._add(name, nw)
        found = self._units[uw.key] = self._add("unit_meta", np.array(
            [[STAMP, STAMP, 0, w0, self._add("unit_phi", c), c, nw]]))
        self.units.append(uw)
        return found

    def _part(self, key: tuple, part, c: int, nw: int) -> int:
        found = self._parts.get(key)
        if found is not None:
            return found
        r0 = self._add("part_overlap", np.zeros(c) if part.overlap is None else part.overlap)
        self._add("part_meaning", np.zeros(c) if part.meaning is None else part.meaning)
        self._add("part_phi", c)
        self._add("part_lang", c)
        w0 = self._add("part_lang_slots", part.lang)
        self._add("part_phi_slots", np.zeros(nw, np.int64) if part.phi is None else part.phi)
        self._add("part_pred_slots", part.pred)
        self._add("part_pred", nw)
        found = self._parts[key] = self._add("part_meta", np.array(
            [[STAMP, r0, w0, part.phi is not None]]))
        return found

    def values(self, s: int) -> tuple:
        """(game, p (C+1), lang (C+1), E[Q], pred_a (Wc, 2), pred_b (Wc, 2)) of a scored
        signature, as views of the tables (good until the next registration or snapshot)."""
        col = self.columns
        meta = col["sig_meta"].data
        uw = self.units[meta[s, 5]]
        c, nw = len(uw.sentences), len(uw.words)
        q0 = col["sig_rows_lo"].data[s]
        a1 = col["act_meta"].data[meta[s, 1], 4]
        k1 = col["state_meta"].data[meta[s, 6], 4]
        return (float(col["sig_game"].data[s]), col["sig_p"].data[q0:q0 + c + 1],
                col["sig_lang"].data[q0:q0 + c + 1], float(col["sig_expected"].data[s]),
                col["act_pred"].data[a1:a1 + nw], col["state_pred"].data[k1:k1 + nw])


class LatentTables(_Tables):
    """The integer tables of the kinds without text (`nonlinear`, `linear`): a signature's
    game slots and its K latent states' relevance and output slots (`SigFeatures.latent_phi`,
    `latent_f`, K x M), and beside them its scores per snapshot
    (`kernels.candidates.latent_score`)."""

    COLUMNS = LATENT_COLUMNS
    KERNEL = "LatentTables"

    def _register(self, sig: Signature) -> int:
        feats = self.rows.features(sig)
        phi = feats.latent_phi
        k, m = (0, 0) if phi is None else phi.shape
        g0 = self._add("game_slots", feats.game)
        a0 = self._add("latent_phi", np.zeros(0, np.int64) if phi is None else phi.ravel())
        if phi is not None:
            self._add("latent_f", feats.latent_f.ravel())
        r0 = self._add("sig_p", max(k, 1))
        self._add("sig_lang", max(k, 1))
        self._add("sig_game", 1)
        self._add("sig_expected", 1)
        return self._add("sig_meta", np.array([[STAMP, g0, g0 + len(feats.game), a0, r0, k, m]]))

    def values(self, s: int) -> tuple:
        """(game, p (K), lang (K), E[Q], None, None) of a scored signature, as
        `SignatureTables.values` (views good until the next registration or snapshot)."""
        col = self.columns
        r0, k = col["sig_meta"].data[s, 4:6]
        n = max(int(k), 1)
        return (float(col["sig_game"].data[s]), col["sig_p"].data[r0:r0 + n],
                col["sig_lang"].data[r0:r0 + n], float(col["sig_expected"].data[s]), None, None)


def tables_for(rows: FeatureRows) -> SignatureTables | LatentTables | None:
    """The tables of a configuration on the compiled backend, or None where none model its
    signatures (a ranked candidate set)."""
    if rows.text:
        return SignatureTables(rows) if SignatureTables.supports(rows) else None
    return LatentTables(rows)


class BoardKeys:
    """An agent's candidate ids by its key (`BoardState.agent_keys`, less the game, as
    integers) in a table compiled code reads (`kernels.turns.find`): what `SignatureTables.
    agents` holds for a board game's agents, so that a roll-out's turns need no Python."""

    def __init__(self):
        self.slots = np.full(1024, turns().EMPTY, np.int64)  # open addressing: entry or EMPTY
        self.hashes = np.zeros(1024, np.int64)
        self.key_lo, self.key_len = Column((), np.int64), Column((), np.int64)
        self.store = Column((), np.int64)  # the keys, one after another
        self.sid_lo, self.sid_len = Column((), np.int64), Column((), np.int64)
        self.sids = Column((), np.int64)  # each entry's candidate ids
        self.size = 0
        self.known: set[tuple] = set()  # the keys kept, asked before a compiled lookup (~9 us)

    def arrays(self) -> tuple:
        """The table as `kernels.turns.learned_turns` takes it."""
        return (self.slots, self.hashes, self.key_lo.data, self.key_len.data, self.store.data,
                self.sid_lo.data, self.sid_len.data, self.sids.data)

    def add(self, key: tuple, sids: np.ndarray) -> None:
        """Keep `sids` as the candidate ids of the agent with integer key `key` (a key kept
        already keeps its ids: the same key has the same candidates)."""
        if key in self.known:
            return
        self.known.add(key)
        key = np.array(key, np.int64)
        kernel = turns()
        h = kernel.key_hash(key)
        i = kernel.find(self.slots, self.hashes, self.key_lo.data, self.key_len.data,
                        self.store.data, key, h)
        if i >= 0:
            return
        e = self.size
        self.key_lo.extend(np.array([self.store.extend(key)]))
        self.key_len.extend(np.array([len(key)]))
        self.sid_lo.extend(np.array([self.sids.extend(sids)]))
        self.sid_len.extend(np.array([len(sids)]))
        self.size += 1
        if 2 * self.size > len(self.slots):  # keep the table at most half full
            self._rehash(2 * len(self.slots))
        else:
            self.slots[-1 - i] = e
            self.hashes[-1 - i] = h

    def _rehash(self, capacity: int) -> None:
        kernel = turns()
        find, key_hash = kernel.find, kernel.key_hash
        self.slots = np.full(capacity, kernel.EMPTY, np.int64)
        self.hashes = np.zeros(capacity, np.int64)
        lo, n, store = self.key_lo.data, self.key_len.data, self.store.data
        for e in range(self.size):
            key = store[lo[e]:lo[e] + n[e]]
            h = key_hash(key)
            i = find(self.slots, self.hashes, lo, n, store, key, h)
            self.slots[-1 - i] = e
            self.hashes[-1 - i] = h
