"""Games that only tests register: the search tests' toy game, put in the table of games
(`nlmcs.games.registry`) while the generic state tests run, so they check it like any other."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from nlmcs.games import GameEntry, register_game, unregister_game

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "search"))  # toy_game.py


def _toy(**options):
    from toy_game import ToyGame

    return ToyGame(**options)


def _toy_kinds() -> tuple[str, ...]:
    from toy_game import TOY_ACTION_KINDS

    return TOY_ACTION_KINDS


TEST_GAMES = (GameEntry(name="toy", summary="the search tests' toy game", make=_toy,
                        simulated=True, action_kinds=_toy_kinds),)


@contextmanager
def extra_games_registered() -> Iterator[None]:
    """The test games are in the table inside the block, and gone after it."""
    for entry in TEST_GAMES:
        register_game(entry)
    try:
        yield
    finally:
        for entry in TEST_GAMES:
            unregister_game(entry.name)
