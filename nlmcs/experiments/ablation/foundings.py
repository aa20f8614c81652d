"""What a variant game's row records: where player 0 founded its cities (`FoundingsHook`).

A founding is a city first seen owned by player 0 (cities it captured were seen under their
founder first). Whether a sacred tile was reachable is measured over land from player 0's start
tile, units ignored, as the built-in AI's settlers walk (`ai.land_distances`).
"""

from __future__ import annotations

from nlmcs.games.runner import GameHook


class FoundingsHook(GameHook):
    """Counts player 0's foundings and those on the game's sacred terrain."""

    def __init__(self) -> None:
        self.tiles: list[int] = []
        self.seen: set[int] = set()
        self.start = -1
        self.state = None  # the last state seen

    def on_start(self, game, state, seed, players_meta) -> None:
        self.seen = set(state.cities)
        self.state = state
        self.start = next((u.tile for u in state.units.values() if u.owner == 0), -1)

    def on_turn_end(self, state) -> None:
        self.state = state
        for cid, c in state.cities.items():
            if cid not in self.seen:
                self.seen.add(cid)
                if c.owner == 0:
                    self.tiles.append(c.tile)

    def summary(self) -> dict:
        """The row's `foundings` field."""
        state = self.state
        from nlmcs.games.civ.ai import UNREACHABLE, land_distances
        from nlmcs.games.civ.variants import land_share

        m = state.map
        sacred = m.sacred
        steps = None
        if self.start >= 0 and sacred >= 0:
            dist = land_distances(state, self.start)
            near = min((dist[t] for t in range(m.n) if m.terr[t] == sacred), default=UNREACHABLE)
            steps = None if near >= UNREACHABLE else int(near)
        return {
            "terrain": state.tables.terrain_names[sacred] if sacred >= 0 else None,
            "cities": len(self.tiles),
            "sacred": sum(1 for t in self.tiles if m.terr[t] == sacred),
            "sacred_reachable": steps is not None,
            "sacred_steps": steps,
            "chance_share": round(land_share(m, sacred), 6) if sacred >= 0 else None,
        }
