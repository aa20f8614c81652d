"""Flat UCB (Dobre & Lascarides 2015): one UCB1 bandit per agent over its root actions.

Each roll-out's first joint move comes from the agents' bandits; every later move from the
roll-out policy. With a prior (`flat-ucb-corpus`) the arms are informed by it as
`SearchConfig.prior_mode` says (`nlmcs.search.tree`): in "visits" mode (Dobre & Lascarides 2015)
an arm starts with `prior_visits` virtual visits at the prior's value, counted in the bandit's
total; in "puct" mode the prior is a policy and arms are selected by PUCT. The real move is each
agent's tried arm of highest mean, or under PUCT its most visited arm (as AlphaZero plays): a mean
over a handful of shared roll-outs is mostly noise, and the visit counts carry the prior
(`tree.final_choice`, shared with UCT).
"""

from __future__ import annotations

import time

from nlmcs.games.base import Action, AgentId, Game, State
from nlmcs.search.config import SearchConfig
from nlmcs.search.planner import step_stats
from nlmcs.search.policies import RolloutPolicy, UniformRollout, make_rollout_policy
from nlmcs.search.rollout import Opponents, rollout, rollout_rng
from nlmcs.search.tree import (
    Node,
    Prior,
    decision_record,
    final_choice,
    pick,
    puct,
    seeded_children,
    selection,
)


class FlatUCBPlanner:
    def __init__(self, *, game: Game, config: SearchConfig, seed: int, prior: Prior | None = None,
                 rollout_policy: RolloutPolicy | None = None):
        self.config = config
        self.seed = int(seed)
        self.prior = prior
        self.select, self.c = selection(config, prior)
        self.random_policy = rollout_policy or make_rollout_policy(config.rollout,
                                                                   config.type_weights)
        self.opponents = Opponents(game, config.opponent, config.engine)
        uniform = type(self.random_policy) is UniformRollout
        self.uniform_from = (lambda depth: depth >= 1) if uniform else None
        self.step = 0
        self.last_log: list[dict] = []
        self.last_stats: dict = {}

    def arms(self, state: State, agent: AgentId) -> dict[Action, Node]:
        """The agent's bandit arms at `state`, seeded from the prior."""
        return seeded_children(state, agent, state.legal_actions(agent), self.prior, self.config)

    def choose(self, state: State, player: int, rng) -> dict[AgentId, Action]:
        cfg = self.config
        t0 = time.perf_counter()
        agents = state.agents(player)
        arms = {a: self.arms(state, a) for a in agents}
        roots = {a: Node(sum(c.n for c in arms[a].values())) for a in agents}
        rewards = []
        for k in range(cfg.rollouts):
            r_rng = rollout_rng(self.seed, self.step, k)
            first: dict[AgentId, Action] = {}

            def move(sim: State, depth: int, first=first, r_rng=r_rng):
                if depth == 0:
                    for agent in agents:
                        first[agent] = pick(roots[agent], list(arms[agent]), arms[agent],
                                            self.c, r_rng, self.select)
                    return first
                return {a: self.random_policy.choose(sim, a, actions, r_rng)
                        for a, actions in sim.agent_actions(player)}

            r = rollout(state, player, move, config=cfg, opponents=self.opponents, rng=r_rng,
                        uniform_from=self.uniform_from)
            rewards.append(r)
            for agent, action in first.items():
                roots[agent].add(r)
                arms[agent][action].add(r)
        choice = {}
        for agent in agents:
            choice[agent] = final_choice(arms[agent], by_visits=self.select is puct)
        self.last_stats = step_stats(self.step, t0, rewards)
        if cfg.log_decisions:
            self.last_log = [
                decision_record(self.step, state, player, agent, choice[agent], arms[agent],
                                self.prior)
                for agent in agents
            ]
        self.step += 1
        return choice

    def close(self) -> None:
        pass
