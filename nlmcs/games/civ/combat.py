"""FreeCiv combat: strengths with their bonuses, then rounds until one unit has no hit points.

Each round the attacker wins with probability A / (A + D) and the loser loses hit points equal to
the winner's firepower (FreeCiv's `unit_versus_unit`). Defence is multiplied by the terrain bonus,
+river, +fortified (or in a city), +city walls against land units, and both sides by their veteran
level's power factor. The loser dies; the winner may become a veteran.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np


def attack_strength(state, unit) -> float:
    ut = state.tables.ruleset.units[unit.kind]
    return ut.attack * state.vet_power[unit.vet]


def defense_strength(state, unit, *, vs_land: bool = True) -> float:
    """Defence of `unit` on its tile, every bonus applied (FreeCiv multiplies them)."""
    ut = state.tables.ruleset.units[unit.kind]
    params = state.params
    tile = unit.tile
    m = state.map
    d = ut.defense * state.vet_power[unit.vet]
    d *= 1 + state.terrain_defense[m.terr[tile]] / 100
    if m.riv[tile]:
        d *= 1 + params["river_defense_pct"] / 100
    city_id = state.city_at.get(tile)
    if state.tables.unit_can_fortify[unit.kind] and (unit.activity == 2 or city_id is not None):
        d *= 1 + params["fortified_defense_pct"] / 100
    if city_id is not None and vs_land:
        city = state.cities[city_id]
        if city.buildings >> state.tables.walls & 1:
            d *= 1 + params["walls_defense_pct"] / 100
    return d


def best_defender(state, tile: int):
    """FreeCiv picks the defender with the best defence rating (strength x hp x firepower)."""
    best, best_key = None, None
    rules = state.tables.ruleset.units
    for uid in state.tile_units.get(tile, ()):
        u = state.units[uid]
        key = (defense_strength(state, u) * u.hp * rules[u.kind].firepower, -uid)
        if best_key is None or key > best_key:
            best, best_key = u, key
    return best


def combat_rounds(rng: np.random.Generator, p_attacker: float, att_hp: int, def_hp: int,
                  att_fp: int, def_fp: int) -> tuple[int, int]:
    """The one place chance enters combat; returns the hit points left (attacker, defender)."""
    while att_hp > 0 and def_hp > 0:
        draws = rng.random(att_hp + def_hp)
        for r in draws.tolist():
            if r < p_attacker:
                def_hp -= att_fp
            else:
                att_hp -= def_fp
            if att_hp <= 0 or def_hp <= 0:
                break
    return max(att_hp, 0), max(def_hp, 0)


@lru_cache(maxsize=4096)
def win_probability(p_attacker: float, att_hp: int, def_hp: int, att_fp: int, def_fp: int) -> float:
    """Exact probability that the attacker wins, by dynamic programming over rounds (for tests,
    the AI's odds and the greedy player)."""
    if def_hp <= 0:
        return 1.0
    if att_hp <= 0:
        return 0.0
    return p_attacker * win_probability(p_attacker, att_hp, def_hp - att_fp, att_fp, def_fp) + (
        1 - p_attacker
    ) * win_probability(p_attacker, att_hp - def_fp, def_hp, att_fp, def_fp)


def odds(state, attacker, defender) -> float:
    """The attacker's chance to win against `defender` where it stands."""
    a = attack_strength(state, attacker)
    d = defense_strength(state, defender)
    if a <= 0:
        return 0.0
    rules = state.tables.ruleset.units
    return win_probability(a / (a + d), attacker.hp, defender.hp,
                           rules[attacker.kind].firepower, rules[defender.kind].firepower)
