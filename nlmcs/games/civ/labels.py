"""Text labels: the words a manual would use for an agent, its situation and a candidate action.

These words are the bridge between the game and the strategy guide (Branavan et al. 2011 ground
their text features in exactly such labels), so they use FreeCiv's own names, lower-cased: unit
types, terrains, specials, "river", "irrigation", "mine", "road", "city", "enemy", ... and action
phrases such as "build city", "irrigate", "build warriors", "research bronze working".
Labels that depend only on the terrain are cached on the game (the map is shared by all clones).
"""

from __future__ import annotations

from nlmcs.games.base import Action
from nlmcs.games.civ import ai, combat
from nlmcs.games.civ.legal import agent_key
from nlmcs.games.civ.tables import DIRECTIONS, FORTIFIED, IMPROVEMENT_BITS

_FIXED = {
    "fortify": ("fortify",),
    "wait": ("wait",),
    "build_city": ("build city",),
    "irrigate": ("irrigate",),
    "mine": ("mine",),
    "build_road": ("build road",),
}
SMALL_CITY_MAX = 3


def agent_labels(s, agent: str) -> tuple[str, ...]:
    kind, key = agent_key(s, agent)
    if kind == "unit":
        u = s.units.get(key)
        return () if u is None else (s.tables.unit_names[u.kind],)
    if kind == "city":
        return ("city",) if key in s.cities else ()
    if kind == "civ" and key < len(s.players):
        return ("civilization",)
    return ()


def tile_words(s, tile: int) -> tuple[str, ...]:
    """Terrain, special, river, improvements and coast of a tile (cached per improvement state)."""
    imp = s.improvements[tile]
    words = s.map.label_cache.get(tile * 8 + imp)
    return words if words is not None else improved_tile_words(s, tile, imp)


def improved_tile_words(s, tile: int, imp: int) -> tuple[str, ...]:
    """`tile_words` of `tile` with improvement bits `imp` (only the map and tables of `s` are
    read)."""
    key = tile * 8 + imp
    cache = s.map.label_cache
    words = cache.get(key)
    if words is None:
        m, T = s.map, s.tables
        out = [T.terrain_names[m.terr[tile]]]
        if m.res[tile] >= 0:
            out.append(T.resource_names[m.res[tile]])
        if m.riv[tile]:
            out.append("river")
        out.extend(name for name, bit in IMPROVEMENT_BITS if imp & bit)
        if m.coast[tile]:
            out.append("coast")
        words = cache[key] = tuple(out)
    return words


def _near(s, tile: int, owner: int) -> tuple[bool, bool]:
    """(enemy unit adjacent, friendly unit here or adjacent)."""
    here = s.tile_units.get(tile)
    enemy, friendly = False, bool(here) and len(here) > 1
    occupant, me = s.occupant, owner + 1
    for nb in s.map.land_adjacent[tile]:  # units stand on land only
        o = occupant[nb]
        if o:
            if o != me:
                enemy = True
            else:
                friendly = True
    return enemy, friendly


def _border(s, tile: int, owner: int) -> bool:
    """An enemy city within the city radius of `tile` (the radius is symmetric)."""
    city_at, radius = s.city_at, s.map.radius[tile]
    if city_at.keys().isdisjoint(radius):
        return False
    cities = s.cities
    return any(cities[city_at[t]].owner != owner for t in radius if t in city_at)


def state_labels(s, agent: str) -> tuple[str, ...]:
    kind, key = agent_key(s, agent)
    if kind == "unit":
        u = s.units.get(key)
        if u is None:
            return ()
        words = list(tile_words(s, u.tile))
        cid = s.city_at.get(u.tile)
        if cid is not None:
            words.append("city")
            if s.cities[cid].capital:
                words.append("capital")
        enemy, friendly = _near(s, u.tile, u.owner)
        if enemy:
            words.append("enemy")
        if friendly:
            words.append("friendly")
        if u.activity == FORTIFIED:
            words.append("fortified")
        if u.vet:
            words.append("veteran")
        if u.hp < s.tables.unit_hp[u.kind]:
            words.append("wounded")
        if _border(s, u.tile, u.owner):
            words.append("border")
        return tuple(words)
    if kind == "city":
        c = s.cities.get(key)
        return () if c is None else city_words(s, c)
    if kind == "civ" and key < len(s.players):
        player = key
        words = ["civilization"]
        mine = [c for c in s.cities.values() if c.owner == player]
        if mine:
            words.append("city")
        if any(c.capital for c in mine):
            words.append("capital")
        if any(_near(s, c.tile, player)[0] for c in mine):
            words.append("enemy")
        return tuple(words)
    return ()


def city_words(s, c) -> tuple[str, ...]:
    T = s.tables
    words = ["city", *tile_words(s, c.tile)]
    if c.capital:
        words.append("capital")
    words.append("small" if c.size <= SMALL_CITY_MAX else "large")
    if c.surplus_food > 0:
        words.append("growing")
    else:
        words.append("hungry")
        if c.surplus_food < 0:
            words.append("starving")
    if c.unhappy:
        words.append("unhappy")
    for name, bit in (("walls", T.walls), ("barracks", T.barracks), ("granary", T.granary)):
        if c.buildings >> bit & 1:
            words.append(name)
    occupant, me = s.occupant, c.owner + 1
    for t in s.map.radius[c.tile]:
        o = occupant[t]
        if o and o != me:
            words.append("enemy")
            break
    return tuple(words)


def action_labels(s, agent: str, action: Action) -> tuple[str, ...]:
    kind = action.kind
    fixed = _FIXED.get(kind)
    if fixed is not None:
        return fixed
    if kind == "move" or kind == "attack":
        d = action.arg
        if not isinstance(d, int) or not 0 <= d < 8:
            return (kind,)
        return _step_labels(s, _unit(s, agent), kind, d)
    return _named(action)


def actions_labels(s, agent: str, actions) -> list[tuple[str, ...]]:
    """`action_labels` of every candidate of one agent, its unit looked up once."""
    out = []
    unit = _UNKNOWN
    for action in actions:
        kind = action.kind
        fixed = _FIXED.get(kind)
        if fixed is not None:
            out.append(fixed)
        elif kind == "move" or kind == "attack":
            d = action.arg
            if not isinstance(d, int) or not 0 <= d < 8:
                out.append((kind,))
                continue
            if unit is _UNKNOWN:
                unit = _unit(s, agent)
            out.append(_step_labels(s, unit, kind, d))
        else:
            out.append(_named(action))
    return out


_UNKNOWN = object()


def _unit(s, agent: str):
    who, key = s.game.agent_keys.get(agent) or agent_key(s, agent)
    return s.units.get(key) if who == "unit" else None


def _named(action: Action) -> tuple[str, ...]:
    kind = action.kind
    if kind == "build":
        return (f"build {action.arg}",)
    if kind == "research":
        return (f"research {action.arg}",)
    return (kind.replace("_", " "),)


def _step_labels(s, u, kind: str, d) -> tuple[str, ...]:
    """A move or an attack of unit `u` in direction `d` (0-7): where it leads and what is
    there."""
    if u is None:
        return (kind, DIRECTIONS[d])
    nt = s.map.neighbors[u.tile][d]
    if nt < 0:
        return (kind, DIRECTIONS[d])
    dest = s.tables.terrain_names[s.map.terr[nt]]
    if kind == "move":
        if nt in s.city_at:
            return ("move", DIRECTIONS[d], dest, "city")
        return ("move", DIRECTIONS[d], dest)
    words = ["attack", DIRECTIONS[d], "enemy", dest]
    defender = combat.best_defender(s, nt)  # who would defend, whatever the stack order
    if defender is not None:
        words.append(s.tables.unit_names[defender.kind])
    if nt in s.city_at:
        words.append("city")
    return tuple(words)


GOAL_WORDS = ("site", "job", "front", "home", "rally")
"""What a unit's goals are called (`goal_targets`), in the order `goal_labels` gives them."""


def goal_targets(s, u) -> tuple[tuple[str, int], ...]:
    """`(word, tile)` of where unit `u` would head by the built-in AI's own rules: a founder to
    the best free city site ("site", `ai.free_site`), a worker to the nearest worked tile with a
    job left ("job", `ai.job_target`), a military unit to the nearest enemy city ("front"), its
    nearest own city ("home") and the rally point ("rally", `ai.rally_tile`). Only the board
    counts: no claims of the turn, no sacred terrain (a manual states that rule)."""
    T, w = s.tables, s.map.width
    if T.unit_cities[u.kind]:
        enemy_xy = [(e.tile % w, e.tile // w) for e in s.units.values() if e.owner != u.owner]
        site = ai.free_site(s, u.tile, u.owner, ai.spacing_blocked(s),
                            lambda t, r: ai.enemy_within(enemy_xy, s.map, t, r))
        return () if site is None else (("site", site),)
    if T.unit_settlers[u.kind]:
        own = [c for c in s.cities.values() if c.owner == u.owner]
        job = ai.job_target(s, u.tile, u.owner, own, lambda t: ai.tile_job(s, t))
        return () if job is None else (("job", job),)
    if not T.unit_military[u.kind]:
        return ()
    reach = ai.land_distances(s, u.tile)
    enemy = [c.tile for c in s.cities.values() if c.owner != u.owner]
    own = [c.tile for c in s.cities.values() if c.owner == u.owner]
    out = []
    if enemy:
        out.append(("front", ai.nearest(reach, enemy)))
    if own:
        out.append(("home", ai.nearest(reach, own)))
        out.append(("rally", ai.rally_tile(s.map, own, enemy)))
    return tuple(out)


def goal_labels(s, agent: str, actions) -> list[tuple[str, ...]]:
    """Per candidate of `agent`: for the move that is its unit's step towards a goal (the step
    `ai.closer_step` takes among all eight neighbours), that goal's words; () for every other
    candidate. The policy network reads them beside `actions_labels` (`Layout.goal_words`): a
    move's own words say only where it leads, not what it is for."""
    moves = [a.kind == "move" and isinstance(a.arg, int) and 0 <= a.arg < 8 for a in actions]
    u = _unit(s, agent) if any(moves) else None
    if u is None:
        return [()] * len(actions)
    nbrs = s.map.neighbors[u.tile]
    around = [(t, t) for t in nbrs if t >= 0]
    steps: dict[int, list[str]] = {}
    for word, target in goal_targets(s, u):
        t = ai.closer_step(s, u.tile, target, around)
        if t is not None:
            steps.setdefault(t, []).append(word)
    return [tuple(steps.get(nbrs[a.arg], ())) if move else ()
            for a, move in zip(actions, moves, strict=True)]


STATE_WORDS = ("river", "coast", "city", "capital", "enemy", "friendly", "fortified", "veteran",
               "wounded", "border", "small", "large", "growing", "hungry", "starving", "unhappy",
               "walls", "barracks", "granary", "civilization")
"""Every state word above that is not a ruleset name (terrain, special, improvement)."""


def vocabulary(tables) -> dict[str, frozenset[str]]:
    """Every label this module can give, by what it labels ("agent", "state", "action"): what
    a rule written in the game's words (the advice audit's rules file) may name."""
    improvements = tuple(name for name, _ in IMPROVEMENT_BITS)
    step = ("move", "attack", "enemy", "city", *DIRECTIONS, *tables.terrain_names,
            *tables.unit_names)
    actions = {word for words in _FIXED.values() for word in words}
    actions.update(step)
    actions.update(f"build {name}" for name in tables.item_names)
    actions.update(f"research {name}" for name in tables.tech_names)
    return {
        "agent": frozenset((*tables.unit_names, "city", "civilization")),
        "state": frozenset((*tables.terrain_names, *tables.resource_names, *improvements,
                            *STATE_WORDS)),
        "action": frozenset(actions),
    }
