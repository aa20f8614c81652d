"""Games the planners can play, all behind the interface in `nlmcs.games.base`.

`make_game(name, **kwargs)` builds a registered game; the table of games, and what each entry
tells the CLI, the corpus reader and the browser server, is `nlmcs.games.registry` (imports stay
lazy so `nlmcs --help` does not load every engine).
"""

from nlmcs.games.registry import (
    GameEntry,
    game_entries,
    game_entry,
    game_names,
    make_game,
    register_game,
    simulated_games,
    unregister_game,
)

__all__ = ["GameEntry", "game_entries", "game_entry", "game_names", "make_game", "register_game",
           "simulated_games", "unregister_game"]
