"""The positions benchmarks time from: the seed's start, or a later turn of a built-in AI game.

A search's step costs more as the game fills with units and cities (at 500 x 20 the text search's
steps took ~4 s in a game's first turns and 6-7 s from turn 30 on), so a benchmark that only
times the start position understates what a user waits in a real game.
"""

from __future__ import annotations

from nlmcs.errors import UserInputError
from nlmcs.games.base import Game, State
from nlmcs.games.runner import play_game


def start_position(game: Game, *, seed: int, turns: int = 0) -> State:
    """The seed's start position after the built-in AIs have played `turns` turns for every
    player (the same position for the same seed)."""
    state = game.new_initial_state(seed)
    if turns:
        pols = {p: game.policy("builtin:normal") for p in range(game.num_players)}
        play_game(game, pols, seed=seed, max_turns=turns, state=state)
        if state.is_terminal():
            raise UserInputError(f"the built-in AIs' game of seed {seed} is over at turn "
                                 f"{state.turn}, so it has no turn {turns} to start from: ask "
                                 f"for a turn before {state.turn}")
    return state
