"""Benchmark of prior computation: milliseconds per decision for corpora of 10^4 to 10^6 pairs.

Sizing needs corpora far larger than a recorded one, so the decisions are synthetic, drawn from a
seed: states from a mixture of clustered situations (real game states lie on a narrow manifold, not
uniformly in feature space), action vectors from a few dozen effect prototypes plus noise, agent
words from ten kinds. A "decision" is one prior call: pool the nearest states for one live state,
then credit the pool to 8 candidate actions. Index build time is reported apart.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np
import psutil

from corpus.similarity import CorpusSimilarity, SimilarityConfig

AGENT_WORDS = ("settlers", "workers", "warriors", "phalanx", "archers", "horsemen", "legion",
               "catapult", "city", "civilization")


@dataclass(frozen=True)
class SyntheticCorpus:
    states: np.ndarray
    actions: np.ndarray
    labels: np.ndarray
    types: np.ndarray
    result: np.ndarray


def synthetic_corpus(n: int, *, features: int = 64, seed: int = 0) -> SyntheticCorpus:
    rng = np.random.default_rng(seed)
    centres = rng.gamma(2.0, 2.0, size=(256, features)).astype(np.float32)
    which = rng.integers(len(centres), size=n)
    states = centres[which] * rng.uniform(0.7, 1.3, size=(n, 1)).astype(np.float32)
    states += rng.normal(scale=0.3, size=(n, features)).astype(np.float32)
    np.maximum(states, 0, out=states)
    protos = np.zeros((32, features), dtype=np.float32)
    for p in protos:
        idx = rng.choice(features, size=3, replace=False)
        p[idx] = rng.normal(scale=2.0, size=3)
    kind = rng.integers(len(protos), size=n)
    actions = protos[kind] + rng.normal(scale=0.05, size=(n, features)).astype(np.float32)
    actions[kind < 4] = 0.0  # actions that change nothing the state vector measures
    return SyntheticCorpus(
        states=states, actions=actions, labels=np.asarray(AGENT_WORDS)[rng.integers(10, size=n)],
        types=np.char.add("t", kind.astype(str)), result=rng.choice([0.0, 1.0], size=n),
    )


def bench_priors(*, sizes=(10_000, 100_000, 1_000_000), features: int = 64, queries: int = 200,
                 candidates: int = 8, indexes=("exact", "ivf"), config: SimilarityConfig | None
                 = None, seed: int = 0) -> list[dict]:
    """One row per (size, index): build seconds, mean and p95 ms per decision, resident memory."""
    base = config or SimilarityConfig()
    rows = []
    for n in sizes:
        data = synthetic_corpus(n, features=features, seed=seed)
        rng = np.random.default_rng(seed + 1)
        probe = rng.choice(n, size=queries)
        live_states = data.states[probe] * rng.uniform(0.9, 1.1, size=(queries, 1))
        live_diffs = data.actions[rng.choice(n, size=(queries, candidates))]
        for kind in indexes:
            cfg = replace(base, index=kind, utility="result")
            start = time.perf_counter()
            sim = CorpusSimilarity(data.states, data.actions, action_types=data.types,
                                   agent_labels=data.labels, utility=data.result, config=cfg)
            sim.build()
            build_s = time.perf_counter() - start
            times = []
            for q in range(queries):
                t0 = time.perf_counter()
                sim.credit(live_states[q], live_diffs[q], agent_label=data.labels[probe[q]],
                           details=False)
                times.append((time.perf_counter() - t0) * 1000)
            rows.append({
                "decisions": n, "index": kind, "by_agent": cfg.by_agent,
                "pool": cfg.pool_size, "build_s": round(build_s, 2),
                "ms_per_decision": round(float(np.mean(times)), 3),
                "p95_ms": round(float(np.percentile(times, 95)), 3),
                "rss_mb": round(psutil.Process().memory_info().rss / 2**20),
            })
            del sim
    return rows
