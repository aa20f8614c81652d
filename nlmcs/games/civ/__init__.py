"""A compact two-player FreeCiv-style game: the forward model the planners search in.

`CivGame(CivConfig(...))` makes states; rules are data (`data/rulesets/classic.json`, FreeCiv's
classic numbers). See docs/game.md for the rules in brief.
"""

from nlmcs.games.civ.game import CivConfig, CivGame
from nlmcs.games.civ.state import CivState

__all__ = ["CivConfig", "CivGame", "CivState"]
