"""The one seam between planners and whatever plays games with them.

Every method (MC with a value network, UCT, flat UCB) is a `Planner`: at each real step it is
handed the state and returns the joint action of its player; `last_stats` and `last_log` describe
that step. `PlannerPolicy` lets the game runner seat a planner like any scripted player.
"""

from __future__ import annotations

import time
from typing import Protocol

import numpy as np

from nlmcs.games.base import Action, AgentId, State


class Planner(Protocol):
    last_stats: dict
    """The last step's summary: step, seconds, mean_reward, best_reward."""
    last_log: list[dict]
    """The last step's decision records, one per agent (when the search config logs them)."""

    def choose(self, state: State, player: int, rng: np.random.Generator
               ) -> dict[AgentId, Action]:
        """Search from `state` and return `player`'s joint action for this real step."""

    def close(self) -> None:
        """Release worker processes; the planner is not used again."""


class PlannerPolicy:
    """A planner seated as a `Policy` (what `nlmcs.games.runner.play_game` asks players for);
    the corpus names such a player "search"."""

    kind = "search"

    def __init__(self, planner: Planner, name: str):
        self.planner = planner
        self.name = name

    def joint_action(self, state: State, player: int, rng: np.random.Generator
                     ) -> dict[AgentId, Action]:
        return self.planner.choose(state, player, rng)


def step_stats(step: int, t0: float, rewards: list[float]) -> dict:
    """The per-step summary every planner reports in `last_stats`."""
    return {
        "step": step,
        "seconds": time.perf_counter() - t0,
        "mean_reward": float(np.mean(rewards)) if rewards else None,
        "best_reward": float(max(rewards)) if rewards else None,
    }
