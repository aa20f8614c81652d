"""Build small states from a picture of the map, for tests and worked examples.

Each row is a string of terrain letters from the ruleset (g grassland, p plains, d desert, t tundra,
f forest, h hills, m mountains, s swamp, j jungle) with '.' for ocean; an upper-case letter is the
same terrain with a river. Units and cities are then placed with `place_unit` and `place_city`.
"""

from __future__ import annotations

from nlmcs.errors import UserInputError
from nlmcs.games.civ.mapgen import build_map
from nlmcs.games.civ.rules import found_city


def state_from_picture(game, rows: list[str], *,
                       resources: dict[tuple[int, int], str] | None = None,
                       wrap_x: bool = False):
    T = game.tables
    by_ident = {t.ident: i for i, t in enumerate(T.ruleset.terrains)}
    ocean = next(i for i, t in enumerate(T.ruleset.terrains) if t.ocean)
    height, width = len(rows), len(rows[0])
    terrain, river = [], []
    for y, row in enumerate(rows):
        if len(row) != width:
            raise UserInputError(f"picture row {y} has {len(row)} letters, expected {width}")
        for ch in row:
            if ch == ".":
                terrain.append(ocean)
                river.append(False)
            elif ch.lower() in by_ident:
                terrain.append(by_ident[ch.lower()])
                river.append(ch.isupper())
            else:
                raise UserInputError(f"picture row {y}: unknown terrain letter {ch!r}")
    resource = [-1] * (width * height)
    for (x, y), name in (resources or {}).items():
        resource[y * width + x] = T.resource_names.index(name)
    return game.blank_state(build_map(T, width, height, terrain, resource, river,
                                      wrap_x=wrap_x))


def tile_at(state, x: int, y: int) -> int:
    return y * state.map.width + x


def place_unit(state, owner: int, unit: str, x: int, y: int, *, vet: int = 0, home: int = -1):
    kind = state.tables.unit_names.index(unit)
    return state.add_unit(owner, kind, tile_at(state, x, y), vet=vet, home=home)


def place_city(state, owner: int, x: int, y: int, *, size: int = 1,
               buildings: tuple[str, ...] = ()):
    city = found_city(state, owner, tile_at(state, x, y))
    city.size = size
    for name in buildings:
        city.buildings |= 1 << state.tables.building_names.index(name)
    return city
