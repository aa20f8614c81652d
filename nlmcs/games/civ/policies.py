"""Baseline players: uniformly random, and greedy one-step look-ahead."""

from __future__ import annotations

import numpy as np

from nlmcs.games.base import Action, AgentId
from nlmcs.games.civ.tables import BUSY, FORTIFIED, FORTIFYING


class RandomPolicy:
    """Every agent picks one of its legal actions uniformly at random."""

    name = "random"
    kind = "random"

    def joint_action(self, state, player: int, rng: np.random.Generator) -> dict[AgentId, Action]:
        pairs = state.agent_actions(player)
        draws = rng.random(len(pairs)).tolist()
        out = {}
        for (agent, acts), r in zip(pairs, draws, strict=True):
            if acts:
                out[agent] = acts[int(r * len(acts))]
        return out


def heuristic_value(state, player: int) -> float:
    """A quick material count used by the greedy player: own minus the strongest enemy's.

    Besides score, cities, units and yields it credits what a single action can change at once:
    work started on a tile, garrisoned and fortified units, a research goal, a useful build."""
    T = state.tables
    rules = T.ruleset.units

    def side(p: int) -> float:
        st = state.stats(p)
        value = (st["score"] + 3 * st["cities"] + 0.5 * st["units"]
                 + 0.1 * (st["food"] + st["shields"] + st["trade"]))
        for u in state.units.values():
            if u.owner != p:
                continue
            ut = rules[u.kind]
            value += 0.2 * (ut.attack + ut.defense) * u.hp / ut.hp
            if u.activity in BUSY:
                value += 0.5
            elif u.activity in (FORTIFIED, FORTIFYING):
                value += 0.2
            if T.unit_military[u.kind] and u.tile in state.city_at:
                value += 0.3
        if state.players[p].researching >= 0:
            value += 0.1
        for c in state.cities.values():
            if c.owner == p and c.build < T.n_units:
                if T.unit_cities[c.build]:
                    value += 0.4 if c.size >= 2 else -0.2
                elif T.unit_military[c.build]:
                    value += 0.05 * (rules[c.build].attack + rules[c.build].defense)
        return value

    mine = side(player)
    others = [side(p) for p in range(state.num_players) if p != player]
    return mine - max(others, default=0.0)


class GreedyPolicy:
    """For each agent, try every legal action on a copy of the state and keep the one whose
    afterstate scores best under `heuristic_value` (ties broken at random)."""

    name = "greedy"
    kind = "greedy"

    def joint_action(self, state, player: int, rng: np.random.Generator) -> dict[AgentId, Action]:
        out = {}
        for agent in state.agents(player):
            acts = state.legal_actions(agent)
            if len(acts) == 1:
                out[agent] = acts[0]
                continue
            best, best_v = [], None
            for act in acts:
                trial = state.clone()
                # Chance (combat) is judged on a private generator so `rng` stays reproducible.
                trial.apply_action(agent, act, np.random.default_rng(0))
                v = heuristic_value(trial, player)
                if best_v is None or v > best_v + 1e-9:
                    best, best_v = [act], v
                elif abs(v - best_v) <= 1e-9:
                    best.append(act)
            out[agent] = best[int(rng.integers(len(best)))]
        return out
