"""The relevance plots (matplotlib, Agg backend) as PNG bytes: entropy over a game, and the
relevance accuracy against decoys by step."""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping, Sequence


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
