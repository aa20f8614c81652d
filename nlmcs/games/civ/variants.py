"""Rule-in-the-manual variants: a rule that matters, drawn per game and stated only in its manual.

In both variants one land terrain is *sacred*, drawn from the game's seed. `sacred-terrain`: a
city founded on it starts with `EXTRA_CITIZENS` more citizens (felt at once, so short roll-outs
see it). `sacred-terrain-end`: each city a player owns on it is worth `END_POINTS` more score
points when the game is over, and only then (roll-outs that stop before the end never see it).

The sacred terrain is drawn uniformly among the land terrains that cover at least
`MIN_TILES` tiles of that seed's map (all land terrains present when none does), so it is one a
settler can find; any land terrain may hold a city in this ruleset. The draw uses its own salted
generator, so it never moves the map's, the start tiles' or the game's random streams. The
*mismatched* terrain (another seed's rule, for the manual control) is drawn the same way among
the other candidates, with another salt.
"""

from __future__ import annotations

import numpy as np

from nlmcs.errors import UserInputError

SACRED = "sacred-terrain"
SACRED_END = "sacred-terrain-end"
VARIANTS = (SACRED, SACRED_END)
EXTRA_CITIZENS = 2
"""sacred-terrain: extra citizens of a city founded on the sacred terrain."""
END_POINTS = 3
"""sacred-terrain-end: score points per own city on the sacred terrain at the game's end."""
MIN_TILES = 3
SALT, MISMATCH_SALT = 0x5ACED, 0x5ACEE


def check_variant(name: object) -> str:
    """`name` if it is "" (no variant) or a known variant; else one `UserInputError` line."""
    if name == "" or name in VARIANTS:
        return name  # type: ignore[return-value]
    raise UserInputError(f"unknown game variant {name!r} (known: {', '.join(VARIANTS)})")


def candidates(tables, m) -> list[int]:
    """Land terrains (ruleset order) the sacred one is drawn from on map `m`."""
    counts = np.bincount(np.asarray(m.terrain, dtype=np.int64), minlength=len(tables.terrain_names))
    land = [t for t in range(len(counts)) if not tables.terrain_ocean[t] and counts[t] > 0]
    common = [t for t in land if counts[t] >= MIN_TILES]
    return common or land


def sacred_terrain(tables, m, seed: int) -> int:
    """The sacred terrain of the game of `seed` on its map `m` (-1 on a map without land)."""
    pool = candidates(tables, m)
    if not pool:
        return -1
    return pool[int(np.random.default_rng([int(seed), SALT]).integers(len(pool)))]


def mismatched_terrain(tables, m, seed: int) -> int:
    """Another candidate than the sacred one, drawn from the seed (the mismatched manual's);
    the sacred one itself when it is the only candidate."""
    sacred = sacred_terrain(tables, m, seed)
    pool = [t for t in candidates(tables, m) if t != sacred]
    if not pool:
        return sacred
    return pool[int(np.random.default_rng([int(seed), MISMATCH_SALT]).integers(len(pool)))]


def land_share(m, terrain: int) -> float:
    """Share of the map's land tiles that are of `terrain` (the chance share of a founding)."""
    land = sum(1 for o in m.ocean if not o)
    return sum(1 for t in m.terr if t == terrain) / land if land else 0.0


def end_points(s, player: int) -> int:
    """sacred-terrain-end's bonus of `player` (counted by `features.score` once the game is
    over)."""
    sacred, terr = s.map.sacred, s.map.terr
    return END_POINTS * sum(1 for c in s.cities.values()
                            if c.owner == player and terr[c.tile] == sacred)
