"""Corpus relevance and priors for live candidate actions (Dobre & Lascarides, CIG 2015).

For a live state s and candidate actions a_1..a_m (each as an action vector, the change it makes to
the state vector), every corpus pair (s', a') in the pool gets relevance

    R = (cos(s, s') + cos(a_i, a')) / 2                      (paper, eq. 3)

and is credited once, to its most relevant candidate. A candidate's prior is the mean of R x U over
the pairs credited to it (eqs. 4-5), with U = 1 (trust the recorded player) or the recorded
player's result. Candidates that no pair chose get no prior (NaN): the paper seeds only the part of
the tree the corpus speaks about. A candidate's support is the sum instead of the mean (a pair tied
between candidates split equally): normalised, a policy that weighs how many recorded players did
something like this candidate here, which is what PUCT wants (`nlmcs.search.tree`).

To stay fast on a million decisions, the pool is restricted to the `pool_size` corpus states most
similar to s. `StateIndex` finds them either exactly (one matrix-vector product over the normalised
state matrix plus `argpartition`) or, for large corpora, through an inverted-file index: spherical
k-means lists, of which only the `n_probe` nearest are scanned. Features are divided by their
largest magnitude in the corpus first, so that a score in the hundreds does not drown out flags.

Zero action vectors (an action that changed nothing the state vector measures) get one extra
"no change" component, so two no-change actions have cosine 1 and a no-change and a change 0.
Optionally (`type_weight` > 0) the action side also compares action types:
cos(a, a') becomes (1 - w) cos_vec + w [type == type'].
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal

import numpy as np

from nlmcs.fields import MAX_SEED, check_fields, option

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SimilarityConfig:
    """How corpus pairs are pooled and weighed."""

    pool_size: int = option(256, low=1)
    """k: corpus pairs (nearest states) considered per query."""
    index: Literal["auto", "exact", "ivf"] = "auto"
    """auto: ivf from `ivf_min_pairs` up."""
    ivf_min_pairs: int = option(50_000, low=1)
    """Corpus pairs from which `auto` builds the inverted file."""
    n_lists: int | None = option(None, low=1)
    """ivf lists (None: 2 sqrt(n))."""
    n_probe: int = option(12, low=1)
    """ivf lists scanned per query."""
    kmeans_iters: int = option(6, low=0)
    """Rounds of the spherical k-means that makes the lists."""
    utility: Literal["one", "result"] = "one"
    """U = 1, or the recorded player's win/loss."""
    by_agent: bool = True
    """Pool only pairs whose agent word matches the live agent's."""
    applied_only: bool = True
    """Ignore recorded actions the engine refused."""
    type_weight: float = option(0.0, low=0.0, high=1.0)
    """w above; 0 is the paper's R."""
    seed: int = option(0, low=0, high=MAX_SEED)
    """k-means initialisation."""

    def __post_init__(self) -> None:
        check_fields(self, "similarity option")


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.where(norms > 0, norms, 1.0)).astype(np.float32, copy=False)


def _scale(matrix: np.ndarray) -> np.ndarray:
    top = np.abs(matrix).max(axis=0) if len(matrix) else np.ones(matrix.shape[1])
    return np.where(top > 0, top, 1.0).astype(np.float32)


def action_unit(diffs: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Scaled, unit-length action vectors with the trailing "no change" component. (m, F+1)"""
    scaled = np.asarray(diffs, dtype=np.float32) / scale
    zero = (np.abs(scaled).max(axis=1, keepdims=True) == 0).astype(np.float32)
    return _unit_rows(np.hstack([scaled, zero]))


class StateIndex:
    """Nearest corpus states by cosine: exact scan or inverted file over spherical k-means."""

    def __init__(self, units: np.ndarray, *, kind: Literal["exact", "ivf"], n_lists: int | None,
                 n_probe: int, iters: int, seed: int) -> None:
        self.units = units  # (n, F) unit rows
        self.kind = kind
        self.n_probe = n_probe
        if kind == "ivf":
            self._build_ivf(n_lists or max(1, int(2 * np.sqrt(len(units)))), iters, seed)

    def _build_ivf(self, n_lists: int, iters: int, seed: int) -> None:
        rng = np.random.default_rng(seed)
        n = len(self.units)
        n_lists = min(n_lists, n)
        sample = self.units[rng.choice(n, size=min(n, 40 * n_lists), replace=False)]
        centroids = sample[rng.choice(len(sample), size=n_lists, replace=False)].copy()
        for _ in range(iters):  # spherical k-means on the sample
            assign = self._nearest_list(sample, centroids)
            order = np.argsort(assign, kind="stable")
            counts = np.bincount(assign, minlength=n_lists)
            starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
            sums = np.zeros_like(centroids)
            used = counts > 0
            sums[used] = np.add.reduceat(sample[order], starts[used], axis=0)
            empty = np.abs(sums).sum(axis=1) == 0
            sums[empty] = sample[rng.choice(len(sample), size=int(empty.sum()))]
            centroids = _unit_rows(sums)
        assign = self._nearest_list(self.units, centroids)
        order = np.argsort(assign, kind="stable")
        self.centroids = centroids
        self.members = order.astype(np.int64)  # row ids grouped by list
        self.offsets = np.searchsorted(assign[order], np.arange(n_lists + 1))

    @staticmethod
    def _nearest_list(rows: np.ndarray, centroids: np.ndarray, chunk: int = 65536) -> np.ndarray:
        out = np.empty(len(rows), dtype=np.int64)
        for start in range(0, len(rows), chunk):
            out[start:start + chunk] = np.argmax(rows[start:start + chunk] @ centroids.T, axis=1)
        return out

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(row ids, cosines) of up to k nearest rows to the unit vector `query`, best first."""
        if self.kind == "exact":
            ids = None
            sims = self.units @ query  # (n,)
        else:
            probe = np.argsort(-(self.centroids @ query))[: self.n_probe]
            ids = np.concatenate([self.members[self.offsets[c]:self.offsets[c + 1]] for c in probe])
            sims = self.units[ids] @ query
        k = min(k, len(sims))
        if k == 0:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
        top = np.argpartition(-sims, k - 1)[:k] if k < len(sims) else np.arange(len(sims))
        top = top[np.argsort(-sims[top], kind="stable")]
        return (top if ids is None else ids[top]), sims[top]


@dataclass
class Credit:
    """Result of crediting a pool to m candidates."""

    prior: np.ndarray  # (m,) mean R x U, NaN where no pair was credited
    count: np.ndarray  # (m,) pairs credited
    pairs: list[np.ndarray]  # per candidate: corpus row ids credited, most relevant first
    relevance: list[np.ndarray]  # per candidate: R of those pairs (both empty if not asked for)
    support: np.ndarray | None = None  # (m,) sum of R x U, a pair tied between candidates split


class CorpusSimilarity:
    """Relevance of corpus pairs to live candidates, over a pool of nearest states."""

    def __init__(self, states: np.ndarray, actions: np.ndarray, *, action_types: np.ndarray,
                 agent_labels: np.ndarray, utility: np.ndarray, applied: np.ndarray | None = None,
                 config: SimilarityConfig | None = None) -> None:
        self.config = config or SimilarityConfig()
        keep = np.ones(len(states), dtype=bool)
        if applied is not None and self.config.applied_only:
            keep &= np.asarray(applied, dtype=bool)
        self.rows = np.flatnonzero(keep)  # corpus row id of each kept pair
        states = np.asarray(states, dtype=np.float32)[keep]
        actions = np.asarray(actions, dtype=np.float32)[keep]
        self.state_scale = _scale(states)
        self.action_scale = _scale(actions)
        self.s_units = _unit_rows(states / self.state_scale)
        self.a_units = action_unit(actions, self.action_scale)
        self.types = np.asarray(action_types)[keep]
        self.utility = np.asarray(utility, dtype=np.float32)[keep]
        labels = np.asarray(agent_labels)[keep]
        groups = {"*": np.arange(len(self.rows))}
        if self.config.by_agent:
            groups = {str(lab): np.flatnonzero(labels == lab) for lab in np.unique(labels)}
        self.groups = groups
        self._indexes: dict[str, StateIndex] = {}

    def _index(self, group: str) -> StateIndex:
        if group not in self._indexes:
            members = self.groups[group]
            cfg = self.config
            kind = cfg.index
            if kind == "auto":
                kind = "ivf" if len(members) >= cfg.ivf_min_pairs else "exact"
            self._indexes[group] = StateIndex(
                self.s_units[members], kind=kind, n_lists=cfg.n_lists, n_probe=cfg.n_probe,
                iters=cfg.kmeans_iters, seed=cfg.seed)
        return self._indexes[group]

    def build(self) -> None:
        """Build every group's index now rather than at its first query."""
        for group in self.groups:
            self._index(group)

    def pool(self, state: np.ndarray, agent_label: str | None) -> tuple[np.ndarray, np.ndarray]:
        """(kept-pair ids, cos(s, s')) of the nearest corpus states for this agent."""
        group = "*" if not self.config.by_agent else str(agent_label)
        if group not in self.groups:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
        query = _unit_rows((np.asarray(state, dtype=np.float32) / self.state_scale)[None, :])[0]
        local, sims = self._index(group).search(query, self.config.pool_size)
        return self.groups[group][local], sims

    def credit(self, state: np.ndarray, diffs: np.ndarray, *, agent_label: str | None = None,
               types: list[str] | None = None, details: bool = True) -> Credit:
        """Credit each pooled corpus pair to its most relevant candidate; priors per candidate.

        `diffs` is (m, F): for each candidate, state vector after it minus before.
        """
        diffs = np.atleast_2d(np.asarray(diffs, dtype=np.float32))
        m = len(diffs)
        ids, s_cos = self.pool(state, agent_label)
        if len(ids) == 0 or m == 0:
            return Credit(np.full(m, np.nan), np.zeros(m, dtype=np.int64),
                          [np.empty(0, np.int64)] * m, [np.empty(0, np.float32)] * m,
                          np.zeros(m))
        a_cos = action_unit(diffs, self.action_scale) @ self.a_units[ids].T  # (m, k)
        w = self.config.type_weight
        if w > 0 and types is not None:
            same = np.asarray(types)[:, None] == self.types[ids][None, :]
            a_cos = (1 - w) * a_cos + w * same
        relevance = (s_cos[None, :] + a_cos) / 2  # (m, k), eq. 3
        owner = np.argmax(relevance, axis=0)  # each pair credited once
        r_own = relevance[owner, np.arange(len(ids))]
        u = self.utility[ids] if self.config.utility == "result" else np.ones(len(ids), np.float32)
        value = r_own * u  # eq. 4
        count = np.bincount(owner, minlength=m)
        total = np.bincount(owner, weights=value, minlength=m)
        prior = np.where(count > 0, total / np.maximum(count, 1), np.nan)  # eq. 5
        pairs, rel = [], []
        for i in range(m if details else 0):
            mine = np.flatnonzero(owner == i)
            mine = mine[np.argsort(-r_own[mine], kind="stable")]
            pairs.append(self.rows[ids[mine]])
            rel.append(r_own[mine])
        # Support: the same mass summed instead of averaged, so that an action the recorded
        # players chose often outweighs one they chose rarely, with a pair whose best match is
        # shared (eight moves with one effect) split between the tied candidates rather than
        # all given to the first of them.
        tied = relevance >= r_own[None, :] - 1e-6
        support = (tied / tied.sum(axis=0, keepdims=True)) @ value
        return Credit(prior=prior, count=count, pairs=pairs, relevance=rel, support=support)
