"""Statistics of an ablation table: win rates with standard errors and paired comparisons.

Plain functions on plain sequences, so each can be checked against numbers worked by hand.
Two methods are compared on the games (seeds) both played:
- wins: an exact sign test on the discordant pairs (McNemar's exact test: of the pairs where
  exactly one of the two won, is the split 50/50?) and a paired bootstrap interval of the
  win-rate difference (seeds resampled with replacement, percentile interval, by scipy);
- final score margins (mine minus the opponent's), because short games often end undecided:
  the mean paired difference with its standard error, and the Wilcoxon signed-rank test (zero
  differences dropped; exact for small samples without ties, as scipy chooses). Signed ranks
  rather than a t-test because score margins are skewed with heavy tails.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

SIGNIFICANT = 0.05
"""The p-value below which a report calls a paired difference seen (one comparison among
several on one block of seeds: a seen difference is for fresh seeds to confirm)."""


def win_tests(pair) -> tuple[bool, bool]:
    """What each of a paired test's (`report.PairTest`) two win tests sees: (the exact sign
    test below `SIGNIFICANT`, the bootstrap interval of the win-% difference clear of zero)."""
    return (pair.sign_p < SIGNIFICANT,
            pair.win_diff_low_pct > 0 or pair.win_diff_high_pct < 0)


def wins_differ(pair) -> bool:
    """Whether a paired test sees a win-rate difference: both win tests do (`win_tests`). The
    one rule of the verdicts in words and of the figures' answers."""
    return all(win_tests(pair))


def win_tests_disagree(pair) -> bool:
    """Whether exactly one of the two win tests sees a difference: a borderline run the
    verdicts name as such, not as a null."""
    sign, interval = win_tests(pair)
    return sign != interval


def margins_differ(pair) -> bool:
    """Whether a paired test sees a score-margin difference (signed-rank p)."""
    return pair.margin_p < SIGNIFICANT


def win_rate(wins: int, games: int) -> tuple[float, float]:
    """(p, standard error sqrt(p (1 - p) / n)) of `wins` in `games`; (0, 0) for no games."""
    if games <= 0:
        return 0.0, 0.0
    p = wins / games
    return p, math.sqrt(p * (1.0 - p) / games)


def wilson_interval(wins: int, games: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a win rate (never of zero width, unlike p +- se at 0 or n wins);
    (nan, nan) for no games."""
    if games <= 0:
        return math.nan, math.nan
    from scipy.stats import binomtest

    ci = binomtest(int(wins), int(games)).proportion_ci(confidence, method="wilson")
    return float(ci.low), float(ci.high)


def mean_se(values: Sequence[float]) -> tuple[float, float]:
    """(mean, standard error with the n - 1 sample deviation); se is nan for fewer than two."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return math.nan, math.nan
    if x.size == 1:
        return float(x[0]), math.nan
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size))


def sign_test(a_only: int, b_only: int) -> float:
    """Two-sided exact p-value that `a_only` of the `a_only + b_only` discordant pairs went to A
    under a fair coin; 1.0 when there are none."""
    n = a_only + b_only
    if n == 0:
        return 1.0
    from scipy.stats import binomtest

    return float(binomtest(a_only, n, 0.5, alternative="two-sided").pvalue)


def discordant(a: Sequence[bool], b: Sequence[bool]) -> tuple[int, int]:
    """(pairs A won and B did not, pairs B won and A did not)."""
    x, y = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    return int(np.sum(x & ~y)), int(np.sum(~x & y))


def paired_bootstrap(a: Sequence[float], b: Sequence[float], *, reps: int = 10_000,
                     seed: int = 0, level: float = 0.95) -> tuple[float, float, float]:
    """(mean(a - b), low, high): percentile interval of the paired mean difference over `reps`
    resamples of the pairs (`scipy.stats.bootstrap`, seeded); with 0/1 wins it is the win-rate
    difference."""
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if d.size == 0:
        return math.nan, math.nan, math.nan
    low, high = _bootstrap((d,), _mean, reps=reps, seed=seed, level=level)
    return float(d.mean()), low, high


def difference_bootstrap(a: Sequence[float], b: Sequence[float], *, reps: int = 10_000,
                         seed: int = 0, level: float = 0.95) -> tuple[float, float, float]:
    """(mean(a) - mean(b), low, high) for two independent samples, each resampled on its own;
    the interval is nan when either has fewer than two values."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.size == 0 or y.size == 0:
        return math.nan, math.nan, math.nan
    diff = float(x.mean() - y.mean())
    if x.size < 2 or y.size < 2:
        return diff, math.nan, math.nan
    low, high = _bootstrap((x, y), _mean_difference, reps=reps, seed=seed, level=level)
    return diff, low, high


def _mean(x, axis=-1):
    return np.mean(x, axis=axis)


def _mean_difference(x, y, axis=-1):
    return np.mean(x, axis=axis) - np.mean(y, axis=axis)


def _bootstrap(data: tuple, statistic, *, reps: int, seed: int,
               level: float) -> tuple[float, float]:
    from scipy.stats import bootstrap

    if all(np.all(x == x[0]) for x in data):  # no spread: every resample is the same
        value = float(statistic(*data))
        return value, value
    res = bootstrap(data, statistic, n_resamples=reps, confidence_level=level,
                    method="percentile", vectorized=True, rng=np.random.default_rng(seed))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def signed_rank_test(d: Sequence[float]) -> float:
    """Two-sided Wilcoxon signed-rank p-value of paired differences `d` (zeros dropped); 1.0
    when no difference is non-zero."""
    x = np.asarray(d, dtype=float)
    x = x[x != 0]
    if x.size == 0:
        return 1.0
    from scipy.stats import wilcoxon

    return float(wilcoxon(x, zero_method="wilcox", alternative="two-sided").pvalue)


def share_bootstrap(text: Sequence[float], control: Sequence[float], none: Sequence[float], *,
                    reps: int = 10_000, seed: int = 0,
                    level: float = 0.95) -> tuple[float, float, float, float]:
    """(share, low, high, defined): the semantic share (text - control) / (text - none) of a
    gain over paired games, with a percentile interval over `reps` resamples of the games.

    The share is a ratio of gains, so it means something only where text beats no text: it is
    nan (with a nan interval) when mean(text - none) <= 0. `defined` is the fraction of
    resamples where text beats no text; a resample where it does not counts as a share of
    +inf or -inf (by the sign of text - control), so an end of the interval is infinite (the
    interval unbounded) when the gain it divides by is not clear of zero."""
    t, c, n = (np.asarray(x, dtype=float) for x in (text, control, none))
    if not (t.size == c.size == n.size) or t.size == 0:
        raise ValueError("share_bootstrap needs three paired samples of one non-zero length")
    gain, meaning = t - n, t - c
    share = float(meaning.mean() / gain.mean()) if gain.mean() > 0 else math.nan
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, t.size, size=(reps, t.size))
    g, m = gain[idx].mean(axis=1), meaning[idx].mean(axis=1)
    ok = g > 0
    defined = float(ok.mean())
    if math.isnan(share):
        return share, math.nan, math.nan, defined
    ratio = np.where(ok, m / np.where(ok, g, 1.0), np.where(m >= 0, math.inf, -math.inf))
    ratio.sort()
    tail = (1 - level) / 2
    low = ratio[int(math.floor(tail * reps))]
    high = ratio[min(reps - 1, int(math.ceil((1 - tail) * reps)) - 1)]
    return share, float(low), float(high), defined
