"""How the browser server is set up: one typed config, saved nowhere but checked at the CLI edge."""

from __future__ import annotations

from dataclasses import dataclass

from nlmcs.fields import check_fields, option
from nlmcs.games import game_entry

GAME = "civ"
"""The game the browser plays: the client draws this engine's map, units and cities. How to
make it and which maps it has come from the table of games (`nlmcs.games.registry`)."""
MAP_PRESETS = game_entry(GAME).maps
"""Map presets a new game may ask for."""


@dataclass(frozen=True)
class ServeConfig:
    """What every game of one server shares."""

    opponent: str = "builtin"
    """builtin[:easy|normal|hard], random, greedy, or a search method (uct, text, ...)."""
    corpus: str = "human-play"
    """Corpus whose `logs/` folder receives every game, and into which finished games are
    ingested (on request and at shutdown)."""
    map: str = "small"
    """Map preset of a new game when the client does not ask for another."""
    max_turns: int | None = option(None, low=1)
    """Turn limit of every game (None: the game's own, 100)."""
    ruleset: str = "classic"
    """Ruleset name or path."""
    human: int = option(0, low=0, high=1)
    """The human's seat; the opponent plays the other."""
    opponent_rollouts: int = option(20, low=1)
    """Roll-outs per turn of a search opponent."""
    opponent_depth: int = option(5, low=1)
    """Search budget of a search opponent per turn (kept small: the player waits for it)."""
    advice_rollouts: int = option(10, low=1)
    """Roll-outs of the text agent's advice."""
    advice_depth: int = option(4, low=1)
    """Search budget of the text agent's advice (one request, one search)."""
    manual: str = "civ-guide"
    """Manual the text agent reads for its advice (and a text opponent for its play)."""
    max_games: int = option(64, low=1)
    """Games held in memory at once; the least recently used is put back to its log (and
    resumed from it when asked for again)."""
    max_body_bytes: int = option(16_384, low=256)
    """Largest request body accepted; a move or an end of turn needs about 100 bytes."""
    new_games_per_minute: int = option(30, low=1)
    """New games the server starts in any minute; more are refused (429): each leaves a log
    on disk, and anyone who reaches the server can ask."""
    listed_logs: int = option(50, low=1)
    """Unfinished games on disk the game list offers (the newest by change): a list request
    reads no more logs than this, however many there are."""

    def __post_init__(self) -> None:
        check_fields(self, "serve option")
