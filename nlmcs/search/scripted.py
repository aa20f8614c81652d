"""A scripted player seated where a planner sits: the variant ablations' oracle arms, and
FreeCiv's HOWTOPLAY.

`oracle` is the built-in AI that knows the variant game's rule (its settlers prefer the sacred
terrain), `oracle-blind` the same script without it; `howto` the built-in AI's rules at the
priorities of FreeCiv's own playing guide (`nlmcs.games.civ.ai.HowtoPlayer`). None searches:
each step is the script's joint action, free of search noise.
"""

from __future__ import annotations

import time

import numpy as np

from nlmcs.games.base import Action, AgentId, Game, State
from nlmcs.search.planner import step_stats

SCRIPT_LEVEL = "normal"
"""The oracle arms play the built-in AI's normal level (the ablations' usual opponent)."""


class ScriptedPlanner:
    """`Planner` over the civ built-in AI: `script` "oracle" (knowing the variant's rule),
    "blind" (not knowing it) or "howto"."""

    def __init__(self, *, game: Game, script: str):
        from nlmcs.games.civ.ai import BuiltinAI, HowtoPlayer

        if getattr(game, "name", None) != "civ":
            from nlmcs.errors import UserInputError

            raise UserInputError("the scripted arms script the civ game's built-in AI; "
                                 f"game {getattr(game, 'name', game)!r} has none")
        self.policy = HowtoPlayer() if script == "howto" else BuiltinAI(
            SCRIPT_LEVEL, knows_rule=script == "oracle")
        self.last_stats: dict = {}
        self.last_log: list[dict] = []
        self.steps = 0

    def choose(self, state: State, player: int, rng: np.random.Generator
               ) -> dict[AgentId, Action]:
        t0 = time.perf_counter()
        move = self.policy.joint_action(state, player, rng)
        self.last_stats = step_stats(self.steps, t0, [])
        self.steps += 1
        return move

    def close(self) -> None:
        """Nothing to release."""
