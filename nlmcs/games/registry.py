"""The one table of games: how to build each, and what the rest of the project asks of it.

The CLI (`--game`, `--map`, `--max-turns`), the corpus reader (which action kinds a recorded
game may use), the browser server (its maps) and the generic state tests all read a game's
`GameEntry` here instead of naming games themselves. Entries hold functions that import their
engine on first use, so reading the table (`nlmcs --help`) loads no engine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from nlmcs.errors import UserInputError


@dataclass(frozen=True)
class GameEntry:
    """One game the project can build."""

    name: str
    summary: str
    """A few words for `--game`'s help."""
    make: Callable[..., object]
    """Keyword options -> the game; a `nlmcs.games.base.Game` when `simulated`."""
    simulated: bool
    """True: its engine runs in this process, so planners search it, runners play it and the
    state tests check it. False: it is played elsewhere (a server) and `make` only describes
    the match."""
    maps: tuple[str, ...] = ()
    """Map presets its `preset` option takes, the default first; () for a game without them."""
    map_help: str = ""
    """What the presets are, for `--map`'s help."""
    variants: tuple[str, ...] = ()
    """Rule variants its `variant` option takes (`--variant`); () for a game without them."""
    action_kinds: Callable[[], tuple[str, ...]] | None = None
    """Every action kind its agents may choose, loaded on first use; the corpus reader refuses
    a recorded decision of another kind. None: the reader does not check kinds."""
    from_config: Callable[[dict], object] | None = None
    """The game that a recorded configuration (`game.config.to_dict()`, as a corpus log's or a
    decision log's header holds it) describes; None when the game records none."""

    def options(self, *, map_preset: str | None, max_turns: int | None,
                variant: str | None = None) -> dict:
        """`make`'s keyword options for the command line's `--map`, `--max-turns` and
        `--variant` (a game without maps takes no preset; no variant adds no option, so plain
        games keep the options they always had)."""
        kwargs: dict = {"preset": map_preset} if self.maps else {}
        if max_turns is not None:
            kwargs["max_turns"] = max_turns
        if variant:
            if variant not in self.variants:
                known = ", ".join(self.variants) or "none"
                raise UserInputError(f"unknown variant {variant!r} of game {self.name!r} "
                                     f"(known: {known})")
            kwargs["variant"] = variant
        return kwargs

    def rebuild(self, config: dict | None):
        """The game of a recorded configuration (the default game when none was recorded),
        to read the recorded states with."""
        if not self.simulated:
            raise UserInputError(f"game {self.name!r} runs on a server; its recorded states "
                                 "cannot be rebuilt here")
        if config and self.from_config is not None:
            return self.from_config(config)
        return self.make()


_GAMES: dict[str, GameEntry] = {}


def register_game(entry: GameEntry) -> None:
    """Add (or replace) a game; tests register their own games this way."""
    _GAMES[entry.name] = entry


def unregister_game(name: str) -> None:
    _GAMES.pop(name, None)


def game_names() -> list[str]:
    return sorted(_GAMES)


def game_entries() -> list[GameEntry]:
    """Every registered game, by name."""
    return [_GAMES[n] for n in game_names()]


def simulated_games() -> list[GameEntry]:
    """The games whose engine runs here, by name."""
    return [e for e in game_entries() if e.simulated]


def game_entry(name: str) -> GameEntry:
    """The entry of `name`; an unknown name is a `UserInputError` listing the known ones."""
    if name not in _GAMES:
        raise UserInputError(f"unknown game {name!r} (known: {', '.join(game_names())})")
    return _GAMES[name]


def make_game(name: str, **kwargs):
    """A game by name, e.g. `make_game("civ", width=16, height=12)` or `make_game("civ",
    preset="small")`; unknown names and bad options raise `UserInputError`."""
    entry = game_entry(name)
    try:
        return entry.make(**kwargs)
    except TypeError as err:
        raise UserInputError(f"bad option for game {name!r}: {err}") from err


def action_kinds(name: str) -> tuple[str, ...] | None:
    """The action kinds of game `name`, or None for a game that is not registered or does not
    list them (its recorded actions are then not checked)."""
    entry = _GAMES.get(name)
    if entry is None or entry.action_kinds is None:
        return None
    return tuple(entry.action_kinds())


# --- the games ----------------------------------------------------------------------------------
def _civ(**kwargs):
    from nlmcs.games.civ import CivConfig, CivGame

    preset = kwargs.pop("preset", None)
    config = kwargs.pop("config", None)
    if config is None:
        config = CivConfig.preset(preset) if preset else CivConfig()
    return CivGame(config, **kwargs)


def _civ_from_config(config: dict):
    """Fields this version does not know (from a newer recorder) are left out."""
    from nlmcs.games.civ import CivConfig, CivGame

    known = set(CivConfig.__dataclass_fields__)
    return CivGame(CivConfig(**{k: v for k, v in config.items() if k in known}))


def _civ_kinds() -> tuple[str, ...]:
    from nlmcs.games.civ.legal import ACTION_KINDS

    return tuple(ACTION_KINDS)


def _freeciv(**kwargs):
    from nlmcs.games.freeciv.match import FreeCivMatch

    return FreeCivMatch(**kwargs)


register_game(GameEntry(
    name="civ", summary="the FreeCiv-style engine of this package", make=_civ, simulated=True,
    maps=("default", "small", "tiny"), map_help="default 40x25, small 16x12, tiny 10x8",
    variants=("sacred-terrain", "sacred-terrain-end"),
    action_kinds=_civ_kinds, from_config=_civ_from_config,
))  # fmt: skip
register_game(GameEntry(
    name="freeciv", summary="a match on a local FreeCiv server against FreeCiv's AI",
    make=_freeciv, simulated=False,
))  # fmt: skip
