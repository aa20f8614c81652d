"""The built-in AI: a rule-based opponent in the spirit of FreeCiv's own AI.

It expands with settlers towards the best free city sites, improves the land its cities work
(irrigation on flat land, mines on hills, roads where they add trade), keeps defenders fortified
in every city, builds an army and goes on the offensive once its field army clearly outweighs the
enemy's, attacking only at good odds (the exact FreeCiv combat odds from `combat.odds`).
Difficulty levels change how many cities it wants, how many defenders it keeps, how it researches
and how boldly it attacks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nlmcs.errors import UserInputError
from nlmcs.games.base import Action, AgentId
from nlmcs.games.civ import combat, legal
from nlmcs.games.civ.cities import tile_output
from nlmcs.games.civ.mapgen import chebyshev_box
from nlmcs.games.civ.tables import BUSY, FORTIFIED, FORTIFYING, IRRIGATION, MINE, ROAD


@dataclass(frozen=True)
class AILevel:
    """Knobs of one difficulty level."""

    defenders: int  # fortified defenders kept in each city
    max_cities: int  # stop building settlers at this many cities
    attack_odds: float  # attack an adjacent enemy only at these odds or better
    offensive_ratio: float  # march on the enemy when field attack >= ratio x enemy defence
    min_army: int  # ... and at least this many field units
    walls: bool  # builds city walls when the enemy is near
    barracks: bool  # builds barracks for veteran units
    research: tuple[str, ...]  # research order
    expand_first: bool = False  # no workers while a city can still build settlers for a site


LEVELS = {
    "easy": AILevel(1, 4, 0.75, 3.0, 6, False, False,
                    ("alphabet", "pottery", "bronze working", "masonry", "horseback riding",
                     "warrior code", "the wheel", "mathematics", "iron working")),
    "normal": AILevel(1, 7, 0.55, 1.5, 3, True, False,
                      ("warrior code", "bronze working", "alphabet", "masonry", "iron working",
                       "pottery", "horseback riding", "mathematics", "the wheel")),
    "hard": AILevel(2, 9, 0.45, 1.2, 3, True, True,
                    ("bronze working", "warrior code", "iron working", "masonry", "alphabet",
                     "mathematics", "pottery", "horseback riding", "the wheel")),
}
HOWTO = AILevel(1, 12, 0.6, 2.0, 4, True, False,
                ("alphabet", "bronze working", "pottery", "masonry", "horseback riding",
                 "warrior code", "the wheel", "mathematics", "iron working"), expand_first=True)
"""FreeCiv's HOWTOPLAY as a level of the script: lots of cities ("seven or eight at the least"),
settlers from every city, and only once the land is taken workers to irrigate and build roads;
a defender in every city, then, with nothing else to build, attack units (the built-in AI's
fallback); science first (the cheapest techs first, as the score counts techs, not their
worth)."""
SITE_SPACING = 3  # the AI leaves two tiles between its cities (Chebyshev distance 3)
SACRED_SITE_BONUS = 40.0
"""What a site on the sacred terrain adds to its value for the AI that knows a variant's rule
(about the value of a good site, so any sacred site in reach beats any other)."""
FIRST_DETOUR = 3
"""Steps the rule-knowing AI walks its first settlers to a sacred site before founding."""


UNREACHABLE = 1 << 20


def land_distances(s, tile: int) -> list[int]:
    """Steps over land from `tile` to every tile (8 directions, units ignored); memoised on the
    shared map because terrain never changes. Symmetric, so it serves as "distance to" as well."""
    cache = s.map.ai_cache.get("bfs")
    if cache is None:
        cache = s.map.ai_cache["bfs"] = {}
    dist = cache.get(tile)
    if dist is None:
        if len(cache) > 600:
            cache.clear()
        m = s.map
        dist = [UNREACHABLE] * m.n
        dist[tile] = 0
        frontier = [tile]
        land_adjacent = m.land_adjacent
        d = 0
        while frontier:  # breadth first, one ring of steps at a time
            d += 1
            nxt = []
            for t in frontier:
                for nb in land_adjacent[t]:
                    if dist[nb] > d:
                        dist[nb] = d
                        nxt.append(nb)
            frontier = nxt
        cache[tile] = dist
    return dist


def site_values(s, sacred: int = -1) -> tuple[list[float], list[int]]:
    """Static city-site value per tile (food counts double) and the good sites, best first.
    Cached on the shared map, so it uses the bare terrain (no improvements): every state on the
    map, cloned or reloaded, sees the same values. With `sacred` (a terrain), the values the
    rule-knowing AI uses: sites on that terrain get `SACRED_SITE_BONUS`."""
    cache = s.map.ai_cache
    if sacred >= 0:
        key = ("sites", sacred)
        if key not in cache:
            values, _ = site_values(s)
            terr = s.map.terr
            values = [v + SACRED_SITE_BONUS if v > 0 and terr[t] == sacred else v
                      for t, v in enumerate(values)]
            cache[key] = (values, _good_sites(values))
        return cache[key]
    if "sites" not in cache:
        m = s.map
        values = [0.0] * m.n
        for t in range(m.n):
            if m.ocean[t]:
                continue
            total = 0.0
            for k, r in enumerate(m.radius[t]):
                f, sh, tr = tile_output(s, r, k == 0, 0)  # terrain only: the map is shared
                total += 2 * f + sh + 0.5 * tr
            values[t] = total + (3 if m.riv[t] else 0) + (2 if m.coast[t] else 0)
        cache["sites"] = (values, _good_sites(values))
    return cache["sites"]


def _good_sites(values: list[float]) -> list[int]:
    """The tiles valued at least the median land tile, best first."""
    land = sorted((v for v in values if v > 0), reverse=True)
    cut = land[len(land) // 2] if land else 0
    return sorted((t for t in range(len(values)) if values[t] >= cut and cut > 0),
                  key=lambda t: -values[t])


def nearby_sites(s, tile: int, sacred: int = -1) -> tuple[tuple[int, float], ...]:
    """`(site, value - 3 x steps)` for the city sites within ten steps over land of `tile`, best
    first for a settler standing there (ties in `site_values` order); memoised on the shared map
    because terrain never changes. `sacred`: as in `site_values`."""
    name = "nearby" if sacred < 0 else ("nearby", sacred)
    cache = s.map.ai_cache.get(name)
    if cache is None:
        cache = s.map.ai_cache[name] = {}
    hit = cache.get(tile)
    if hit is None:
        if len(cache) > 2000:
            cache.clear()
        values, sites = site_values(s, sacred)
        reach = land_distances(s, tile)
        near = [(values[t] - 3 * reach[t], k, t) for k, t in enumerate(sites) if reach[t] <= 10]
        near.sort(key=lambda x: (-x[0], x[1]))
        hit = cache[tile] = tuple((t, score) for score, _, t in near)
    return hit


def spacing_blocked(s) -> frozenset[int]:
    """Tiles within SITE_SPACING - 1 of a city (Chebyshev): the AI founds no city there.
    Memoised on the shared map by the city tiles."""
    key = tuple(s.city_at)
    cache = s.map.ai_cache.get("blocked")
    if cache is None:
        cache = s.map.ai_cache["blocked"] = {}
    hit = cache.get(key)
    if hit is None:
        if len(cache) > 2000:
            cache.clear()
        m = s.map
        blocked = set()
        for ct in key:
            blocked.update(chebyshev_box(ct, SITE_SPACING - 1, m.width, m.height, m.wrap_x))
        hit = cache[key] = frozenset(blocked)
    return hit


def enemy_within(enemy_xy, m, tile: int, radius: int) -> bool:
    """Whether one of the `(x, y)` in `enemy_xy` stands within `radius` tiles (Chebyshev) of
    `tile` on map `m`."""
    w = m.width
    ax, y = m.apart[tile % w], tile // w
    return any(ax[ex] <= radius and -radius <= ey - y <= radius for ex, ey in enemy_xy)


def closer_step(s, tile: int, target: int, steps):
    """Of `steps`, `(choice, neighbour tile of tile)` pairs, the choice whose tile is closest to
    `target` over land, then by straight-line distance (the first on a tie); None when none gets
    closer than `tile`."""
    w = s.map.width
    dist = land_distances(s, target)
    best, best_key = None, None
    here = dist[tile]
    to_target = s.map.apart[target % w]
    for choice, nt in steps:
        d = dist[nt]
        if d >= here:
            continue
        dx, dy = to_target[nt % w], nt // w - target // w
        key = (d, dx * dx + dy * dy)
        if best_key is None or key < best_key:
            best, best_key = choice, key
    return best


def free_site(s, tile: int, owner: int, blocked, near, claimed=(), sacred: int = -1) -> int | None:
    """Where a settler at `tile` heads: the best-scoring site of `nearby_sites` that is neither
    `blocked` nor `claimed`, has no enemy within two tiles (`near(t, 2)`) and no foreign unit on
    it; None when there is none."""
    for t, _ in nearby_sites(s, tile, sacred):
        if (t not in blocked and t not in claimed and not near(t, 2)
                and s.owner_at(t) in (-1, owner)):
            return t
    return None


def tile_job(s, t: int) -> Action | None:
    """The improvement a worker makes on tile `t`: a mine on hills, irrigation on flat land, a
    road where it adds trade; None when the tile has all it can use."""
    ter = s.tables.ruleset.terrains[s.map.terr[t]]
    imp = s.improvements[t]
    if ter.mining_shield >= 2 and not imp & MINE and legal.can_mine(s, t):
        return legal.MINE_ACTION
    if ter.irrigation_food and ter.mining_shield < 2 and not imp & IRRIGATION and (
        legal.can_irrigate(s, t)
    ):
        return legal.IRRIGATE
    if ter.road_trade and not imp & ROAD and legal.can_build_road(s, t):
        return legal.BUILD_ROAD
    return None


def job_target(s, tile: int, owner: int, cities, job_at, claimed=()) -> int | None:
    """Where a worker at `tile` heads: the nearest tile over land, worked by one of `cities`
    (not the city centre), with a job left (`job_at(t)`), not `claimed` and with no foreign
    unit on it (the first on a tie); None when there is none."""
    best, best_d = None, None
    reach = land_distances(s, tile)
    for c in cities:
        for t in c.worked[1:]:
            if t in claimed or reach[t] >= UNREACHABLE or job_at(t) is None:
                continue
            if s.owner_at(t) not in (-1, owner):
                continue
            d = reach[t]
            if best_d is None or d < best_d:
                best, best_d = t, d
    return best


def nearest(reach: list[int], tiles) -> int:
    """The tile of `tiles` fewest steps away in `reach` (the lower tile on a tie)."""
    return min(tiles, key=lambda t: (reach[t], t))


def rally_tile(m, own_tiles, enemy_tiles) -> int:
    """Where idle field units gather on map `m`: the own city tile nearest an enemy city
    (Chebyshev; the first on a tie), the first own city when no enemy city is known."""
    if not enemy_tiles:
        return own_tiles[0]
    return min(own_tiles, key=lambda t: min(m.dist(t, e) for e in enemy_tiles))


class BuiltinAI:
    """`joint_action` gives every agent of `player` one rule-based action.

    `knows_rule`: in a variant game, the AI knows which terrain is sacred (the ablations'
    oracle): its settlers prefer sacred sites. In a plain game it changes nothing."""

    kind = "builtin"

    def __init__(self, level: str = "normal", *, knows_rule: bool = False):
        if level not in LEVELS:
            raise UserInputError(f"unknown AI level {level!r} (known: {', '.join(LEVELS)})")
        self.level_name = level
        self.level = LEVELS[level]
        self.knows_rule = knows_rule
        self.name = f"builtin:{level}" + ("+rule" if knows_rule else "")

    def joint_action(self, state, player: int, rng: np.random.Generator) -> dict[AgentId, Action]:
        sacred = state.map.sacred if self.knows_rule else -1
        return _Turn(state, player, self.level, rng, sacred).plan()


class HowtoPlayer(BuiltinAI):
    """The scripted player of FreeCiv's HOWTOPLAY (`HOWTO`): the built-in AI's rules at the
    guide's priorities. The method `howto` seats it; `uct-howto` searches on it."""

    kind = "howto"

    def __init__(self):
        self.level_name = "howto"
        self.level = HOWTO
        self.knows_rule = False
        self.name = "howto"


class _Turn:
    """One turn's planning for one player; holds the facts every agent's rule looks at.

    Planning never changes the state, so whatever depends only on it (enemy proximity, the
    defenders each city needs, tile jobs, the rally point) is worked out at most once a turn."""

    def __init__(self, s, player: int, level: AILevel, rng: np.random.Generator,
                 sacred: int = -1):
        self.s, self.player, self.level, self.rng = s, player, level, rng
        self.sacred = sacred  # the sacred terrain the AI knows of, -1 for none
        self.w = w = s.map.width
        self.T = T = s.tables
        self.own_cities = [c for c in s.cities.values() if c.owner == player]
        self.enemy_cities = [c for c in s.cities.values() if c.owner != player]
        self.own_units = [u for u in s.units.values() if u.owner == player]
        self.enemy_units = [u for u in s.units.values() if u.owner != player]
        self.enemy_xy = [(u.tile % w, u.tile // w) for u in self.enemy_units]
        self.claimed: set[int] = set()
        self._near: dict[tuple[int, int], bool] = {}
        self._blocked: frozenset[int] | None = None
        self._sites: dict[int, bool] = {}  # site_available by tile
        self._jobs: dict[int, Action | None] = {}  # job_at by tile
        self._rally: int | None = None
        self._targets: list[int] | None = None
        rs = T.ruleset.units
        mil = T.unit_military
        self.need = {c.id: self.defenders_needed(c) for c in self.own_cities}
        self.garrison: dict[int, list] = {}
        units = s.units
        for c in self.own_cities:
            here = [units[i] for i in s.tile_units.get(c.tile, ()) if mil[units[i].kind]]
            here.sort(key=lambda u: (-rs[u.kind].defense, u.id))
            self.garrison[c.id] = here[: self.need[c.id]]
        self.garrisoned = {u.id for g in self.garrison.values() for u in g}
        self.field = [u for u in self.own_units if mil[u.kind] and u.id not in self.garrisoned]
        field_attack = sum(rs[u.kind].attack * u.hp / rs[u.kind].hp for u in self.field)
        # Enemy defence that matters: units in or next to their cities count fully, the rest
        # (wandering the map) a third.
        by_enemy_city = set()
        for c in self.enemy_cities:
            by_enemy_city.add(c.tile)
            by_enemy_city.update(s.map.adjacent[c.tile])
        enemy_def = 0.0
        for e in self.enemy_units:
            if mil[e.kind]:
                enemy_def += rs[e.kind].defense * (1.0 if e.tile in by_enemy_city else 0.34)
        self.offensive = len(self.field) >= level.min_army and field_attack >= (
            level.offensive_ratio * max(1.0, enemy_def)
        )
        # Settlers and workers the player has or is building (production's expansion rules).
        founders = sum(1 for u in self.own_units if T.unit_cities[u.kind])
        self.founder_builds = {c.id for c in self.own_cities
                               if c.build < T.n_units and T.unit_cities[c.build]}
        self.founders = founders + len(self.founder_builds)
        self.workers = sum(1 for u in self.own_units
                           if T.unit_settlers[u.kind] and not T.unit_cities[u.kind])

    def enemy_near(self, tile: int, radius: int) -> bool:
        """Whether an enemy unit stands within `radius` tiles (Chebyshev) of `tile`."""
        key = (tile, radius)
        hit = self._near.get(key)
        if hit is None:
            hit = self._near[key] = enemy_within(self.enemy_xy, self.s.map, tile, radius)
        return hit

    def site_available(self, tile: int) -> bool:
        """Whether a free city site lies within ten steps over land of `tile`."""
        hit = self._sites.get(tile)
        if hit is None:
            blocked = self.blocked_sites()
            hit = self._sites[tile] = any(t not in blocked
                                          for t, _ in nearby_sites(self.s, tile, self.sacred))
        return hit

    def blocked_sites(self) -> frozenset[int]:
        """Tiles too close to an existing city for the AI's spacing."""
        if self._blocked is None:
            self._blocked = spacing_blocked(self.s)
        return self._blocked

    def defenders_needed(self, c) -> int:
        extra = 1 if self.level.walls and self.enemy_near(c.tile, 4) else 0
        return self.level.defenders + extra

    def plan(self) -> dict[AgentId, Action]:
        out = {}
        out[f"civ:{self.player}"] = self.research()
        for c in self.own_cities:
            out[c.aid] = self.production(c)
        for u in self.own_units:
            if u.activity in BUSY:
                continue
            out[u.aid] = self.unit_action(u)
        return out

    # --- civilization and cities -------------------------------------------------------------
    def research(self) -> Action:
        s, p = self.s, self.s.players[self.player]
        options = legal.researchable(s, self.player)
        if not options:
            return legal.WAIT
        if p.researching in options:
            return Action("research", self.T.tech_names[p.researching])
        names = [self.T.tech_names[t] for t in options]
        for want in self.level.research:
            if want in names:
                return Action("research", want)
        return Action("research", names[0])

    def production(self, c) -> Action:
        s, T, L = self.s, self.T, self.level
        options = legal.build_options(s, c)
        items = options.index  # buildable name -> item
        have = sum(1 for u in s.tile_units.get(c.tile, ()) if T.unit_military[s.units[u].kind])
        settlers = self.founders - (c.id in self.founder_builds)
        danger = self.enemy_near(c.tile, 2)
        if have < self.need[c.id]:
            choice = best_unit(s, options, attack=False)
        elif (not danger and (c.size >= 2 or L.expand_first)  # shields wait for the citizen
              and len(self.own_cities) + settlers < L.max_cities
              and "settlers" in items and self.site_available(c.tile)):
            choice = "settlers"
        elif ("workers" in items and self.workers < min(len(self.own_cities), 4) and not danger
              and not (L.expand_first and len(self.own_cities) + settlers < L.max_cities
                       and self.site_available(c.tile))):
            choice = "workers"
        elif L.walls and danger and "city walls" in items:
            choice = "city walls"
        elif L.barracks and c.size >= 3 and "barracks" in items:
            choice = "barracks"
        elif "granary" in items and c.size >= 5 and not danger:
            choice = "granary"
        else:
            choice = best_unit(s, options, attack=True)
        return Action("build", choice)

    # --- units -------------------------------------------------------------------------------
    def unit_action(self, u) -> Action:
        T = self.T
        options = legal.unit_actions(self.s, u)
        if T.unit_cities[u.kind] and len(self.own_cities) < self.level.max_cities:
            act = self.settle(u, options)
            if act is not None:
                return act
        if T.unit_settlers[u.kind]:
            return self.work(u, options)
        if T.unit_military[u.kind]:
            return self.fight(u, options)
        return legal.WAIT

    def step_towards(self, u, target: int, options: list[Action]) -> Action | None:
        """The legal move that gets closest to `target` over land; None if none gets closer."""
        nbrs = self.s.map.neighbors[u.tile]
        return closer_step(self.s, u.tile, target,
                           ((a, nbrs[a.arg]) for a in options if a.kind == "move"))

    def settle(self, u, options: list[Action]) -> Action | None:
        s = self.s
        values, sites = site_values(s, self.sacred)
        blocked = self.blocked_sites()

        def free(t: int) -> bool:
            return t not in blocked and t not in self.claimed

        if self.sacred >= 0:
            act = self.settle_sacred(u, options, free)
            if act is not None:
                return act
        if legal.BUILD_CITY in options and u.tile not in self.claimed:
            first = not self.own_cities and not self.claimed
            good = bool(sites) and free(u.tile) and values[u.tile] >= values[sites[-1]]
            if first or good:
                self.claimed.add(u.tile)
                return legal.BUILD_CITY
        # The best-scoring free site not near an enemy (the first in site order on a tie).
        best = free_site(s, u.tile, u.owner, blocked, self.enemy_near, self.claimed, self.sacred)
        if best is None:
            return None
        self.claimed.add(best)
        return self.step_towards(u, best, options) or legal.WAIT

    def settle_sacred(self, u, options: list[Action], free) -> Action | None:
        """The rule-knowing AI: found on a free sacred tile, or walk to the nearest free one
        in reach (within `FIRST_DETOUR` steps for the first city, ten steps later); None when
        none is in reach (the usual rule decides)."""
        s, terr, sacred = self.s, self.s.map.terr, self.sacred
        if terr[u.tile] == sacred and legal.BUILD_CITY in options and free(u.tile):
            self.claimed.add(u.tile)
            return legal.BUILD_CITY
        first = not self.own_cities
        reach = land_distances(s, u.tile)
        target = None
        for t, _ in nearby_sites(s, u.tile, sacred):
            if (terr[t] == sacred and free(t) and (not first or reach[t] <= FIRST_DETOUR)
                    and not self.enemy_near(t, 2) and s.owner_at(t) in (-1, u.owner)
                    and legal.can_found_city(s, t)):
                target = t
                break
        if target is None:
            return None
        self.claimed.add(target)
        return self.step_towards(u, target, options) or legal.WAIT

    def work(self, u, options: list[Action]) -> Action:
        s = self.s
        job = self.job_at(u.tile)
        if job is not None and job in options and u.tile not in self.claimed:
            self.claimed.add(u.tile)
            return job
        best = job_target(s, u.tile, u.owner, self.own_cities, self.job_at, self.claimed)
        if best is None:
            return legal.WAIT
        self.claimed.add(best)
        return self.step_towards(u, best, options) or legal.WAIT

    def job_at(self, t: int) -> Action | None:
        hit = self._jobs.get(t, False)
        if hit is False:
            hit = self._jobs[t] = tile_job(self.s, t)
        return hit

    def fight(self, u, options: list[Action]) -> Action:
        s = self.s
        nbrs = s.map.neighbors[u.tile]
        best, best_odds = None, self.level.attack_odds
        for a in options:
            if a.kind == "attack":
                defender = combat.best_defender(s, nbrs[a.arg])
                p = combat.odds(s, u, defender)
                if p >= best_odds:
                    best, best_odds = a, p
        if best is not None:
            return best
        stay = legal.FORTIFY if legal.FORTIFY in options else legal.WAIT
        if u.id in self.garrisoned:
            return stay
        # An empty enemy city next door: walk in and take it.
        city_at = s.city_at
        for a in options:
            if a.kind == "move":
                cid = city_at.get(nbrs[a.arg])
                if cid is not None and s.cities[cid].owner != self.player:
                    return a
        # A city short of defenders pulls the nearest free unit home.
        need = self.need
        for c in self.own_cities:
            if len(self.garrison[c.id]) < need[c.id]:
                if u.tile == c.tile:
                    self.garrison[c.id].append(u)
                    return stay
                if s.map.dist(u.tile, c.tile) <= 6 and c.id not in self.claimed:
                    self.claimed.add(c.id)
                    return self.step_towards(u, c.tile, options) or stay
        if self.offensive and (self.enemy_cities or self.enemy_units):
            if self._targets is None:
                self._targets = ([c.tile for c in self.enemy_cities]
                                 or [e.tile for e in self.enemy_units])
            reach = land_distances(s, u.tile)
            target = nearest(reach, self._targets)
            if reach[target] < UNREACHABLE:
                return self.step_towards(u, target, options) or stay
        if u.activity in (FORTIFIED, FORTIFYING):
            return legal.WAIT
        if self.own_cities:
            rally = self.rally_point()
            if s.map.dist(u.tile, rally) > 1:
                return self.step_towards(u, rally, options) or stay
        return stay

    def rally_point(self) -> int:
        """Where idle field units gather: the own city nearest an enemy city (the first city
        when no enemy city is known)."""
        if self._rally is None:
            self._rally = rally_tile(self.s.map, [c.tile for c in self.own_cities],
                                     [c.tile for c in self.enemy_cities])
        return self._rally


def best_unit(s, options, *, attack: bool) -> str:
    """The AI's best defender (by defence, the cheaper on a tie) or best attacker (by attack +
    half defence + half extra moves) among a city's build options; memoised on the game."""
    key = ("ai-unit", attack, options.names)
    cache = s.game.options_cache
    hit = cache.get(key)
    if hit is None:
        T = s.tables
        rs = T.ruleset.units
        units = [rs[i] for i in range(T.n_units) if T.unit_names[i] in options.index]
        if attack:
            best = max((u for u in units if u.military and u.attack > 0),
                       key=lambda u: (u.attack + 0.5 * u.defense + 0.5 * (u.move_rate - 1),
                                      -u.cost))
        else:
            best = max((u for u in units if u.military), key=lambda u: (u.defense, -u.cost))
        hit = cache[key] = best.name
    return hit
