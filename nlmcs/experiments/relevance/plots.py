"""The relevance plots (matplotlib, Agg backend) as PNG bytes: entropy over a game, relevance
by sentence and step, word labels by part of speech, two logs compared, and the relevance
accuracy against decoys by step."""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping, Sequence

import numpy as np


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _png(fig) -> bytes:
    plt = _pyplot()
    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    finally:
        plt.close(fig)
    return buf.getvalue()


def data_uri(png: bytes) -> str:
    """A PNG as a data: URI, for an <img> that needs no file beside the page."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def entropy_plot(series: Mapping[str, Mapping[str, Mapping[int, float]]]) -> bytes:
    """Normalised relevance entropy by step. `series` maps a log's label to its
    `summary.entropy_by_step` (the mean over all agents, bold, and one thin line per unit type
    when there is a single log)."""
    plt = _pyplot()
    from matplotlib.ticker import MaxNLocator

    fig, ax = plt.subplots(figsize=(8, 3.6))
    single = len(series) == 1
    for i, (label, by_who) in enumerate(series.items()):
        colour = f"C{i}"
        mean = by_who.get("all", {})
        if mean:
            ax.plot(list(mean), list(mean.values()), color=colour, lw=2.2, marker="o", ms=3,
                    label=f"{label}: all agents" if single else label)
        if single:
            for j, (who, by_step) in enumerate(sorted(by_who.items())):
                if who != "all":
                    ax.plot(list(by_step), list(by_step.values()), lw=1, alpha=0.75,
                            color=f"C{j + 1}", label=who)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.axhline(1.0, color="grey", lw=0.8, ls="--")
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("real step")
    ax.set_ylabel("normalised entropy (1 = uniform)")
    ax.set_title("Relevance entropy over the game")
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, loc="lower left", ncol=2)
    return _png(fig)


def accuracy_plot(*, steps: Sequence[int], manual: Sequence[float], decoy: Sequence[float],
                  null: Sequence[float], accuracy: Sequence[float | None],
                  chance: Sequence[float | None], title: str) -> bytes:
    """Shares of decisions whose arg-max sentence is a manual sentence, a decoy or NULL, by
    step (stacked), with the accuracy manual / (manual + decoy) and its chance level."""
    plt = _pyplot()
    from matplotlib.ticker import MaxNLocator

    fig, ax = plt.subplots(figsize=(8, 4))
    ax.stackplot(steps, manual, decoy, null, colors=("#74c476", "#fd8d3c", "#bdbdbd"),
                 labels=("manual sentence", "decoy sentence", "NULL"), alpha=0.85)
    acc = [float("nan") if a is None else a for a in accuracy]
    base = [float("nan") if c is None else c for c in chance]
    ax.plot(steps, acc, color="black", lw=2, marker="o", ms=3,
            label="accuracy: manual / (manual + decoy)")
    ax.plot(steps, base, color="black", lw=1, ls="--", label="chance (manual share of candidates)")
    ax.set_ylim(0, 1)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("real step")
    ax.set_ylabel("share of decisions")
    ax.set_title(title)
    ax.legend(fontsize=7, loc="lower left")
    ax.grid(alpha=0.3)
    return _png(fig)


RATIO_LIMIT = 8.0
"""The relevance heatmaps' colour scale runs from 1/8 to 8 times uniform on a log scale, the
same on every panel, page and run: a colour means the same ratio wherever it is seen, and
uniform relevance (1) is white. The planted-sentence bar (5x) sits well inside it."""


def grid_plot(grid, *, title: str) -> bytes:
    """A sentence x step heatmap of mean relevance times uniform (`measures.Grid`) on the fixed
    log-ratio scale of `RATIO_LIMIT` (uniform: white; above: red; below: blue; no decision:
    grey)."""
    plt = _pyplot()
    from matplotlib.colors import Normalize

    rows, cols = grid.values.shape
    fig, ax = plt.subplots(figsize=(min(12, 5.5 + 0.18 * cols), 1.3 + 0.36 * max(rows, 1)))
    limit = float(np.log2(RATIO_LIMIT))
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.clip(np.log2(np.asarray(grid.values, dtype=float)), -limit, limit)
    cmap = plt.get_cmap("RdBu_r").with_extremes(bad="#d9d9d9")
    image = ax.imshow(np.ma.masked_invalid(logs), aspect="auto", cmap=cmap,
                      interpolation="nearest", norm=Normalize(vmin=-limit, vmax=limit))
    ax.set_yticks(range(rows))
    ax.set_yticklabels([_short(sid, text) for sid, text in zip(grid.sentences, grid.texts,
                                                               strict=True)], fontsize=9)
    every = max(1, cols // 20)
    ax.set_xticks(range(0, cols, every))
    ax.set_xticklabels([str(t) for t in grid.steps[::every]], fontsize=8)
    ax.set_xlabel("real step")
    ax.set_title(title, fontsize=10)
    ticks = np.arange(-limit, limit + 0.5)
    bar = fig.colorbar(image, ax=ax, label="relevance / uniform (log scale)", fraction=0.04,
                       pad=0.01, ticks=ticks)
    bar.ax.set_yticklabels([_ratio(2.0 ** t) for t in ticks], fontsize=8)
    return _png(fig)


def _ratio(x: float) -> str:
    return f"{x:g}x" if x >= 1 else f"1/{1 / x:g}x"


def _short(sid: int, text: str, width: int = 48) -> str:
    head = "NULL" if sid < 0 else f"#{sid} {text}"
    return head if len(head) <= width else head[: width - 1] + "\u2026"


def pos_plot(tables: Mapping[str, Mapping[str, Mapping[str, int]]], *, top: int = 8) -> bytes:
    """Share of each part of speech's words labelled action / state / background, one panel
    per log (`measures.pos_labels`), the `top` most frequent parts of speech."""
    plt = _pyplot()
    colours = {"action": "#f2b705", "state": "#3bc9db", "background": "#ced4da"}
    # each panel its own rows: a twin's most frequent parts of speech differ from the manual's
    fig, axes = plt.subplots(1, len(tables), figsize=(4.6 * len(tables), 3.4), squeeze=False)
    for ax, (label, table) in zip(axes[0], tables.items(), strict=True):
        tags = list(table)[:top]
        left = np.zeros(len(tags))
        totals = np.array([max(1, sum(table[t].values())) for t in tags], dtype=float)
        for name, colour in colours.items():
            share = np.array([table[t].get(name, 0) for t in tags], dtype=float) / totals
            ax.barh(range(len(tags)), share, left=left, color=colour, label=name)
            left += share
        ax.set_yticks(range(len(tags)))
        ax.set_yticklabels([f"{t} ({int(n)})" for t, n in zip(tags, totals, strict=True)],
                           fontsize=8)
        ax.invert_yaxis()
        ax.set_xlim(0, 1)
        ax.set_xlabel("share of its words")
        ax.set_title(label, fontsize=9)
    axes[0][0].legend(fontsize=7, loc="lower right")
    return _png(fig)


def comparison_plot(rows: Sequence, *, a: str, b: str, title: str) -> bytes:
    """Each measure (`measures.Comparison`) of A and B, and B - A with its 95% interval."""
    plt = _pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 1.4 + 0.7 * len(rows)), sharey=True)
    y = np.arange(len(rows))
    left.scatter([r.a for r in rows], y, color="C0", label=a, zorder=3)
    left.scatter([r.b for r in rows], y, color="C1", label=b, marker="s", zorder=3)
    left.set_yticks(y)
    left.set_yticklabels([r.title for r in rows], fontsize=8)
    left.set_xlim(-0.02, 1.02)
    left.set_xlabel("mean")
    left.legend(fontsize=7, loc="best")
    left.grid(alpha=0.3)
    diffs = np.array([r.diff for r in rows])
    lows = np.array([r.low for r in rows])
    highs = np.array([r.high for r in rows])
    known = ~(np.isnan(lows) | np.isnan(highs))
    right.errorbar(diffs[known], y[known], xerr=[diffs[known] - lows[known],
                                                  highs[known] - diffs[known]],
                   fmt="o", color="black", capsize=4, zorder=3)
    right.scatter(diffs[~known], y[~known], color="black", marker="x", zorder=3)
    right.axvline(0.0, color="grey", lw=0.8, ls="--")
    right.set_xlabel(f"{b} \u2212 {a} (95% interval)")
    right.grid(alpha=0.3)
    left.invert_yaxis()
    fig.suptitle(title, fontsize=10)
    return _png(fig)
