"""A rule as a player: a base policy that follows one rule of the manual, or breaks it.

Following a `do` rule (or breaking an `avoid` rule) *enforces* its action: wherever the rule
applies and the base chose otherwise, the player takes the first legal action that carries one
of the rule's labels. Breaking a `do` rule (or following an `avoid` rule) *forbids* it: where the
base chose a matching action, the player takes the rule's `instead` action if legal, else waits
if it may, else draws another legal action. Only the agents the base gives an action this turn
are touched (a worker busy irrigating is left to finish). Everything else is the base's own play,
so the paired difference between the two versions is what the rule is worth to that player.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from nlmcs.advice.rules import Rule
from nlmcs.games.base import Action, AgentId, Policy, State

Mode = Literal["follow", "break"]
WAIT = Action("wait")


class AdvisedPolicy:
    """`base` with `rule` followed or broken; `changes` counts the actions it replaced."""

    def __init__(self, base: Policy, rule: Rule, mode: Mode):
        if mode not in ("follow", "break"):
            raise ValueError(f"mode must be follow or break, not {mode!r}")
        self.base, self.rule, self.mode = base, rule, mode
        self.kind = getattr(base, "kind", "scripted")
        self.name = f"{getattr(base, 'name', type(base).__name__)}+{mode}:{rule.name}"
        self.enforce = (mode == "follow") == rule.recommends
        self.changes = 0

    def joint_action(self, state: State, player: int,
                     rng: np.random.Generator) -> dict[AgentId, Action]:
        joint = dict(self.base.joint_action(state, player, rng))
        rule = self.rule
        if self.mode == "break" and rule.break_until is not None and (
                state.turn >= rule.break_until):
            return joint
        civ = state.state_labels(f"civ:{player}")
        for agent, chosen in joint.items():
            if not rule.applies(state.agent_labels(agent), state.state_labels(agent), civ):
                continue
            choice = self._choose(state, agent, chosen, rng)
            if choice != chosen:
                joint[agent] = choice
                self.changes += 1
        return joint

    def _choose(self, state: State, agent: AgentId, chosen: Action,
                rng: np.random.Generator) -> Action:
        wanted = self.rule.action
        if self.enforce:
            if self._matches(state, agent, chosen, wanted):
                return chosen
            return self._first(state, agent, wanted) or chosen
        if not self._matches(state, agent, chosen, wanted):
            return chosen
        if self.rule.instead:
            alt = self._first(state, agent, self.rule.instead)
            if alt is not None:
                return alt
        legal = [a for a in state.legal_actions(agent)
                 if not self._matches(state, agent, a, wanted)]
        if WAIT in legal:
            return WAIT
        return legal[int(rng.integers(len(legal)))] if legal else chosen

    @staticmethod
    def _matches(state: State, agent: AgentId, action: Action, labels) -> bool:
        return not set(labels).isdisjoint(state.action_labels(agent, action))

    @staticmethod
    def _first(state: State, agent: AgentId, labels) -> Action | None:
        """The first legal action carrying the first label that any carries."""
        legal = state.legal_actions(agent)
        tagged = [(a, set(state.action_labels(agent, a))) for a in legal]
        for label in labels:
            for action, words in tagged:
                if label in words:
                    return action
        return None
