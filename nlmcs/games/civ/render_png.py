"""A PNG picture of a civ state for reports: terrain colours, rivers, cities and units."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from nlmcs.files import atomic_output
from nlmcs.games.civ.tables import DELTAS, IRRIGATION, MINE, ROAD

TERRAIN_COLOURS = {
    "grassland": (0.45, 0.75, 0.30), "plains": (0.80, 0.78, 0.40), "desert": (0.93, 0.85, 0.55),
    "tundra": (0.70, 0.72, 0.70), "forest": (0.15, 0.45, 0.15), "hills": (0.55, 0.50, 0.30),
    "mountains": (0.45, 0.40, 0.38), "swamp": (0.35, 0.45, 0.40), "jungle": (0.20, 0.55, 0.25),
    "ocean": (0.20, 0.35, 0.70),
}
PLAYER_COLOURS = ("#d62728", "#1f77b4", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
                  "#bcbd22")


def render_png(s, out: str | Path, *, tile_px: int = 24) -> Path:
    """Draw the state and write it atomically to `out`."""
    import matplotlib.pyplot as plt

    fig = _figure(s, tile_px)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        with atomic_output(out, binary=True) as fh:
            fig.savefig(fh, format="png", bbox_inches="tight")
    finally:
        plt.close(fig)
    return out


def render_rgb(s, *, tile_px: int = 24) -> np.ndarray:
    """The same picture as an (H, W, 3) uint8 array (an environment's `rgb_array` frame)."""
    import matplotlib.pyplot as plt

    fig = _figure(s, tile_px)
    try:
        fig.canvas.draw()
        return np.asarray(fig.canvas.buffer_rgba())[..., :3].copy()
    finally:
        plt.close(fig)


def _figure(s, tile_px: int):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    m, T = s.map, s.tables
    img = np.zeros((m.height, m.width, 3))
    for t in range(m.n):
        img[t // m.width, t % m.width] = TERRAIN_COLOURS.get(T.terrain_names[m.terr[t]], (0, 0, 0))
    dpi = 100
    fig, ax = plt.subplots(figsize=(m.width * tile_px / dpi, m.height * tile_px / dpi + 0.5),
                           dpi=dpi)
    ax.imshow(img, interpolation="nearest")
    for t in range(m.n):
        x, y = t % m.width, t // m.width
        if m.riv[t]:
            # Join each river tile to its river (or ocean) neighbours on the four sides.
            linked = False
            for d in (0, 2, 4, 6):
                nb = m.neighbors[t][d]
                if nb >= 0 and (m.riv[nb] or m.ocean[nb]):
                    nx, ny = x + DELTAS[d][0], y + DELTAS[d][1]  # past the seam of a wrap
                    ax.plot([x, (x + nx) / 2], [y, (y + ny) / 2], color="#6fa8ff", lw=2)
                    linked = True
            if not linked:
                ax.plot([x - 0.3, x + 0.3], [y, y], color="#6fa8ff", lw=2)
        if m.res[t] >= 0:
            ax.plot(x + 0.3, y - 0.3, marker="*", color="gold", ms=4)
        imp = s.improvements[t]
        if imp & IRRIGATION:
            ax.plot(x - 0.3, y + 0.3, marker="+", color="cyan", ms=4)
        if imp & MINE:
            ax.plot(x - 0.3, y + 0.3, marker="x", color="black", ms=4)
        if imp & ROAD:
            ax.plot([x - 0.5, x + 0.5], [y + 0.4, y + 0.4], color="#5a3d1e", lw=1)
    for c in s.cities.values():
        x, y = c.tile % m.width, c.tile // m.width
        colour = PLAYER_COLOURS[c.owner % len(PLAYER_COLOURS)]
        ax.add_patch(plt.Rectangle((x - 0.45, y - 0.45), 0.9, 0.9, fill=True, color=colour))
        ax.text(x, y, str(c.size), ha="center", va="center", color="white", fontsize=7)
    for tile, stack in s.tile_units.items():
        if tile in s.city_at:
            continue
        u = s.units[stack[0]]
        x, y = tile % m.width, tile // m.width
        colour = PLAYER_COLOURS[u.owner % len(PLAYER_COLOURS)]
        ax.add_patch(plt.Circle((x, y), 0.3, color=colour))
        ax.text(x, y, T.unit_names[u.kind][0].upper(), ha="center", va="center", color="white",
                fontsize=6)
    scores = ", ".join(f"player {p}: {s.score(p):.1f}" for p in range(s.num_players))
    ax.set_title(f"turn {s.turn}  |  score {scores}", fontsize=8)
    ax.set_xticks([])
    ax.set_yticks([])
    return fig
