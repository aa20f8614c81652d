"""Relevance in numbers: which sentences each unit type read, step by step; how the sampled
sentences' words were labelled, by part of speech; and a few measures of a log compared with a
second log (or one ablation arm with another, game by game) with 95% intervals.

The decision log lists each decision's top 20 sentences (and any tied with the 20th); the grid
gives a sentence a decision does not list that decision's left-over probability, shared evenly.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from nlmcs.experiments.ablation import stats
from nlmcs.experiments.relevance.log import DecisionLog, unit_type

MEASURES = {
    "entropy": "normalised relevance entropy (1 = uniform)",
    "null_first": "NULL (no sentence) ranked first",
    "labelled": "sampled words labelled action or state",
}
"""Per-decision measures, each a number in [0, 1]: name -> what it is."""

LABELS = ("action", "state", "background")


def decision_measures(rec: dict) -> dict[str, float]:
    """The measures one decision record carries (a measure it cannot tell is left out)."""
    out: dict[str, float] = {}
    sents = rec.get("sentences")
    if not sents:
        return out
    if rec.get("relevance_entropy") is not None and rec.get("num_candidates", 0) >= 2:
        out["entropy"] = float(rec["relevance_entropy"])
    out["null_first"] = float(sents[0]["id"] < 0)
    labels = rec.get("word_labels")
    if labels:
        out["labelled"] = sum(lab != "background" for _, lab in labels) / len(labels)
    return out


def decision_relevance(rec: dict) -> tuple[float, float, bool] | None:
    """(normalised entropy, top sentence's probability over uniform, uniform?) of a decision
    with two or more candidates (`evaluator.is_uniform`); the logged entropy, else one from a
    whole list; None for a decision with nothing to choose between, or too short a list."""
    from nlmcs.model.evaluator import is_uniform, normalised_entropy

    sents = rec.get("sentences")
    n = rec.get("num_candidates", len(sents or ()))
    if not sents or n < 2:
        return None
    entropy = rec.get("relevance_entropy")
    if entropy is None:
        if len(sents) < n:
            return None
        entropy = normalised_entropy(np.array([s["p"] for s in sents], dtype=float))
    lift = float(sents[0]["p"]) * n
    return float(entropy), lift, is_uniform(entropy, lift)


def relevance_verdict(rec: dict) -> str | None:
    """What a decision's relevance is, in words, for every view: "uniform" (the one rule of
    `evaluator.is_uniform`) with its numbers, or by how much it is not; None where it cannot
    be told (no choice, or no entropy and a partial list)."""
    from nlmcs.model.evaluator import UNIFORM_ENTROPY, UNIFORM_TOP

    found = decision_relevance(rec)
    if found is None:
        return None
    entropy, lift, uniform = found
    if uniform:
        return (f"uniform: no sentence is preferred (normalised entropy {entropy:.3f} >= "
                f"{UNIFORM_ENTROPY}, top sentence {lift:.2f}x uniform <= {UNIFORM_TOP}x); the "
                "order below is arbitrary")
    return (f"not uniform: the top sentence is {lift:.2f}x uniform (normalised entropy "
            f"{entropy:.3f})")


def tied(sents: list[dict]) -> list[bool]:
    """Per listed sentence: is its probability equal to the one before it (a tie, shown so)?"""
    return [i > 0 and s["p"] == sents[i - 1]["p"] for i, s in enumerate(sents)]


RELEVANCE_KEYS = ("decisions", "entropy", "top_lift", "uniform_share")


def game_relevance(decisions: Sequence[dict]) -> dict:
    """What one game's relevance did: decisions with a choice, their median normalised entropy
    and median top-sentence lift over uniform, and the share that were uniform."""
    found = [r for r in map(decision_relevance, decisions) if r is not None]
    if not found:
        return {"decisions": 0, "entropy": None, "top_lift": None, "uniform_share": None}
    entropy, lift, uniform = (np.array(x, dtype=float) for x in zip(*found, strict=True))
    return {"decisions": len(found), "entropy": round(float(np.median(entropy)), 4),
            "top_lift": round(float(np.median(lift)), 3),
            "uniform_share": round(float(uniform.mean()), 4)}


def step_means(log: DecisionLog, measure: str) -> np.ndarray:
    """The measure's mean over each step's decisions (steps without it left out): a step's
    agents share one state, so steps, not decisions, are the units an interval resamples."""
    by_step: dict[int, list[float]] = defaultdict(list)
    for rec in log.decisions:
        value = decision_measures(rec).get(measure)
        if value is not None:
            by_step[rec["step"]].append(value)
    return np.array([np.mean(v) for _, v in sorted(by_step.items())], dtype=float)


def game_mean(log: DecisionLog, measure: str) -> float:
    """The measure's mean over the game's steps; nan when no decision carries it."""
    means = step_means(log, measure)
    return float(means.mean()) if means.size else math.nan


@dataclass(frozen=True)
class Comparison:
    """One measure of A and B, and B - A with its 95% interval."""

    measure: str
    a: float
    b: float
    diff: float
    low: float
    high: float
    n: int  # steps (two logs) or pairs of games (two arms)
    p: float | None = None  # Wilcoxon signed-rank, paired comparisons only

    @property
    def title(self) -> str:
        return MEASURES[self.measure]


def compare_logs(a: DecisionLog, b: DecisionLog, *, seed: int = 0) -> list[Comparison]:
    """Two games (say text and random-text on one seed): each measure's mean over steps, and
    B - A with a bootstrap interval that resamples each game's steps."""
    out = []
    for measure in MEASURES:
        x, y = step_means(a, measure), step_means(b, measure)
        if not x.size or not y.size:
            continue
        diff, low, high = stats.difference_bootstrap(y, x, seed=seed)
        out.append(Comparison(measure, float(x.mean()), float(y.mean()), diff, low, high,
                              min(x.size, y.size)))
    return out


def compare_games(a: Sequence[DecisionLog], b: Sequence[DecisionLog], *,
                  seed: int = 0) -> list[Comparison]:
    """Two arms over the same games (`a[i]` and `b[i]` share a seed): per-game means, B - A
    paired by game, with a paired bootstrap interval and the signed-rank p-value."""
    out = []
    for measure in MEASURES:
        pairs = [(game_mean(x, measure), game_mean(y, measure)) for x, y in zip(a, b, strict=True)]
        pairs = [(x, y) for x, y in pairs if not (math.isnan(x) or math.isnan(y))]
        if not pairs:
            continue
        xs, ys = np.array(pairs).T
        diff, low, high = stats.paired_bootstrap(ys, xs, seed=seed)
        out.append(Comparison(measure, float(xs.mean()), float(ys.mean()), diff, low, high,
                              len(pairs), stats.signed_rank_test(ys - xs)))
    return out


@dataclass(frozen=True)
class Grid:
    """Mean relevance (times uniform) of `sentences` (rows) at `steps` (columns) for one unit
    type."""

    unit: str
    sentences: list[int]  # sentence ids, -1 for NULL
    texts: list[str]
    steps: list[int]
    values: np.ndarray  # (len(sentences), len(steps))
    decisions: int


def unit_types(log: DecisionLog, *, limit: int = 6) -> list[str]:
    """The unit types with text decisions, most decisions first."""
    counts = Counter(unit_type(r) for r in log.decisions if r.get("sentences"))
    return [u for u, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))][:limit]


def relevance_grid(log: DecisionLog, unit: str, *, rows: int = 12) -> Grid:
    """The `rows` sentences with the most relevance over the game for `unit`, by step: each cell
    the mean over that step's decisions of this unit type of the sentence's probability times
    the decision's number of candidates (1 = what a uniform pick gives it). Scaled so, a manual
    and its twin compare fairly: the twin spreads an agent's word over more sentences, so its
    raw probabilities are smaller even where nothing was learned.

    A decision lists its top 20 sentences only; a sentence it does not list gets the probability
    left over, shared evenly by the candidates it does not list (exact when relevance is
    uniform, never above the 20th's)."""
    recs = [r for r in log.decisions if r.get("sentences") and unit_type(r) == unit]
    steps = sorted({r["step"] for r in recs})
    col = {t: j for j, t in enumerate(steps)}
    totals: Counter = Counter()
    texts: dict[int, str] = {}
    for r in recs:
        n = r.get("num_candidates") or len(r["sentences"])
        for s in r["sentences"]:
            texts.setdefault(int(s["id"]), s.get("text") or "NULL (no sentence)")
            totals[int(s["id"])] += float(s["p"]) * n
    chosen = [sid for sid, _ in sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))][:rows]
    row = {sid: i for i, sid in enumerate(chosen)}
    sums = np.zeros((len(chosen), len(steps)))
    counts = np.zeros(len(steps))
    for r in recs:
        j = col[r["step"]]
        counts[j] += 1
        listed = {int(s["id"]): float(s["p"]) for s in r["sentences"]}
        n = r.get("num_candidates") or len(listed)
        rest = max(0.0, 1.0 - sum(listed.values())) / max(1, n - len(listed))
        for sid, i in row.items():
            sums[i, j] += listed.get(sid, rest) * n
    values = sums / np.maximum(counts, 1)
    return Grid(unit, chosen, [texts[s] for s in chosen], steps, values, len(recs))


def pos_labels(log: DecisionLog) -> dict[str, Counter]:
    """Part of speech -> how often its words in the sampled sentences were labelled action,
    state or background; empty for a log written before records carried `word_pos`."""
    out: dict[str, Counter] = defaultdict(Counter)
    for r in log.decisions:
        labels, pos = r.get("word_labels"), r.get("word_pos")
        if not labels or not pos or len(pos) != len(labels):
            continue
        for (_, label), tag in zip(labels, pos, strict=True):
            out[str(tag)][str(label)] += 1
    return dict(sorted(out.items(), key=lambda kv: -sum(kv[1].values())))


def pooled(logs: Sequence[DecisionLog], *, path) -> DecisionLog:
    """The decisions of several games as one log (for grids and label counts over an arm)."""
    out = DecisionLog(path)
    for lg in logs:
        out.decisions.extend(lg.decisions)
        out.lines.extend(lg.lines)
    out.header = logs[0].header if logs else None
    return out
