"""A network as an opponent (`--opponent net:FILE`, `net` for the shipped one): each agent plays
its most likely legal move under the network's policy, no search. A yardstick that keeps
meaning once the built-in AI is beaten: the previous generation's network."""

from __future__ import annotations

import numpy as np

from nlmcs.games.base import Action, AgentId, Game, State
from nlmcs.net.guide import load_guide

PREFIX = "net"
"""An opponent spec `net` (the shipped network) or `net:PATH` (a checkpoint)."""


def is_net_spec(spec: str) -> bool:
    return str(spec) == PREFIX or str(spec).startswith(PREFIX + ":")


class NetPolicy:
    """The network's greedy player: per agent the legal move of highest probability (ties to
    the first), from one forward pass per turn."""

    def __init__(self, game: Game, spec: str):
        path = str(spec)[len(PREFIX) + 1:] or None
        self.guide = load_guide(path, game)
        self.name = str(spec)

    def joint_action(self, state: State, player: int,
                     rng: np.random.Generator) -> dict[AgentId, Action]:
        policy = self.guide.position_policy(state, player)
        joint = {}
        for agent, actions in state.agent_actions(player):
            p = policy.get(agent)
            if actions and p is not None and len(p) == len(actions):
                joint[agent] = actions[int(np.argmax(p))]
        return joint
