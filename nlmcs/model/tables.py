"""Signatures as integer tables, so that compiled code scores a whole candidate set.

`ValueNetwork` on the compiled backend scores a text signature from weight sums many signatures
share (`ScoreCache`); gluing those sums per signature in Python cost more than the arithmetic
(docs/performance.md). Here every signature, its action key (action type + unit-action) and the
two parts behind that key get an integer id and rows in flat arrays, weight-free and kept for the
search (`nlmcs.model.rows` builds the slots; this only lays them out), and beside them the
stamped per-snapshot sums (`scoring.agent_expected` fills an entry the first time a weight
snapshot asks for it and stamps it with the snapshot). What every candidate of one agent shares
(its candidate set's and its state labels' sums) stays with the network's caches and comes in
per call.

Only candidate sets in document order have tables (no ranked set, `UnitWords.full`): a ranked
set's sums are cut out of its whole set's, which these tables do not model.
"""

from __future__ import annotations

import numpy as np

from nlmcs.model.features import Signature
from nlmcs.model.rows import FeatureRows, SigFeatures

LIMIT = 200_000
"""Signatures kept before the tables start again (bounds memory over long games)."""


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


STAMP = -1
"""A stamp no snapshot has: the entry is not computed yet."""


class SignatureTables:
    """The integer tables of the signatures one network has scored (see the module)."""

    def __init__(self, rows: FeatureRows):
        self.rows = rows
        self.clear()

    @staticmethod
    def supports(rows: FeatureRows) -> bool:
        """Whether tables model this configuration's candidate sets (the text kinds, in
        document order)."""
        cfg = rows.config
        return rows.text and not (cfg.rank_sentences != "document"
                                  and cfg.max_sentences is not None)

    def clear(self) -> None:
        self.ids: dict[Signature, int] = {}  # signature -> id
        self.agents: dict = {}  # `State.candidates_key` -> the candidates' ids (n,)
        self._actions: dict[tuple, int] = {}  # (atype key, action key) -> action key id
        self._parts: dict[tuple, int] = {}  # a part's key (`SigFeatures.keys`) -> part id
        self.features: list[SigFeatures] = []  # by signature id
        self.sig_meta = Column((5,), np.int64, STAMP)
        self.sig_rows_lo = Column((), np.int64)
        self.sig_game = Column()
        self.sig_expected = Column()
        self.sig_p = Column()
        self.sig_lang = Column()
        self.game_slots = Column((), np.int64)
        self.flags = Column((3,), np.bool_, False)
        self.act_meta = Column((5,), np.int64, STAMP)
        self.act_rel = Column()
        self.act_lang = Column()
        self.act_pred = Column((2,))
        self.part_meta = Column((3,), np.int64, STAMP)
        self.part_phi_slots = Column((), np.int64)
        self.part_lang_slots = Column((), np.int64)
        self.part_pred_slots = Column((2,), np.int64)
        self.part_overlap = Column()
        self.part_meaning = Column()
        self.part_phi = Column()
        self.part_lang = Column()
        self.part_pred = Column((2,))

    def of(self, sigs: list[Signature]) -> np.ndarray:
        """The ids of `sigs` (one agent's candidates), registering the new ones."""
        if len(self.ids) + len(sigs) > LIMIT or len(self.agents) > LIMIT:
            self.clear()
        get = self.ids.get
        out = np.empty(len(sigs), np.int64)
        for i, sig in enumerate(sigs):
            found = get(sig)
            out[i] = self._register(sig) if found is None else found
        return out

    def _register(self, sig: Signature) -> int:
        feats = self.rows.features(sig)
        uw = feats.unit
        c, nw = len(uw.sentences), len(uw.words)
        ak = self._actions.get((feats.keys[0], feats.keys[1]))
        if ak is None:
            pa = self._part(feats.keys[0], feats.parts[0], c, nw)
            pb = self._part(feats.keys[1], feats.parts[1], c, nw)
            ak = self._actions[(feats.keys[0], feats.keys[1])] = self.act_meta.extend(
                np.array([[STAMP, pa, pb, self.act_rel.extend(c), self.act_pred.extend(nw)]]))
            self.act_lang.extend(c)
        g0 = self.game_slots.extend(feats.game)
        s = self.sig_meta.extend(np.array([[STAMP, ak, g0, g0 + len(feats.game),
                                            self.flags.extend(feats.flags)]]))
        self.sig_rows_lo.extend(np.array([self.sig_p.extend(c + 1)]))
        self.sig_lang.extend(c + 1)
        self.sig_game.extend(1)
        self.sig_expected.extend(1)
        self.features.append(feats)
        self.ids[sig] = s
        return s

    def _part(self, key: tuple, part, c: int, nw: int) -> int:
        found = self._parts.get(key)
        if found is not None:
            return found
        r0 = self.part_overlap.extend(np.zeros(c) if part.overlap is None else part.overlap)
        self.part_meaning.extend(np.zeros(c) if part.meaning is None else part.meaning)
        self.part_phi.extend(c)
        self.part_lang.extend(c)
        w0 = self.part_lang_slots.extend(part.lang)
        self.part_phi_slots.extend(np.zeros(nw, np.int64) if part.phi is None else part.phi)
        self.part_pred_slots.extend(part.pred)
        self.part_pred.extend(nw)
        found = self._parts[key] = self.part_meta.extend(np.array([[STAMP, r0, w0]]))
        return found

    def inputs(self) -> tuple:
        """The tables' part of `scoring.AgentInputs` (after its first two fields), in order."""
        return (self.sig_meta.data, self.sig_rows_lo.data, self.sig_game.data,
                self.sig_expected.data, self.sig_p.data, self.sig_lang.data,
                self.game_slots.data, self.flags.data, self.act_meta.data, self.act_rel.data,
                self.act_lang.data, self.act_pred.data, self.part_meta.data,
                self.part_phi_slots.data, self.part_lang_slots.data, self.part_pred_slots.data,
                self.part_overlap.data, self.part_meaning.data, self.part_phi.data,
                self.part_lang.data, self.part_pred.data)

    def scored(self, s: int, epoch: int) -> bool:
        """Whether signature `s` was scored under snapshot `epoch`."""
        return bool(self.sig_meta.data[s, 0] == epoch)

    def values(self, s: int) -> tuple:
        """(game, p (C+1), lang (C+1), E[Q], pred_a (Wc, 2)) of a scored signature, as views
        of the tables (good until the next registration or snapshot)."""
        feats = self.features[s]
        c, nw = len(feats.unit.sentences), len(feats.unit.words)
        q0 = self.sig_rows_lo.data[s]
        a1 = self.act_meta.data[self.sig_meta.data[s, 1], 4]
        return (float(self.sig_game.data[s]), self.sig_p.data[q0:q0 + c + 1],
                self.sig_lang.data[q0:q0 + c + 1], float(self.sig_expected.data[s]),
                self.act_pred.data[a1:a1 + nw])
