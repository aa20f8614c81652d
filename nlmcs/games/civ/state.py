"""The civ game state: units, cities, players and tile improvements over a shared immutable map.

State is data (small `__slots__` objects in dicts keyed by id, bytearrays of tile improvements
and of which player's units stand on each tile);
every change goes through `apply_action`, which dispatches to one handler per action type in
`rules.py` (what is legal is decided in `legal.py`), or through `end_turn` (`cities.py`). Clones
share the map and the game's rule tables and copy the rest: about 20-30 microseconds for a
mid-game position.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from nlmcs.games.base import Action, AgentId, State
from nlmcs.games.civ import cities, features, labels, legal, rules, serialize
from nlmcs.games.civ.objects import City, Player, Unit
from nlmcs.games.civ.tables import BUSY

if TYPE_CHECKING:
    from nlmcs.games.civ.game import CivGame
    from nlmcs.games.civ.mapgen import MapData


class CivState(State):
    """What changes in a civ game. Shared, never mutated: `game`, `map`, `tables`, `params`."""

    def __init__(self, game: CivGame, map_data: MapData):
        self.game = game
        self.map = map_data
        self.tables = game.tables
        self.params = game.ruleset.params
        self.vet_power = game.vet_power
        self.terrain_defense = game.terrain_defense
        self.terrain_move = game.terrain_move
        self.improvements = bytearray(map_data.n)
        self.units: dict[int, Unit] = {}
        self.tile_units: dict[int, list[int]] = {}
        # owner + 1 of the units on each tile, 0 where none: `tile_units` seen one byte per
        # tile, kept by the unit methods below, so neighbour tests need no dict lookups.
        self.occupant = bytearray(map_data.n)
        self.cities: dict[int, City] = {}
        self.city_at: dict[int, int] = {}
        self.players = [Player() for _ in range(game.config.num_players)]
        self.turn = 0
        self.max_turns = game.config.max_turns
        self.next_id = 1
        self._winner: int | None = None
        self._over = False

    # --- the interface -----------------------------------------------------------------------
    def clone(self) -> CivState:
        s = CivState.__new__(CivState)
        s.game, s.map, s.tables, s.params = self.game, self.map, self.tables, self.params
        s.vet_power, s.terrain_defense = self.vet_power, self.terrain_defense
        s.terrain_move = self.terrain_move
        s.improvements = self.improvements[:]
        s.units = {k: u.copy() for k, u in self.units.items()}
        s.tile_units = {k: v[:] for k, v in self.tile_units.items()}
        s.occupant = self.occupant[:]
        s.cities = {k: c.copy() for k, c in self.cities.items()}
        s.city_at = self.city_at.copy()
        s.players = [p.copy() for p in self.players]
        s.turn, s.max_turns, s.next_id = self.turn, self.max_turns, self.next_id
        s._winner, s._over = self._winner, self._over
        return s

    @property
    def num_players(self) -> int:
        return len(self.players)

    def agents(self, player: int) -> list[AgentId]:
        out = [f"civ:{player}"]
        out.extend(c.aid for c in self.cities.values() if c.owner == player)
        out.extend(u.aid for u in self.units.values()
                   if u.owner == player and u.activity not in BUSY)
        return out

    def legal_actions(self, agent: AgentId) -> list[Action]:
        return legal.legal_actions(self, agent)

    def agent_actions(self, player: int) -> list[tuple[AgentId, Sequence[Action]]]:
        """`(agent, legal_actions(agent))` for every agent of `player`, in `agents` order; one
        pass instead of resolving each agent's name (what roll-out players need)."""
        return legal.agents_with_actions(self, player)

    def apply_action(self, agent: AgentId, action: Action, rng: np.random.Generator) -> bool:
        if self._over:
            return False
        return rules.apply_action(self, agent, action, rng)

    def apply_joint_actions(self, actions, rng: np.random.Generator) -> None:
        """`State.apply_joint_actions` with the dispatcher called directly: the same order and
        the same results, less call overhead in the roll-outs' inner loop."""
        apply = rules.apply_action
        for player in self.player_order():
            for agent, action in actions.get(player, {}).items():
                if not self._over:
                    apply(self, agent, action, rng)
        self.end_turn(rng)

    def end_turn(self, rng: np.random.Generator) -> None:
        if self._over:
            return
        cities.end_turn(self, rng)
        self.turn += 1
        self.check_over()

    def is_terminal(self) -> bool:
        return self._over

    def winner(self) -> int | None:
        return self._winner

    def score(self, player: int) -> float:
        return features.score(self, player)

    def stats(self, player: int) -> dict[str, float]:
        return features.stats(self, player)

    def agent_labels(self, agent: AgentId) -> tuple[str, ...]:
        return labels.agent_labels(self, agent)

    def state_labels(self, agent: AgentId) -> tuple[str, ...]:
        return labels.state_labels(self, agent)

    def action_labels(self, agent: AgentId, action: Action) -> tuple[str, ...]:
        return labels.action_labels(self, agent, action)

    def actions_labels(self, agent: AgentId, actions) -> list[tuple[str, ...]]:
        return labels.actions_labels(self, agent, actions)

    def goal_labels(self, agent: AgentId, actions) -> list[tuple[str, ...]]:
        return labels.goal_labels(self, agent, actions)

    def state_vector(self, player: int) -> np.ndarray:
        return features.state_vector(self, player, self.game.state_features)

    def to_json(self) -> dict:
        return serialize.state_to_json(self)

    def render_ascii(self) -> str:
        from nlmcs.games.civ.render import render_ascii

        return render_ascii(self)

    # --- helpers the rule modules share ------------------------------------------------------
    def alive(self, player: int) -> bool:
        return any(c.owner == player for c in self.cities.values()) or any(
            u.owner == player for u in self.units.values()
        )

    def check_over(self) -> None:
        """Victory by elimination; at the turn limit the higher score wins (None on a tie)."""
        present = {c.owner for c in self.cities.values()}
        present.update({u.owner for u in self.units.values()})
        living = [p for p in range(len(self.players)) if p in present]
        if len(living) <= 1:
            self._over = True
            self._winner = living[0] if living else None
        elif self.turn >= self.max_turns:
            self._over = True
            scores = [self.score(p) for p in range(len(self.players))]
            best = max(scores)
            self._winner = scores.index(best) if scores.count(best) == 1 else None

    def owner_at(self, tile: int) -> int:
        """Owner of the units on `tile`, -1 if none (FreeCiv: one player's units per tile)."""
        return self.occupant[tile] - 1

    def add_unit(self, owner: int, kind: int, tile: int, *, vet: int = 0, home: int = -1) -> Unit:
        uid = self.next_id
        self.next_id += 1
        u = Unit(uid, owner, kind, tile, self.tables.unit_hp[kind], vet, home=home)
        self.place_unit(u)
        return u

    def place_unit(self, u: Unit) -> None:
        """Put a new unit record on the board (its id must be unused)."""
        self.units[u.id] = u
        self.tile_units.setdefault(u.tile, []).append(u.id)
        self.occupant[u.tile] = u.owner + 1

    def remove_unit(self, u: Unit) -> None:
        del self.units[u.id]
        stack = self.tile_units[u.tile]
        stack.remove(u.id)
        if not stack:
            del self.tile_units[u.tile]
            self.occupant[u.tile] = 0

    def move_unit(self, u: Unit, tile: int) -> None:
        stack = self.tile_units[u.tile]
        stack.remove(u.id)
        if not stack:
            del self.tile_units[u.tile]
            self.occupant[u.tile] = 0
        u.tile = tile
        self.tile_units.setdefault(tile, []).append(u.id)
        self.occupant[tile] = u.owner + 1

    def has_tech(self, player: int, tech: int) -> bool:
        return tech < 0 or bool(self.players[player].techs >> tech & 1)
