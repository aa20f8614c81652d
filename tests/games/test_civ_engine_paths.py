"""The engine's fast paths against plain formulations of the same rules, and its memo caches.

The roll-out hot path (unit moves from the per-tile owner bytes, the governor's memoised
rankings, the one-pass agent listing, the AI's memoised site tables) is written for speed. These
tests hold it to straightforward versions of the same rules (the engine's code before the speed
work) on states from real play, replay recorded results, and check that warm, cleared or pickled
caches never change a game.
"""

from __future__ import annotations

import csv
import pickle
from pathlib import Path

import numpy as np
import pytest

from nlmcs.games.base import Action
from nlmcs.games.civ import CivConfig, CivGame, ai, cities, labels, legal, rules
from nlmcs.games.civ.tables import CARDINAL, FORTIFIED, FORTIFYING, IDLE, IRRIGATION, MINE, ROAD
from nlmcs.games.runner import GameHook, play_game
from nlmcs.paths import shipped_dir
from nlmcs.seeds import chance_rng, stored_rule

CLASSIC = shipped_dir() / "rulesets" / "classic.json"
RESULTS = Path(__file__).resolve().parents[2] / "results"


# --- plain reference formulations ------------------------------------------------------------
def ref_owner_at(s, tile):
    stack = s.tile_units.get(tile)
    return s.units[stack[0]].owner if stack else -1


def ref_in_enemy_zoc(s, tile, owner):
    for nb in s.map.neighbors[tile]:
        if nb >= 0:
            stack = s.tile_units.get(nb)
            if stack and s.units[stack[0]].owner != owner and any(
                s.tables.unit_military[s.units[i].kind] for i in stack
            ):
                return True
    return False


def ref_zoc_allows(s, dst, owner):
    return dst in s.city_at or ref_owner_at(s, dst) == owner or not ref_in_enemy_zoc(s, dst, owner)


def ref_can_found_city(s, tile):
    w, dist = s.map.width, s.params["citymindist"]
    x, y = tile % w, tile // w
    return not s.map.ocean[tile] and all(
        max(abs(ct % w - x), abs(ct // w - y)) >= dist for ct in s.city_at
    )


def ref_unit_actions(s, u):
    """Every neighbour looked at through tile_units, as the rules read in FreeCiv's terms."""
    T, m = s.tables, s.map
    military = T.unit_military[u.kind]
    can_attack = military and T.ruleset.units[u.kind].attack > 0
    acts, enemy_seen = [], False
    for d, nt in enumerate(m.neighbors[u.tile]):
        if nt < 0 or m.ocean[nt]:
            continue
        if ref_owner_at(s, nt) not in (-1, u.owner):
            enemy_seen = True
            if can_attack:
                acts.append(Action("attack", d))
            continue
        cid = s.city_at.get(nt)
        if not military and cid is not None and s.cities[cid].owner != u.owner:
            continue
        acts.append(Action("move", d))
    if enemy_seen and u.tile not in s.city_at and ref_in_enemy_zoc(s, u.tile, u.owner):
        acts = [a for a in acts
                if a.kind != "move" or ref_zoc_allows(s, m.neighbors[u.tile][a.arg], u.owner)]
    if T.unit_can_fortify[u.kind] and u.activity not in (FORTIFIED, FORTIFYING):
        acts.append(Action("fortify"))
    if T.unit_cities[u.kind] and ref_can_found_city(s, u.tile):
        acts.append(Action("build_city"))
    if T.unit_settlers[u.kind]:
        acts += [a for a, ok in ((Action("irrigate"), legal.can_irrigate(s, u.tile)),
                                 (Action("mine"), legal.can_mine(s, u.tile)),
                                 (Action("build_road"), legal.can_build_road(s, u.tile))) if ok]
    return [*acts, Action("wait")]


def ref_do_move(s, u, d):
    """A move as the rules read: step on while move points last, stop on entering a city, where
    the next step is blocked, or next to an enemy unit on any side."""
    m, p = s.map, s.params
    moves = s.tables.ruleset.units[u.kind].move_rate * p["move_frags"]
    military = s.tables.unit_military[u.kind]
    first = m.neighbors[u.tile][d]
    if (first >= 0 and u.tile not in s.city_at and ref_in_enemy_zoc(s, u.tile, u.owner)
            and not ref_zoc_allows(s, first, u.owner)):
        return False
    steps = 0
    while moves > 0:
        here, nt = u.tile, m.neighbors[u.tile][d]
        if nt < 0 or m.ocean[nt] or ref_owner_at(s, nt) not in (-1, u.owner):
            break
        cid = s.city_at.get(nt)
        enemy_city = cid is not None and s.cities[cid].owner != u.owner
        if enemy_city and not military:
            break
        if (s.improvements[here] & ROAD or (here in s.city_at and not m.riv[here])) and (
            s.improvements[nt] & ROAD or (cid is not None and not m.riv[nt])
        ):
            moves -= p["road_move_frags"]
        elif m.riv[here] and m.riv[nt] and d in CARDINAL:
            moves -= p["river_move_frags"]
        else:
            moves -= s.terrain_move[m.terr[nt]] * p["move_frags"]
        s.move_unit(u, nt)
        steps += 1
        if enemy_city:
            rules.capture_city(s, s.cities[cid], u.owner)
            break
        if cid is not None or any(ref_owner_at(s, nb) not in (-1, u.owner)
                                  for nb in m.neighbors[nt] if nb >= 0):
            break
    if steps:
        u.activity = IDLE
    return steps > 0


def ref_near(s, tile, owner):
    """(enemy unit next to `tile`, a second unit here or a friendly one next to it)."""
    here = s.tile_units.get(tile, [])
    around = [ref_owner_at(s, nb) for nb in s.map.neighbors[tile] if nb >= 0]
    return (any(o not in (-1, owner) for o in around),
            len(here) > 1 or any(o == owner for o in around))


def ref_border(s, tile, owner):
    """An enemy city within the city radius (squared distance) of `tile`."""
    w, r2 = s.map.width, s.params["city_radius_sq"]
    return any((c.tile % w - tile % w) ** 2 + (c.tile // w - tile // w) ** 2 <= r2
               for c in s.cities.values() if c.owner != owner)


def ref_governor(s, c):
    """The governor with full sorts of the free tiles (no memoised rankings)."""
    p = s.params
    military = sum(1 for i in s.tile_units.get(c.tile, ())
                   if s.tables.unit_military[s.units[i].kind])
    c.unhappy = max(0, c.size - p["content_base"] - min(p["martial_law_max"], military))
    taken = {t for o in s.cities.values() if o.id != c.id for t in o.worked}
    f, sh, tr = cities.tile_output(s, c.tile, True)
    cand = []
    for t in s.map.radius[c.tile][1:]:
        if t in taken or t in s.city_at or ref_owner_at(s, t) not in (-1, c.owner):
            continue
        o = cities.tile_output(s, t)
        cand.append((o[0] * 4 + o[1] * 3 + o[2] * 2, o[0], -t, t, o))
    cand.sort(reverse=True)
    by_food = sorted(cand, key=lambda x: (x[1], x[0], x[2]), reverse=True)
    worked, used = [c.tile], set()
    for _ in range(min(c.size - c.unhappy, len(cand))):
        pool = by_food if f - c.size * p["food_cost"] < 2 else cand
        pick = next(x for x in pool if x[3] not in used)
        used.add(pick[3])
        worked.append(pick[3])
        f, sh, tr = f + pick[4][0], sh + pick[4][1], tr + pick[4][2]
    capital = next((x.tile for x in s.cities.values() if x.owner == c.owner and x.capital), None)
    c.worked = tuple(worked)
    c.surplus_food = f - c.size * p["food_cost"]
    c.surplus_shield = sh
    c.trade = tr - tr * cities.corruption_pct(s, c, capital) // 100
    c.dirty = False


# --- states from real play -------------------------------------------------------------------
def _states(game, seeds, turns, players, every=3):
    """Positions along a few seeded games (every `every` turns)."""
    out = []
    for seed in seeds:
        s = game.new_initial_state(seed)
        pols = {p: game.policy(spec) for p, spec in enumerate(players)}
        rng = np.random.default_rng(seed)
        for t in range(turns):
            if s.is_terminal():
                break
            if t % every == 0:
                out.append(s.clone())
            s.apply_joint_actions({p: pols[p].joint_action(s, p, rng) for p in pols}, rng)
    return out


@pytest.fixture(scope="module")
def played(small_game):
    return (_states(small_game, range(3), 60, ("random", "random"))
            + _states(small_game, range(3, 6), 60, ("builtin", "random")))


def test_unit_actions_match_the_plain_rules(played):
    checked = contested = 0
    for s in played:
        for u in s.units.values():
            assert legal.unit_actions(s, u) == ref_unit_actions(s, u), (u.id, u.tile)
            checked += 1
            contested += any(ref_owner_at(s, nb) not in (-1, u.owner)
                             for nb in s.map.neighbors[u.tile] if nb >= 0)
    assert checked > 200 and contested > 5  # both the quiet and the contested path ran


def test_agent_listing_matches_agents_and_legal_actions(played):
    for s in played:
        for p in range(s.num_players):
            fast = [(a, list(acts)) for a, acts in s.agent_actions(p)]
            assert fast == [(a, s.legal_actions(a)) for a in s.agents(p)]


def test_moves_match_the_plain_rules(played):
    """Every legal move of every unit, applied by the engine and by the plain rules, gives the
    same state (the engine stops next to an enemy by the per-tile owner bytes)."""
    rng = np.random.default_rng(0)
    moves = stopped = 0
    for s in played[::2]:
        for u in s.units.values():
            for a in s.legal_actions(u.aid):
                if a.kind != "move":
                    continue
                fast, ref = s.clone(), s.clone()
                assert rules.apply_action(fast, u.aid, a, rng) == ref_do_move(
                    ref, ref.units[u.id], a.arg)
                assert fast.to_json() == ref.to_json()
                moves += 1
                moved = ref.units.get(u.id)
                stopped += moved is not None and ref_near(ref, moved.tile, u.owner)[0]
    assert moves > 500 and stopped > 3  # moves that ended next to an enemy were among them


def test_labels_match_the_plain_rules(played):
    for s in played:
        for tile in range(s.map.n):
            if s.map.ocean[tile]:
                continue
            for owner in range(s.num_players):
                assert labels._near(s, tile, owner) == ref_near(s, tile, owner), (tile, owner)
                assert labels._border(s, tile, owner) == ref_border(s, tile, owner), (tile, owner)
        for c in s.cities.values():
            enemy = any(ref_owner_at(s, t) not in (-1, c.owner) for t in s.map.radius[c.tile])
            assert ("enemy" in labels.city_words(s, c)) == enemy


def _improved(s, rng):
    """`s` with random improvements on its land (so that some cities have food to spare and
    rank tiles by their weighted sum)."""
    s = s.clone()
    for t in range(s.map.n):
        if not s.map.ocean[t]:
            s.improvements[t] = int(rng.choice([0, IRRIGATION, MINE, ROAD, IRRIGATION | ROAD]))
    return s


def test_governor_matches_the_full_sort(played):
    fields = ("worked", "surplus_food", "surplus_shield", "trade", "unhappy", "dirty")
    rng = np.random.default_rng(1)
    for s in played + [_improved(s, rng) for s in played[::2]]:
        for cid in s.cities:
            fast, ref = s.clone(), s.clone()
            cities.governor(fast, fast.cities[cid])
            ref_governor(ref, ref.cities[cid])
            assert ([getattr(fast.cities[cid], f) for f in fields]
                    == [getattr(ref.cities[cid], f) for f in fields])


def test_ai_site_tables_match_a_scan_of_every_site(played):
    """The first eligible entry of `nearby_sites` is the best site of a scan over all sites."""
    rng = np.random.default_rng(0)
    s = played[-1]
    values, sites = ai.site_values(s)
    for tile in rng.choice([u.tile for u in s.units.values()], size=8):
        reach = ai.land_distances(s, int(tile))
        for _ in range(5):
            eligible = set(rng.choice(sites, size=len(sites) // 3, replace=False).tolist())
            best, best_score = None, None
            for t in sites:
                if reach[t] > 10 or t not in eligible:
                    continue
                if best_score is None or values[t] - 3 * reach[t] > best_score:
                    best, best_score = t, values[t] - 3 * reach[t]
            first = next((t for t, _ in ai.nearby_sites(s, int(tile)) if t in eligible), None)
            assert first == best
    w, r = s.map.width, ai.SITE_SPACING - 1
    assert ai.spacing_blocked(s) == {t for t in range(s.map.n) for ct in s.city_at
                                     if max(abs(t % w - ct % w), abs(t // w - ct // w)) <= r}


# --- incremental structures -------------------------------------------------------------------
def assert_in_sync(s):
    """The per-tile structures the unit and city methods keep up to date equal ones worked out
    from scratch from the unit and city records; the memoised agent names parse as they read."""
    stacks, occupant = {}, bytearray(s.map.n)
    for u in s.units.values():
        stacks.setdefault(u.tile, set()).add(u.id)
        occupant[u.tile] = u.owner + 1
    assert {t: set(ids) for t, ids in s.tile_units.items()} == stacks
    assert all(len(ids) == len(set(ids)) for ids in s.tile_units.values())
    assert all(len({s.units[i].owner for i in ids}) == 1 for ids in s.tile_units.values())
    assert s.occupant == occupant
    assert s.city_at == {c.tile: c.id for c in s.cities.values()}
    assert all(legal.parse_agent(name) == key for name, key in s.game.agent_keys.items())


@pytest.mark.parametrize("players", [("random", "random"), ("builtin:hard", "random"),
                                     ("builtin", "builtin:easy"), ("greedy", "builtin")])
def test_incremental_structures_stay_in_sync(small_game, players):
    """Through whole games, their clones, pickles and JSON copies, played on separately."""
    game = small_game
    pols = {p: game.policy(spec) for p, spec in enumerate(players)}
    turns = 12 if "greedy" in players else 80
    changes = 0
    for seed in (1, 2):
        rng = np.random.default_rng(seed)
        s = game.new_initial_state(seed)
        copies = []
        for t in range(turns):
            if s.is_terminal():
                break
            before = (bytes(s.occupant), dict(s.city_at))
            s.apply_joint_actions({p: pol.joint_action(s, p, rng) for p, pol in pols.items()},
                                  rng)
            assert_in_sync(s)
            changes += before != (bytes(s.occupant), dict(s.city_at))
            if t % 10 == 5:
                twin = game.state_from_json(s.to_json())
                assert twin.to_json() == s.to_json()
                copies += [s.clone(), pickle.loads(pickle.dumps(s)), twin]
        for c in copies:  # each copy plays on by itself (random orders: units and cities move)
            assert_in_sync(c)
            for _ in range(10):
                if c.is_terminal():
                    break
                c.apply_joint_actions({p: game.policy("random").joint_action(c, p, rng)
                                       for p in range(c.num_players)}, rng)
                assert_in_sync(c)
    assert changes > 10


def test_sync_check_notices_a_stale_structure(small_game):
    """The check above fails on a state whose per-tile bytes were not kept up to date."""
    s = small_game.new_initial_state(0)
    assert_in_sync(s)
    u = next(iter(s.units.values()))
    s.units[u.id].tile = s.map.land_adjacent[u.tile][0]  # moved behind the methods' back
    with pytest.raises(AssertionError):
        assert_in_sync(s)


# --- recorded results and caches --------------------------------------------------------------
def test_recorded_series_replays_exactly():
    """The first games of results/ai_vs_random.csv, played again by the chance rule the table
    names (none: the legacy rule it was played with), end exactly as recorded."""
    game = CivGame(CivConfig(ruleset=str(CLASSIC)))
    with open(RESULTS / "ai_vs_random.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))[:3]
    for row in rows:
        names = (row["player0"], row["player1"])
        r = play_game(game, {p: game.policy(n) for p, n in enumerate(names)},
                      seed=int(row["seed"]), max_turns=100,
                      rng=chance_rng(int(row["seed"]), stored_rule(row.get("chance"))))
        assert (str(r.winner) if r.winner is not None else "", r.turns) == (row["winner"],
                                                                           int(row["turns"]))
        assert [round(x, 2) for x in r.scores] == [float(row["score0"]), float(row["score1"])]
        assert [int(r.stats[p]["cities"]) for p in (0, 1)] == [int(row["cities0"]),
                                                               int(row["cities1"])]


class _ClearCaches(GameHook):
    """A hook that empties every memo table at the start of each turn."""

    def on_start(self, game, state, seed, meta):
        self.game = game

    def on_turn(self, state):
        self.game.options_cache.clear()
        self.game.agent_keys.clear()
        for cache in (state.map.tile_cache, state.map.label_cache, state.map.rank_cache,
                      state.map.ai_cache):
            cache.clear()

    def on_decision(self, *args):
        pass

    def on_end(self, state, result):
        pass


@pytest.mark.parametrize("players", [("builtin:hard", "random"), ("builtin", "builtin:easy")])
def test_caches_never_change_a_game(players):
    def play(hooks=(), game=None):
        game = game or CivGame(CivConfig.small(ruleset=str(CLASSIC)))
        s = game.new_initial_state(4)
        play_game(game, {p: game.policy(x) for p, x in enumerate(players)}, seed=4,
                  max_turns=50, state=s, hooks=hooks)
        return s.to_json()

    fresh = play()
    assert play(hooks=[_ClearCaches()]) == fresh
    warm = CivGame(CivConfig.small(ruleset=str(CLASSIC)))
    for seed in (4, 9):  # fill every cache, then ship the game to a "worker"
        play_game(warm, {0: warm.policy("builtin"), 1: warm.policy("random")}, seed=seed,
                  max_turns=30)
    assert play(game=pickle.loads(pickle.dumps(warm))) == fresh
    assert play(game=warm) == fresh
