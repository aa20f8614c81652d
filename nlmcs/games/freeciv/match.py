"""`make_game("freeciv", ...)`: games on a real FreeCiv server, for `nlmcs ablation --game
freeciv`. Not a forward model (the planners search in our engine, on the server's view
translated each turn); it holds the match's settings and names the opponent, FreeCiv's own AI.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from nlmcs.errors import UserInputError
from nlmcs.fields import check_fields, option
from nlmcs.games.freeciv.server import AI_LEVELS, ServerConfig


@dataclass(frozen=True)
class MatchConfig:
    """A match's settings (the server's map and length)."""

    max_turns: int = option(100, low=1)
    """The server ends the game after this turn."""
    xsize: int = option(40, low=16, high=200)
    """Map width in tiles."""
    ysize: int = option(25, low=16, high=200)
    """Map height in tiles."""
    ai_players: int = option(1, low=1, high=7)
    """FreeCiv AI players besides ours."""

    def __post_init__(self) -> None:
        check_fields(self, "freeciv option")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class FreeCivAI:
    """The opponent: every other player is FreeCiv's AI at `level`."""

    level: str


class FreeCivMatch:
    name = "freeciv"

    def __init__(self, *, max_turns: int = 100, xsize: int = 40, ysize: int = 25,
                 ai_players: int = 1):
        self.config = MatchConfig(max_turns, xsize, ysize, ai_players)
        self.num_players = ai_players + 1

    def policy(self, spec: str) -> FreeCivAI:
        kind, _, level = str(spec).partition(":")
        if kind != "freeciv" or level not in AI_LEVELS:
            raise UserInputError(f"the freeciv game is played against FreeCiv's AI: opponent "
                                 f"freeciv:{'|'.join(AI_LEVELS)}, not {spec!r}")
        return FreeCivAI(level)

    def server_config(self, *, seed: int, opponent: str) -> ServerConfig:
        c = self.config
        return ServerConfig(seed=seed, ai_players=c.ai_players,
                            ai_level=self.policy(opponent).level, xsize=c.xsize, ysize=c.ysize,
                            end_turn=c.max_turns)

    def planning_game(self):
        """The civ game our planners search on the server's view (`translate` makes the same
        one from the first turn's view): what a network or corpus must have been made for."""
        from nlmcs.games.civ import CivConfig, CivGame

        c = self.config
        return CivGame(CivConfig(width=c.xsize, height=c.ysize, num_players=self.num_players,
                                 max_turns=c.max_turns, wrap_x=True))  # the server's WRAPX

    @staticmethod
    def check_available() -> None:
        """The server program and the protocol definition are there (one clear line if not)."""
        from nlmcs.games.freeciv.protocol_source import packets_def_path
        from nlmcs.games.freeciv.server import find_binary

        find_binary()
        packets_def_path()
