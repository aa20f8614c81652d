"""The state vector equals its features computed one by one, by their plain definitions.

`features.summarize` gathers everything in one pass (a vector per decision is most of what
recording a game costs); this file says what each feature is, the slow and obvious way, and
compares them on many positions of whole games.
"""

from __future__ import annotations

import numpy as np

from nlmcs.games.civ import CivConfig, CivGame
from nlmcs.games.civ.features import score
from nlmcs.games.civ.tables import BUSY, FORTIFIED, FORTIFYING, IRRIGATION, MINE, ROAD
from nlmcs.games.runner import GameHook, play_game
from nlmcs.paths import shipped_dir
from nlmcs.seeds import LEGACY_CHANCE, chance_rng

CLASSIC = shipped_dir() / "rulesets" / "classic.json"


def plain_features(s, player: int) -> dict[str, float]:
    T, m, w = s.tables, s.map, s.map.width
    units = list(s.units.values())
    own_units = [u for u in units if u.owner == player]
    enemy_units = [u for u in units if u.owner != player]
    own = [c for c in s.cities.values() if c.owner == player]
    enemy = [c for c in s.cities.values() if c.owner != player]
    others = [p for p in range(len(s.players)) if p != player]
    pl = s.players[player]

    def cheb(a: int, b: int) -> int:
        return max(abs(a % w - b % w), abs(a // w - b // w))

    out = {"turn_fraction": s.turn / max(1, s.max_turns)}
    for k, name in enumerate(T.unit_names):
        key = name.replace(" ", "_")
        out[f"own_{key}"] = sum(u.kind == k for u in own_units)
        out[f"enemy_{key}"] = sum(u.kind == k for u in enemy_units)
    for side, cities in (("own", own), ("enemy", enemy)):
        out[f"{side}_cities"] = len(cities)
        out[f"{side}_citizens"] = sum(c.size for c in cities)
        out[f"{side}_food"] = sum(c.surplus_food for c in cities)
        out[f"{side}_shields"] = sum(c.surplus_shield for c in cities)
        out[f"{side}_trade"] = sum(c.trade for c in cities)
    out["own_techs"] = pl.techs.bit_count()
    out["enemy_techs"] = max((s.players[p].techs.bit_count() for p in others), default=0)
    out["own_gold"] = pl.gold
    out["enemy_gold"] = max((s.players[p].gold for p in others), default=0)
    out["own_bulbs"] = pl.bulbs
    out["own_score"] = score(s, player)
    out["enemy_score"] = max((score(s, p) for p in others), default=0.0)
    for i, t in enumerate(T.terrain_names):
        out[f"own_units_on_{t}"] = sum(m.terr[u.tile] == i for u in own_units)
    hp = [u.hp for u in T.ruleset.units]
    enemy_tiles = {u.tile for u in enemy_units}
    out["own_units_on_river"] = sum(m.riv[u.tile] for u in own_units)
    out["own_units_in_cities"] = sum(u.tile in s.city_at for u in own_units)
    out["own_units_fortified"] = sum(u.activity in (FORTIFYING, FORTIFIED) for u in own_units)
    out["own_units_veteran"] = sum(u.vet > 0 for u in own_units)
    out["own_units_wounded"] = sum(u.hp < hp[u.kind] for u in own_units)
    out["own_units_working"] = sum(u.activity in BUSY for u in own_units)
    out["own_units_near_enemy"] = sum(any(n in enemy_tiles for n in m.neighbors[u.tile])
                                      for u in own_units)
    worked = [t for c in own for t in c.worked[1:]]
    out["worked_irrigation"] = sum(bool(s.improvements[t] & IRRIGATION) for t in worked)
    out["worked_mine"] = sum(bool(s.improvements[t] & MINE) for t in worked)
    out["worked_road"] = sum(bool(s.improvements[t] & ROAD) for t in worked)
    out["worked_special"] = sum(m.res[t] >= 0 for t in worked)
    out["worked_river"] = sum(m.riv[t] for t in worked)
    out["worked_ocean"] = sum(m.ocean[t] for t in worked)
    for name in ("barracks", "granary", "walls"):
        out[f"own_{name}"] = sum(c.buildings >> getattr(T, name) & 1 for c in own)
    out["enemy_walls"] = sum(c.buildings >> T.walls & 1 for c in enemy)
    out["own_unhappy"] = sum(c.unhappy for c in own)
    out["own_growing_cities"] = sum(c.surplus_food > 0 for c in own)
    out["own_starving_cities"] = sum(c.surplus_food < 0 for c in own)
    out["own_building_units"] = sum(c.build < T.n_units for c in own)
    out["own_building_improvements"] = sum(c.build >= T.n_units for c in own)
    out["enemy_units_near_own_cities"] = sum(cheb(u.tile, c.tile) <= 3
                                             for c in own for u in enemy_units)
    out["nearest_enemy_city_distance"] = (
        min(cheb(u.tile, c.tile) for u in own_units for c in enemy) / max(w, m.height)
        if own_units and enemy else 0.0)
    return out


class Positions(GameHook):
    """Every `every`-th position of a game."""

    def __init__(self, every: int):
        self.every, self.states = every, []

    def on_turn(self, state):
        if state.turn % self.every == 0:
            self.states.append(state.clone())


def test_the_state_vector_is_its_features_by_their_definitions():
    checked = set()
    for preset, players, seed in (("tiny", 2, 0), ("small", 2, 3), ("default", 2, 1),
                                  ("small", 3, 5)):
        game = CivGame(CivConfig.preset(preset, ruleset=str(CLASSIC), num_players=players,
                                        max_turns=90))
        kinds = ["builtin:hard", "random", "builtin:easy"]
        seen = Positions(every=6)
        # games drawn by the legacy chance rule: these seeds' games build walls and barracks
        play_game(game, {p: game.policy(kinds[p]) for p in range(players)}, seed=seed,
                  hooks=[seen], engine="python", rng=chance_rng(seed, LEGACY_CHANCE))
        names = game.state_feature_names()
        for s in seen.states:
            for p in range(players):
                want = plain_features(s, p)
                assert sorted(want) == sorted(names)
                got = dict(zip(names, s.state_vector(p).tolist(), strict=True))
                expected = {k: float(np.float32(want[k])) for k in names}
                assert got == expected, (preset, seed, s.turn, p,
                                         {k: (got[k], expected[k]) for k in names
                                          if got[k] != expected[k]})
                checked.update(k for k in names if want[k])
    # the positions exercise the features that need units near each other to be nonzero
    assert {"enemy_units_near_own_cities", "nearest_enemy_city_distance",
            "own_units_near_enemy", "own_units_in_cities", "own_walls", "own_barracks",
            "worked_irrigation"} <= checked
