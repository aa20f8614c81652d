"""The map: immutable terrain shared by every clone of a game, and its seeded generator.

Terrain, resources and rivers never change during a game (FreeCiv's terrain transformations are not
modelled), so one `MapData` is shared by all clones of a state; only tile improvements are
per-state.
The generator is a small height/moisture/latitude scheme: a continent in the middle, mountains and
hills on the heights, rivers running downhill to the sea, and FreeCiv's resources sprinkled on about
one land tile in nine. A map may wrap east to west, as FreeCiv's WRAPX maps do; every distance and
neighbour then goes the short way round (`MapData.apart`, `MapData.dist`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from nlmcs.errors import UserInputError
from nlmcs.games.base import Action
from nlmcs.games.civ.tables import CARDINAL, DELTAS, MOVE, Tables

MIN_SIDE, MAX_SIDE = 8, 200


@dataclass(frozen=True, eq=False)
class MapData:
    """Terrain of one map. numpy arrays for bulk work, tuples for fast per-tile access."""

    width: int
    height: int
    terrain: np.ndarray  # (n,) int8 terrain index (ruleset order)
    resource: np.ndarray  # (n,) int8 resource index or -1
    river: np.ndarray  # (n,) bool
    terr: tuple[int, ...]
    res: tuple[int, ...]
    riv: tuple[bool, ...]
    ocean: tuple[bool, ...]
    neighbors: tuple[tuple[int, ...], ...]  # 8 directions (N, NE, E, ... NW); -1 off the map
    coast: tuple[bool, ...]  # land next to ocean
    water_source: tuple[bool, ...]  # river here, or ocean/river on a side (irrigation source)
    radius: tuple[tuple[int, ...], ...]  # tiles within the city radius, the centre first
    # Derived per-tile lookups for the hot path, so no loop re-tests the map edge or the sea.
    adjacent: tuple[tuple[int, ...], ...]  # the neighbours on the map, N clockwise
    land_steps: tuple[tuple[tuple[int, int], ...], ...]  # (direction, tile) of land neighbours
    land_adjacent: tuple[tuple[int, ...], ...]  # the land neighbours alone
    land_moves: tuple[tuple[Action, ...], ...]  # the "move" actions towards them
    too_close: tuple[tuple[int, ...], ...]  # tiles nearer than citymindist (Chebyshev)
    apart: tuple[tuple[int, ...], ...]  # columns between x1 and x2, the short way round
    # The sacred terrain of a variant game (`variants`), -1 without one: drawn once per seed,
    # so every clone shares it and the JSON state carries it.
    sacred: int = -1
    wrap_x: bool = False  # the east and west edges meet (FreeCiv's WRAPX)
    # Memo tables filled lazily by the rules (tile outputs, tile words); keyed by tile and
    # improvement bits, so they stay valid for every state on this map.
    tile_cache: dict = field(default_factory=dict, repr=False)
    label_cache: dict = field(default_factory=dict, repr=False)
    rank_cache: dict = field(default_factory=dict, repr=False)  # cities.work_ranks
    ai_cache: dict = field(default_factory=dict, repr=False)
    # The compiled engine's tables of this map (`compiled.board.map_consts`, `compiled.ai`),
    # kept here rather than in a weak dictionary: a weak reference's callback runs when a map is
    # freed, and a signal handled inside it would be lost (Python ignores its exception).
    compiled: dict = field(default_factory=dict, repr=False)

    @property
    def n(self) -> int:
        return self.width * self.height

    def xy(self, tile: int) -> tuple[int, int]:
        return tile % self.width, tile // self.width

    def dist(self, a: int, b: int) -> int:
        """Chebyshev distance between two tiles (moves of a unit over open land), the short way
        round when the map wraps."""
        w = self.width
        return max(self.apart[a % w][b % w], abs(a // w - b // w))


def column(x: int, width: int, wrap_x: bool) -> int:
    """Column x on a map `width` wide: round the seam when it wraps, -1 past a flat map's edge."""
    if wrap_x:
        return x % width
    return x if 0 <= x < width else -1


def chebyshev_box(tile: int, r: int, width: int, height: int, wrap_x: bool) -> tuple[int, ...]:
    """The tiles within `r` of `tile` (Chebyshev), row by row: city spacing's test."""
    x, y = tile % width, tile // width
    xs = [c for c in (column(x + dx, width, wrap_x) for dx in range(-r, r + 1)) if c >= 0]
    return tuple(yy * width + c for yy in range(max(0, y - r), min(height, y + r + 1))
                 for c in xs)


def columns_apart(x1: int, x2: int, width: int, wrap_x: bool) -> int:
    """Columns between x1 and x2 on a map `width` wide, the short way round when it wraps."""
    d = abs(x1 - x2)
    return width - d if wrap_x and 2 * d > width else d


def check_size(width: int, height: int, *, low: int = MIN_SIDE) -> None:
    """Generated maps need room for two civilizations; hand-made ones (tests, JSON) may be tiny."""
    for name, v in (("width", width), ("height", height)):
        if not isinstance(v, int) or isinstance(v, bool) or not low <= v <= MAX_SIDE:
            raise UserInputError(f"map {name} {v!r} is out of range ({low}..{MAX_SIDE})")


def build_map(tables: Tables, width: int, height: int, terrain, resource, river, *,
              sacred: int = -1, wrap_x: bool = False) -> MapData:
    """Wrap terrain arrays into a MapData with its derived per-tile tables."""
    check_size(width, height, low=1)
    r2 = tables.ruleset.params["city_radius_sq"]
    reach = int(r2**0.5)
    gap = tables.ruleset.params["citymindist"] - 1
    if wrap_x and width < 2 * max(reach, gap, 1) + 1:
        raise UserInputError(f"map width {width} is too narrow to wrap (a city's radius would "
                             f"meet itself; at least {2 * max(reach, gap, 1) + 1})")

    def col(x: int) -> int:
        return column(x, width, wrap_x)

    n = width * height
    terrain = np.asarray(terrain, dtype=np.int8).reshape(n)
    resource = np.asarray(resource, dtype=np.int8).reshape(n)
    river = np.asarray(river, dtype=bool).reshape(n)
    terr = tuple(int(v) for v in terrain)
    ocean = tuple(tables.terrain_ocean[t] for t in terr)
    riv = tuple(bool(v) for v in river)
    nbrs = []
    for tile in range(n):
        x, y = tile % width, tile // width
        row = []
        for dx, dy in DELTAS:
            nx, ny = col(x + dx), y + dy
            row.append(ny * width + nx if nx >= 0 and 0 <= ny < height else -1)
        nbrs.append(tuple(row))
    coast = tuple(
        not ocean[t] and any(nb >= 0 and ocean[nb] for nb in nbrs[t]) for t in range(n)
    )
    water = tuple(
        riv[t] or any(nbrs[t][d] >= 0 and (ocean[nbrs[t][d]] or riv[nbrs[t][d]]) for d in CARDINAL)
        for t in range(n)
    )
    offsets = sorted(
        ((dx, dy) for dx in range(-reach, reach + 1) for dy in range(-reach, reach + 1)
         if dx * dx + dy * dy <= r2),
        key=lambda d: (d[0] * d[0] + d[1] * d[1], d[1], d[0]),
    )
    radius = []
    for tile in range(n):
        x, y = tile % width, tile // width
        radius.append(tuple((y + dy) * width + col(x + dx) for dx, dy in offsets
                            if col(x + dx) >= 0 and 0 <= y + dy < height))
    too_close = [chebyshev_box(tile, gap, width, height, wrap_x) for tile in range(n)]
    return MapData(
        width=width, height=height, terrain=terrain, resource=resource, river=river,
        terr=terr, res=tuple(int(v) for v in resource), riv=riv, ocean=ocean,
        neighbors=tuple(nbrs), coast=coast, water_source=water, radius=tuple(radius),
        adjacent=tuple(tuple(nb for nb in row if nb >= 0) for row in nbrs),
        land_steps=tuple(tuple((d, nb) for d, nb in enumerate(row) if nb >= 0 and not ocean[nb])
                         for row in nbrs),
        land_adjacent=tuple(tuple(nb for nb in row if nb >= 0 and not ocean[nb]) for row in nbrs),
        land_moves=tuple(tuple(MOVE[d] for d, nb in enumerate(row) if nb >= 0 and not ocean[nb])
                         for row in nbrs),
        too_close=tuple(too_close), sacred=sacred, wrap_x=wrap_x,
        apart=tuple(tuple(columns_apart(a, b, width, wrap_x) for b in range(width))
                    for a in range(width)),
    )


def _smooth_noise(rng: np.random.Generator, height: int, width: int, passes: int) -> np.ndarray:
    field = rng.random((height, width))
    for _ in range(passes):
        padded = np.pad(field, 1, mode="edge")
        field = (
            padded[1:-1, 1:-1] * 2
            + padded[:-2, 1:-1] + padded[2:, 1:-1] + padded[1:-1, :-2] + padded[1:-1, 2:]
        ) / 6.0
    field -= field.min()
    return field / max(field.max(), 1e-9)


def generate_map(tables: Tables, width: int, height: int, seed: int,
                 land_fraction: float = 0.55, wrap_x: bool = False) -> MapData:
    """A seeded random continent; the same seed and size always give the same map. On a map
    that wraps, the continent lies across the seam (the flat map rolled by half its width), so
    its units and cities live on both sides of it."""
    check_size(width, height)
    rng = np.random.default_rng([seed, 7321])
    names = tables.terrain_names
    T = {name: i for i, name in enumerate(names)}
    ys, xs = np.mgrid[0:height, 0:width]
    # Distance from the centre, 0 in the middle and about 1 at the edges: keeps land off the edge.
    edge = np.maximum(np.abs(xs - (width - 1) / 2) / (width / 2),
                      np.abs(ys - (height - 1) / 2) / (height / 2))
    elevation = _smooth_noise(rng, height, width, 4) * 0.7 + (1 - edge**2) * 0.6
    sea_level = np.quantile(elevation, 1 - land_fraction)
    moisture = _smooth_noise(rng, height, width, 3)
    latitude = np.abs(ys - (height - 1) / 2) / (height / 2)  # 0 equator, 1 pole
    land = elevation > sea_level
    # Relief comes from its own noise so hills and mountains are scattered, not all central.
    relief = _smooth_noise(rng, height, width, 2)
    high = np.quantile(relief[land], 0.94) if land.any() else 1.0
    hill = np.quantile(relief[land], 0.84) if land.any() else 1.0

    terrain = np.full((height, width), T["ocean"], dtype=np.int8)
    for y in range(height):
        for x in range(width):
            if not land[y, x]:
                continue
            e, m, lat = relief[y, x], moisture[y, x], latitude[y, x]
            if e > high:
                t = "mountains"
            elif e > hill:
                t = "hills"
            elif lat > 0.8:
                t = "tundra"
            elif m > 0.8:
                t = "swamp" if lat > 0.4 else "jungle"
            elif m > 0.6:
                t = "forest"
            elif m < 0.15 and lat < 0.6:
                t = "desert"
            elif m < 0.4:
                t = "plains"
            else:
                t = "grassland"
            terrain[y, x] = T[t]

    river = np.zeros((height, width), dtype=bool)
    n_rivers = max(1, (width * height) // 150)
    sources = np.argwhere(land & (relief > hill))
    if len(sources):
        for k in rng.permutation(len(sources))[:n_rivers]:
            y, x = sources[k]
            for _ in range(width + height):
                river[y, x] = True
                steps = [(y + dy, x + dx) for dx, dy in ((0, -1), (1, 0), (0, 1), (-1, 0))
                         if 0 <= y + dy < height and 0 <= x + dx < width]
                if any(not land[s] for s in steps):
                    break
                nxt = min(steps, key=lambda s: (elevation[s] + (0.5 if river[s] else 0.0)))
                if river[nxt]:
                    break
                y, x = nxt
        river &= land

    resource = np.full((height, width), -1, dtype=np.int8)
    res_index = {name: i for i, name in enumerate(tables.resource_names)}
    draws = rng.random((height, width))
    picks = rng.integers(0, 2, size=(height, width))
    for y in range(height):
        for x in range(width):
            terr = tables.ruleset.terrains[terrain[y, x]]
            if not terr.resources or draws[y, x] > 1 / 9:
                continue
            if terr.ocean and not _near_land(land, y, x):
                continue
            resource[y, x] = res_index[terr.resources[picks[y, x] % len(terr.resources)]]
    if wrap_x:
        terrain, resource, river = (np.roll(a, width // 2, axis=1)
                                    for a in (terrain, resource, river))
    return build_map(tables, width, height, terrain, resource, river, wrap_x=wrap_x)


def _near_land(land: np.ndarray, y: int, x: int) -> bool:
    return bool(land[max(0, y - 1) : y + 2, max(0, x - 1) : x + 2].any())


def start_tiles(tables: Tables, m: MapData, num_players: int, seed: int) -> list[int]:
    """Start tiles on the largest landmass, spread out greedily (farthest-point sampling)."""
    rng = np.random.default_rng([seed, 991])
    comp = _largest_landmass(m)
    starters = {"grassland", "plains", "hills", "forest", "tundra"}
    cand = [t for t in comp if tables.terrain_names[m.terr[t]] in starters] or list(comp)
    if len(cand) < num_players:
        raise UserInputError(f"map {m.width}x{m.height} has too little land for "
                             f"{num_players} players")
    cand.sort()
    first = cand[int(rng.integers(len(cand)))]
    chosen = [first]
    while len(chosen) < num_players:
        def dist(t):
            return min(m.dist(t, c) for c in chosen)

        chosen.append(max(cand, key=lambda t: (dist(t), -t)))
    return chosen


def _largest_landmass(m: MapData) -> list[int]:
    seen = [False] * m.n
    best: list[int] = []
    for start in range(m.n):
        if seen[start] or m.ocean[start]:
            continue
        comp, stack = [], [start]
        seen[start] = True
        while stack:
            t = stack.pop()
            comp.append(t)
            for nb in m.neighbors[t]:
                if nb >= 0 and not seen[nb] and not m.ocean[nb]:
                    seen[nb] = True
                    stack.append(nb)
        if len(comp) > len(best):
            best = comp
    return best
