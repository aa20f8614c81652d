"""Games the planners can play, all behind the interface in `nlmcs.games.base`.

`make_game(name, **kwargs)` builds a registered game; new games register a factory with
`register_game` (imports stay lazy so `nlmcs --help` does not load every engine).
"""

from __future__ import annotations

from collections.abc import Callable

from nlmcs.errors import UserInputError

_FACTORIES: dict[str, Callable[..., object]] = {}


def register_game(name: str, factory: Callable[..., object]) -> None:
    _FACTORIES[name] = factory


def _civ(**kwargs):
    from nlmcs.games.civ import CivConfig, CivGame

    preset = kwargs.pop("preset", None)
    config = kwargs.pop("config", None)
    if config is None:
        config = CivConfig.preset(preset) if preset else CivConfig()
    return CivGame(config, **kwargs)


register_game("civ", _civ)


def _freeciv(**kwargs):
    from nlmcs.games.freeciv.match import FreeCivMatch

    return FreeCivMatch(**kwargs)


register_game("freeciv", _freeciv)


def game_names() -> list[str]:
    return sorted(_FACTORIES)


def make_game(name: str, **kwargs):
    """A game by name, e.g. `make_game("civ", width=16, height=12)` or `make_game("civ",
    preset="small")`; unknown names and bad options raise `UserInputError`."""
    if name not in _FACTORIES:
        raise UserInputError(f"unknown game {name!r} (known: {', '.join(game_names())})")
    try:
        return _FACTORIES[name](**kwargs)
    except TypeError as err:
        raise UserInputError(f"bad option for game {name!r}: {err}") from err
