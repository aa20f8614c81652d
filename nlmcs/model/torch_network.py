"""The value network of Branavan, Silver & Barzilay (IJCAI 2011) scored with torch modules.

The same four layers as `nlmcs.model.network` (x -> sentence relevance y over phi with weights u,
predicate labels z over psi with weights v, sampled parent before child -> f -> Q = w . f), the
same weight-free feature slots and the same caches; only the weight-dependent arithmetic runs in
torch: each hashed table is an `nn.Embedding`-style float64 lookup (`HashedTable`) and per-row
feature sums are segment sums (`index_add_`, what `EmbeddingBag(mode="sum")` computes).

Sharing rather than copying: on the CPU every table tensor is `torch.from_numpy` of the network's
numpy table, so the numpy learner (`nlmcs.model.learner.update`) writes weights that torch reads
with no copy. On a CUDA device the tables are copied over whenever the weights change.

Scores are handed back as numpy arrays, so sampling, `decision_q` and the learner are the shared
numpy code and a seeded run takes the same decisions under either backend. Per call, torch costs
more than numpy on these tiny sparse ops (see the module docstring of `network`); this backend is
the starting point for batched or GPU scoring, not a speed-up on one CPU thread.
"""

from __future__ import annotations

import logging

import numpy as np
import torch
from torch import nn

from nlmcs.model.config import ModelConfig
from nlmcs.model.features import ROOT, ManualIndex, Signature
from nlmcs.model.network import Part, SigScores, UnitWords, ValueNetwork

log = logging.getLogger(__name__)


def resolve_device(name: str) -> torch.device:
    """`name` if it is usable here; a CUDA request without CUDA falls back to the CPU."""
    dev = torch.device(name)
    if dev.type == "cuda" and not torch.cuda.is_available():
        log.warning("device %r requested but CUDA is not available; scoring on the CPU", name)
        return torch.device("cpu")
    return dev


def _softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Written out as in the numpy network so both backends round alike."""
    e = torch.exp(x - x.amax(dim=dim, keepdim=True))
    return e / e.sum(dim=dim, keepdim=True)


class HashedTable(nn.Module):
    """One hashed weight table (u, v or w): an embedding of width one, float64.

    On the CPU the buffer shares memory with the numpy table it wraps.
    """

    def __init__(self, table: np.ndarray, device: torch.device):
        super().__init__()
        self.table = table
        self.device = device
        self.register_buffer("weight", self._tensor(), persistent=False)

    def _tensor(self) -> torch.Tensor:
        t = torch.from_numpy(self.table)
        return t if self.device.type == "cpu" else t.to(self.device)

    def sync(self, table: np.ndarray) -> None:
        """See the current values of the network's numpy table `table` (on the CPU a no-op
        unless the array was replaced)."""
        self.table = table
        if self.device.type != "cpu":
            self.weight.copy_(torch.from_numpy(table))
        elif self.weight.data_ptr() != table.ctypes.data:
            self.weight = self._tensor()

    def forward(self, slots: torch.Tensor) -> torch.Tensor:
        """Weights at `slots` (any shape); `take` is the cheapest gather on small tensors."""
        return torch.take(self.weight, slots)

    def bag(self, slots: torch.Tensor, rows: torch.Tensor, n: int) -> torch.Tensor:
        """(n,): per row, the sum of the weights of its items; `slots` is (items,) or
        (items, k) with the k slots of an item summed first."""
        vals = torch.take(self.weight, slots)
        if vals.dim() > 1:
            vals = vals.sum(dim=1)
        return vals.new_zeros(n).index_add_(0, rows, vals)


class RelevanceLayer(nn.Module):
    """Sentence relevance y: p(y = row) = softmax(u . phi(row)) over candidates plus NULL."""

    def __init__(self, u: HashedTable, null_slots: torch.Tensor, overlap_slot: int):
        super().__init__()
        self.u = u
        self.register_buffer("null_slots", null_slots, persistent=False)
        self.overlap_slot = overlap_slot

    def forward(
        self, row_logits: torch.Tensor, overlap: torch.Tensor, temperature: float
    ) -> torch.Tensor:
        """(C+1,) probabilities from per-row u . phi without the overlap feature (C,)."""
        null = self.u(self.null_slots).sum().reshape(1)
        logits = torch.cat([row_logits + self.u.weight[self.overlap_slot] * overlap, null])
        return _softmax(logits / temperature)

    def latent(self, phi: torch.Tensor, temperature: float) -> torch.Tensor:
        """(K,) probabilities of the latent states of the no-text model; `phi` is (K, k)."""
        return _softmax(self.u(phi).sum(dim=1) / temperature)


class LabelLayer(nn.Module):
    """Predicate labels z: p(z_j | parent label) = softmax(v . psi) over action/state/background;
    marginals propagated parent before child."""

    def __init__(self, v: HashedTable, plabel_slots: torch.Tensor, flag_slots: torch.Tensor):
        super().__init__()
        self.v = v
        self.register_buffer("plabel_slots", plabel_slots, persistent=False)  # (4, 3)
        self.register_buffer("flag_slots", flag_slots, persistent=False)  # (3, 3)

    def static(self, psi_static: torch.Tensor) -> torch.Tensor:
        """(Wc, 3) v . psi of each word's own features (word, POS, dependency, parent word and
        POS, leaf, rule; slots (Wc, 3, 7)) under each label."""
        return self.v(psi_static).sum(dim=2)

    def forward(self, static, flags, levels: tuple, temperature: float):
        """cond (Wc, 4, 3) by parent label A, S, B, ROOT and marginals (Wc, 3).

        `levels` (see `label_levels`): the words under the root, the non-root words in depth
        order, and per depth (its words, their parents, their span in that order).
        """
        roots, kid_order, steps = levels
        logit = static + flags @ self.v(self.flag_slots)
        logit = logit[:, None, :] + self.v(self.plabel_slots)[None, :, :]
        cond = _softmax(logit / temperature, dim=2)
        marg = cond.new_zeros((cond.shape[0], 3))
        marg.index_copy_(0, roots, cond[roots, ROOT])
        kid_cond = cond[:, :3].index_select(0, kid_order)  # (K, 3 parent labels, 3)
        for kids, parents, lo, hi in steps:
            m = torch.bmm(marg.index_select(0, parents).unsqueeze(1), kid_cond[lo:hi])
            marg.index_copy_(0, kids, m.squeeze(1))
        return cond, marg


def label_levels(uw: UnitWords, to_tensor) -> tuple:
    """The word tree of `uw` in the form `LabelLayer.forward` walks it."""
    roots = np.flatnonzero(uw.parent < 0)
    order, steps, lo = [], [], 0
    for level in uw.levels:
        kids = level[uw.parent[level] >= 0]
        if len(kids):
            order.append(kids)
            steps.append((to_tensor(kids), to_tensor(uw.parent[kids]), lo, lo + len(kids)))
            lo += len(kids)
    kid_order = np.concatenate(order) if order else np.zeros(0, np.int64)
    return to_tensor(roots), to_tensor(kid_order), steps


class OutputLayer(nn.Module):
    """Q = w . f: game features, per-row language features, per-word predicate features."""

    def __init__(self, w: HashedTable, match_slots: torch.Tensor):
        super().__init__()
        self.w = w
        self.register_buffer("match_slots", match_slots, persistent=False)  # (2,)

    def match(self, match: torch.Tensor) -> torch.Tensor:
        """(Wc, 2) w . f of the grounding features under labels action / state."""
        return match * self.w(self.match_slots)

    def expected_rows(self, marg, pred, rows, n: int) -> torch.Tensor:
        """(n,) per row, the sum over its words of E_z[w . f_predicate]."""
        word_q = (marg[:, :2] * pred).sum(dim=1)
        return word_q.new_zeros(n).index_add_(0, rows, word_q)

    def forward(self, game: torch.Tensor, p: torch.Tensor, per_row: torch.Tensor) -> float:
        """E[Q] = w . x + sum over rows of p(row) * E[w . f | row]; `per_row` may leave out
        the trailing NULL row of `p` (its value is 0)."""
        return float(game + p[: per_row.shape[0]] @ per_row)


class ValueLayers(nn.Module):
    """The three weighted layers over the network's tables."""

    def __init__(self, net: ValueNetwork, device: torch.device):
        super().__init__()

        def t(a):
            return torch.from_numpy(np.ascontiguousarray(a)).to(device)

        self.relevance = RelevanceLayer(
            HashedTable(net.u, device), t(net.null_slots), net.overlap_slot
        )
        self.labels = LabelLayer(HashedTable(net.v, device), t(net.plabel_slots), t(net.flag_slots))
        self.output = OutputLayer(HashedTable(net.w, device), t(net.match_slots))

    def sync(self, u: np.ndarray, v: np.ndarray, w: np.ndarray) -> None:
        self.relevance.u.sync(u)
        self.labels.v.sync(v)
        self.output.w.sync(w)


class TorchValueNetwork(ValueNetwork):
    """`ValueNetwork` whose scores come from `ValueLayers` (ModelConfig.backend = "torch")."""

    def __init__(self, config: ModelConfig, index: ManualIndex | None = None):
        super().__init__(config, index)
        torch.set_num_threads(1)
        self.device = resolve_device(config.device)
        self._tensors: dict[tuple, tuple] = {}  # weight-free slots as tensors, kept like _parts
        self.layers = ValueLayers(self, self.device)

    # Pickled for roll-out workers: the tensors are rebuilt so they share the unpickled tables.
    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        for name in ("layers", "device"):
            del state[name]
        state["_tensors"], state["_part_cache"], state["_scores"] = {}, {}, {}
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        torch.set_num_threads(1)
        self.device = resolve_device(self.config.device)
        self.layers = ValueLayers(self, self.device)

    def weights_changed(self) -> None:
        super().weights_changed()
        layers = getattr(self, "layers", None)
        if layers is not None:
            layers.sync(self.u, self.v, self.w)

    def _t(self, a: np.ndarray, dtype=None) -> torch.Tensor:
        t = torch.from_numpy(np.ascontiguousarray(a))
        if dtype is not None:
            t = t.to(dtype)
        return t.to(self.device)

    @staticmethod
    def _np(t: torch.Tensor) -> np.ndarray:
        return t.detach().cpu().numpy()

    # --- weight-free tensors ------------------------------------------------------------------
    def _unit_tensors(self, key: str, uw: UnitWords) -> tuple:
        found = self._tensors.get(("unit", key))
        if found is None:
            levels = label_levels(uw, self._t)
            found = (self._t(uw.rows), self._t(uw.phi_word), self._t(uw.psi_static), levels)
            self._tensors[("unit", key)] = found
        return found

    def _part_tensors(self, key: tuple, part: Part) -> tuple:
        found = self._tensors.get(("part", key))
        if found is None:
            found = (
                None if part.phi is None else self._t(part.phi),
                self._t(part.lang),
                self._t(part.pred),
                None if part.overlap is None else self._t(part.overlap),
            )
            self._tensors[("part", key)] = found
        return found

    def _flag_tensors(self, flag_key: tuple, flags: np.ndarray) -> tuple:
        """(flags (Wc, 3), match (Wc, 2)) as float64, shared by signatures with equal flags."""
        found = self._tensors.get(("flags", flag_key))
        if found is None:
            f = self._t(flags, torch.float64)
            found = (f, f[:, [2, 0]].contiguous())
            self._tensors[("flags", flag_key)] = found
        return found

    # --- scores under the current weights (overrides of the numpy arithmetic) -----------------
    def _part_scores(self, key: tuple, part: Part, uw: UnitWords):
        found = self._part_cache.get(key)
        if found is None:
            n = len(uw.sentences)
            rows = self._unit_tensors(key[1], uw)[0]  # key = (kind, unit, label)
            phi_s, lang_s, pred_s, _ = self._part_tensors(key, part)
            phi = None if phi_s is None else self.layers.relevance.u.bag(phi_s, rows, n)
            out = self.layers.output.w
            found = (phi, out.bag(lang_s, rows, n), out(pred_s))
            self._part_cache[key] = found
        return found

    def _unit_scores(self, key: str, uw: UnitWords):
        found = self._part_cache.get(key)
        if found is None:
            rows, phi_word, psi_static, _ = self._unit_tensors(key, uw)
            phi = self.layers.relevance.u.bag(phi_word, rows, len(uw.sentences))
            static = self.layers.labels.static(psi_static) if self.config.kind == "text" else None
            found = (phi, static)
            self._part_cache[key] = found
        return found

    def _labels(self, uw: UnitWords, key: tuple, static, flags):
        key = ("labels", key)
        found = self._part_cache.get(key)
        if found is None:
            levels = self._unit_tensors(key[1][0], uw)[3]
            cond, marg = self.layers.labels(static, flags, levels, self.config.temperature)
            found = (cond, marg, key)
            self._part_cache[key] = found
        return found

    def _expected_pred(self, key, mkey, uw: UnitWords, pred, marg):
        """`pred` is a (Wc, 2) tensor or a function making it (only called on a cache miss)."""
        full = (key, mkey)
        found = self._part_cache.get(full)
        if found is None:
            rows = self._unit_tensors(mkey[1][0], uw)[0]
            pred = pred() if callable(pred) else pred
            found = self.layers.output.expected_rows(marg, pred, rows, len(uw.sentences))
            self._part_cache[full] = found
        return found

    def _compute_scores(self, sig: Signature) -> SigScores:
        cfg, layers = self.config, self.layers
        feats = self.features(sig)
        game_t = layers.output.w(self._t(feats.game)).sum()
        game = float(game_t)
        temp = cfg.temperature
        if cfg.kind == "linear":
            return SigScores(game, np.ones(1), np.zeros(1), None, None, None, game)
        if cfg.kind == "latent":
            p = layers.relevance.latent(self._t(feats.latent_phi), temp)
            lang = layers.output.w(self._t(feats.latent_f)).sum(dim=1)
            return SigScores(game, self._np(p), self._np(lang), None, None, None,
                             layers.output(game_t, p, lang))  # fmt: skip
        uw = feats.unit
        unit_phi, static = self._unit_scores(sig.unit, uw)
        parts = [self._part_scores(k, p, uw) for k, p in zip(feats.keys, feats.parts,
                                                               strict=True)]  # fmt: skip
        overlap = self._part_tensors(feats.keys[1], feats.parts[1])[3]
        p = layers.relevance(unit_phi + parts[0][0], overlap, temp)
        lang_rows = parts[0][1]  # (C,) w . f_language; the NULL row has none
        for part in parts[1:]:
            lang_rows = lang_rows + part[1]
        lang = self._np(torch.cat([lang_rows, lang_rows.new_zeros(1)]))
        if cfg.kind == "relevance":
            return SigScores(game, self._np(p), lang, None, None, None,
                             layers.output(game_t, p, lang_rows))  # fmt: skip
        flags, match = self._flag_tensors(feats.flag_key, feats.flags)
        cond, marg, mkey = self._labels(uw, feats.flag_key, static, flags)
        per_row = lang_rows
        for key, part in zip(feats.keys, parts, strict=True):
            per_row = per_row + self._expected_pred(key, mkey, uw, part[2], marg)
        if cfg.grounding_features:
            per_row = per_row + self._expected_pred(
                ("match",), mkey, uw, lambda: layers.output.match(match), marg
            )
        return SigScores(game, self._np(p), lang, None, self._np(cond),
                         self._np(marg), layers.output(game_t, p, per_row))  # fmt: skip

    def _pred(self, sig: Signature, sc: SigScores) -> np.ndarray:
        if sc.pred is None:
            feats = self.features(sig)
            uw = feats.unit
            pred = torch.zeros((len(uw.words), 3), dtype=torch.float64, device=self.device)
            for key, part in zip(feats.keys, feats.parts, strict=True):
                pred[:, :2] += self._part_scores(key, part, uw)[2]
            if self.config.grounding_features:
                match = self._flag_tensors(feats.flag_key, feats.flags)[1]
                pred[:, :2] += self.layers.output.match(match)
            sc.pred = self._np(pred)
        return sc.pred
