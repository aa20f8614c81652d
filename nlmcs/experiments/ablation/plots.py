"""The ablation's figures as PNG bytes: win % per arm, and win % against seconds per step.

Drawn on matplotlib `Figure` objects with the Agg canvas directly (no pyplot), so nothing
global changes in the calling process and no display is needed.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nlmcs.experiments.ablation.report import ArmSummary


def _png(fig) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120)
    return buf.getvalue()


def _nan0(x: float) -> float:
    return 0.0 if x is None or math.isnan(x) else x


def winrate_figure(arms: Sequence[ArmSummary]) -> bytes:
    """Win % with standard-error bars per arm, and beside it the mean final score margin (mine
    minus the opponent's) with its standard error: short games often end undecided."""
    from matplotlib.figure import Figure

    labels = [a.arm for a in arms]
    x = range(len(arms))
    fig = Figure(figsize=(max(6.0, 1.6 * len(arms) + 2), 4.0), layout="constrained")
    left, right = fig.subplots(1, 2)
    left.bar(x, [a.win_pct for a in arms], yerr=[a.win_se_pct for a in arms], capsize=4,
             color="tab:blue")  # fmt: skip
    left.set_ylabel("win % (± s.e.)")
    left.set_ylim(0, 100)
    right.bar(x, [_nan0(a.margin) for a in arms], yerr=[_nan0(a.margin_se) for a in arms],
              capsize=4, color="tab:orange")  # fmt: skip
    right.axhline(0, color="black", linewidth=0.8)
    right.set_ylabel("final score margin (± s.e.)")
    for ax in (left, right):
        ax.set_xticks(list(x), labels, rotation=30, ha="right")
    games = ", ".join(f"{a.arm} {a.games}" for a in arms)
    fig.suptitle(f"games per arm: {games}", fontsize=9)
    return _png(fig)


def strength_vs_time(arms: Sequence[ArmSummary]) -> bytes:
    """Win % (± s.e.) against mean seconds per real step, one line per method through its
    roll-out budgets (each point labelled with its budget)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.5, 4.5), layout="constrained")
    ax = fig.subplots()
    for method in dict.fromkeys(a.method for a in arms):
        pts = sorted((a for a in arms if a.method == method and not math.isnan(
            a.seconds_per_step)), key=lambda a: a.rollouts)  # fmt: skip
        if not pts:
            continue
        ax.errorbar([a.seconds_per_step for a in pts], [a.win_pct for a in pts],
                    yerr=[a.win_se_pct for a in pts], marker="o", capsize=3, label=method)
        for a in pts:
            ax.annotate(str(a.rollouts), (a.seconds_per_step, a.win_pct), fontsize=7,
                        xytext=(3, 3), textcoords="offset points")  # fmt: skip
    ax.set_xscale("log")
    ax.set_xlabel("seconds per real step")
    ax.set_ylabel("win % (± s.e.)")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=8)
    return _png(fig)
