"""The ablation's figures: win % per arm (Wilson 95% intervals), score margin, each arm's paired
difference from a reference arm, and win % against seconds per step; `png` turns one into bytes.

Drawn on matplotlib `Figure` objects with the Agg canvas directly (no pyplot), so nothing
global changes in the calling process and no display is needed.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nlmcs.experiments.ablation.report import ArmSummary, PairTest


def png(fig) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120)
    return buf.getvalue()


def _nan0(x: float) -> float:
    return 0.0 if x is None or math.isnan(x) else x


def winrate_figure(arms: Sequence[ArmSummary], pairs: Sequence[PairTest] = (), *,
                   title: str = "", reference: str | None = None):
    """Win % per arm with its Wilson 95% interval; the mean final score margin (mine minus the
    opponent's; short games often end undecided) with its standard error; and, with paired
    tests, each other arm's win-% difference from `reference` (default: the first arm) with its
    paired-bootstrap 95% interval."""
    from matplotlib.figure import Figure

    from nlmcs.experiments.ablation.stats import wilson_interval

    labels = [a.arm for a in arms]
    x = list(range(len(arms)))
    reference = reference or (labels[0] if labels else None)
    diffs = _differences(pairs, reference, labels)
    panels = 3 if diffs else 2
    fig = Figure(figsize=(max(6.0, 1.6 * len(arms) + 2) * panels / 2, 4.4), layout="constrained")
    axes = fig.subplots(1, panels)
    left, right = axes[0], axes[1]
    low, high = zip(*(wilson_interval(a.wins, a.games) for a in arms), strict=True)
    pct = [a.win_pct for a in arms]
    left.bar(x, pct, color="tab:blue")
    left.errorbar(x, pct, yerr=[[p - 100 * lo for p, lo in zip(pct, low, strict=True)],
                                [100 * hi - p for p, hi in zip(pct, high, strict=True)]],
                  fmt="none", ecolor="black", capsize=4)
    left.set_ylabel("win % (Wilson 95% interval)")
    left.set_ylim(0, 100)
    right.bar(x, [_nan0(a.margin) for a in arms], yerr=[_nan0(a.margin_se) for a in arms],
              capsize=4, color="tab:orange")  # fmt: skip
    right.axhline(0, color="black", linewidth=0.8)
    right.set_ylabel("final score margin (± s.e.)")
    for ax in (left, right):
        ax.set_xticks(x, labels, rotation=30, ha="right")
    if diffs:
        ax = axes[2]
        names = [d[0] for d in diffs]
        mid = [d[1] for d in diffs]
        ax.errorbar(mid, range(len(diffs)), xerr=[[m - d[2] for m, d in zip(mid, diffs,
                                                                              strict=True)],
                                                  [d[3] - m for m, d in zip(mid, diffs,
                                                                            strict=True)]],
                    fmt="o", capsize=4, color="tab:green")
        ax.axvline(0, color="black", linewidth=0.8)
        ax.set_yticks(range(len(diffs)), names)
        ax.invert_yaxis()  # the arms in table order, top down
        ax.set_xlabel(f"win % minus {reference}'s\n(paired, 95% interval)")
    games = ", ".join(f"{a.arm} {a.games}" for a in arms)
    lines = [title] if title else []
    if diffs:
        lines.append(f"Does {reference} win more often than the others on the same seeds? "
                     + _answer(pairs, reference))
    lines.append(f"games per arm: {games}")
    fig.suptitle("\n".join(lines), fontsize=9)
    return fig


def _answer(pairs, reference: str) -> str:
    """The figure's answer in words, by the rule of the verdicts (`stats.wins_differ`)."""
    from nlmcs.experiments.ablation.stats import win_tests_disagree, wins_differ

    mine = [t for t in pairs if reference in (t.a, t.b)]
    seen, borderline = [], []
    for t in mine:
        other = t.b if t.a == reference else t.a
        ahead = (t.win_diff_pct > 0) == (t.a == reference)
        words = f"{'ahead of' if ahead else 'behind'} {other}"
        if wins_differ(t):
            seen.append(words)
        elif win_tests_disagree(t):
            borderline.append(f"{reference} {words}, sign p {t.sign_p:.2g}")
    size = f"{min(t.pairs for t in mine)} pairs" if mine else "these pairs"
    if not seen and borderline:
        return (f"No difference both win tests see at {size}; they disagree on "
                f"{'; '.join(borderline)} (a lead for fresh seeds, not a finding).")
    if not seen:
        return f"No difference seen at {size} (every interval includes 0)."
    return f"{reference} is {', '.join(seen)} at {size} (p < 0.05; confirm on fresh seeds)."


def _differences(pairs, reference, labels) -> list[tuple[str, float, float, float]]:
    """(arm, win-% difference from the reference, low, high) for every other arm."""
    out = []
    for arm in labels:
        if arm == reference:
            continue
        for t in pairs:
            if (t.a, t.b) == (arm, reference):
                out.append((arm, t.win_diff_pct, t.win_diff_low_pct, t.win_diff_high_pct))
            elif (t.a, t.b) == (reference, arm):
                out.append((arm, -t.win_diff_pct, -t.win_diff_high_pct, -t.win_diff_low_pct))
    return out


def strength_vs_time(arms: Sequence[ArmSummary], *, title: str = ""):
    """Win % (Wilson 95% interval, as the win-rate figure and the tables) against mean seconds
    per real step, one line per method through its roll-out budgets (each point labelled with
    its budget and its games)."""
    from matplotlib.figure import Figure

    from nlmcs.experiments.ablation.stats import wilson_interval

    fig = Figure(figsize=(6.5, 4.5), layout="constrained")
    ax = fig.subplots()
    for method in dict.fromkeys(a.method for a in arms):
        pts = sorted((a for a in arms if a.method == method and not math.isnan(
            a.seconds_per_step)), key=lambda a: a.rollouts)  # fmt: skip
        if not pts:
            continue
        bounds = [wilson_interval(a.wins, a.games) for a in pts]
        ax.errorbar([a.seconds_per_step for a in pts], [a.win_pct for a in pts],
                    yerr=[[a.win_pct - 100 * lo for a, (lo, _) in zip(pts, bounds, strict=True)],
                          [100 * hi - a.win_pct for a, (_, hi) in zip(pts, bounds,
                                                                        strict=True)]],
                    marker="o", capsize=3, label=method)
        for a in pts:
            ax.annotate(f"{a.rollouts} (n={a.games})", (a.seconds_per_step, a.win_pct),
                        fontsize=7, xytext=(3, 3), textcoords="offset points")  # fmt: skip
    ax.set_xscale("log")
    # plain numbers at the decades and no labels between them: log axes spanning less than a
    # decade otherwise crowd their minor labels into each other
    from matplotlib.ticker import FormatStrFormatter, NullFormatter

    ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("seconds per real step")
    ax.set_ylabel("win % (Wilson 95% interval)")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=8)
    question = "How does each method's win rate grow with its time per step? (points: roll-outs)"
    ax.set_title(f"{title}\n{question}" if title else question, fontsize=9)
    return fig
