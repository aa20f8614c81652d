"""The variant runs' extra table: how often each arm founded its cities on the sacred terrain.

Per arm, player 0's foundings over its games and the share on the sacred terrain, against two
references, each with an exact two-sided binomial test of the arm's count:
- chance: the share a founding on a random land tile would have, the land share of the sacred
  terrain on each game's map, weighted by the arm's foundings in that game;
- blind: the share of the `oracle-blind` arm (the built-in AI without the rule) in the same run,
  when it played.
The test treats foundings as independent draws (they are not quite: one game's cities share a
map), so its p-values are a guide, not exact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

BLIND = "oracle-blind"


@dataclass
class FoundingSummary:
    arm: str
    games: int
    reachable_pct: float
    """Games in which a sacred tile lay over land from player 0's start."""
    foundings: int
    sacred: int
    share: float
    chance_share: float
    chance_p: float
    blind_share: float
    blind_p: float


def _binom_p(k: int, n: int, p: float) -> float:
    if n == 0 or math.isnan(p):
        return math.nan
    from scipy.stats import binomtest

    return float(binomtest(k, n, min(max(p, 0.0), 1.0)).pvalue)


def founding_summaries(rows: list[dict], order: list[str]) -> list[FoundingSummary]:
    """One summary per arm whose rows record foundings (variant games)."""
    found = {arm: [r["foundings"] for r in rows if r["arm"] == arm and r.get("foundings")]
             for arm in order}
    blind = found.get(BLIND) or []
    blind_n = sum(f["cities"] for f in blind)
    blind_share = sum(f["sacred"] for f in blind) / blind_n if blind_n else math.nan
    out = []
    for arm in order:
        mine = found[arm]
        if not mine:
            continue
        n = sum(f["cities"] for f in mine)
        k = sum(f["sacred"] for f in mine)
        chance = (sum(f["cities"] * (f["chance_share"] or 0.0) for f in mine) / n
                  if n else math.nan)
        out.append(FoundingSummary(
            arm, len(mine), 100 * sum(bool(f["sacred_reachable"]) for f in mine) / len(mine),
            n, k, k / n if n else math.nan, chance, _binom_p(k, n, chance),
            blind_share, math.nan if arm == BLIND else _binom_p(k, n, blind_share)))
    return out


def _f(x: float, fmt: str) -> str:
    return "-" if x is None or math.isnan(x) else format(x, fmt)


def founding_markdown(summaries: list[FoundingSummary], variant: str) -> str:
    lines = ["", f"Foundings on the sacred terrain ({variant}): player 0's cities founded "
             "over the arm's games, the share on the game's sacred terrain, and exact binomial "
             "tests of that count against the chance share (the sacred terrain's share of the "
             "land on each map, weighted by the arm's foundings) and against the oracle-blind "
             "arm's share (the built-in AI without the rule).", "",
             "| arm | games | sacred reachable % | foundings | on sacred | share | chance share | "
             "p vs chance | blind share | p vs blind |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for s in summaries:
        lines.append(f"| {s.arm} | {s.games} | {s.reachable_pct:.0f} | {s.foundings} | "
                     f"{s.sacred} | {_f(s.share, '.3f')} | {_f(s.chance_share, '.3f')} | "
                     f"{_f(s.chance_p, '.3g')} | {_f(s.blind_share, '.3f')} | "
                     f"{_f(s.blind_p, '.3g')} |")
    return "\n".join(lines) + "\n"
