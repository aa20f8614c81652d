"""UCT with one search tree per agent (the MC tree search baseline of Branavan et al. 2011).

Each agent of the searching player grows its own tree over its own action sequence (the other
agents' moves are part of the environment), selecting by UCB1 inside the tree and by the
roll-out policy beyond it; one node is added per agent per roll-out. An optional prior seeds a new
node's children with `prior_visits` virtual visits whose mean is the prior (Dobre & Lascarides
2015). The real move is each agent's most visited root child.

The trees are updated after every roll-out, so UCT runs its roll-outs in this process; its
results are the same for a seed whatever `workers` says.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

from nlmcs.games.base import Action, AgentId, State
from nlmcs.search.config import SearchConfig
from nlmcs.search.mc import rollout_rng
from nlmcs.search.policies import make_rollout_policy, reward

Prior = Callable[[State, AgentId, list[Action]], "list[float] | None"]


class Node:
    """Statistics of one agent's action sequence; children by action."""

    __slots__ = ("children", "n", "real", "total")

    def __init__(self, n: float = 0.0, total: float = 0.0):
        self.n = n  # visits, virtual ones from a prior included
        self.real = 0  # roll-outs that went through this node
        self.total = total  # sum of roll-out rewards (prior mean x virtual visits included)
        self.children: dict[Action, Node] | None = None  # None until first expanded

    @property
    def mean(self) -> float:
        return self.total / self.n if self.n else 0.0


def step_stats(step: int, t0: float, rewards: list[float]) -> dict:
    """The per-step summary every tree planner reports in `last_stats`."""
    return {
        "step": step,
        "seconds": time.perf_counter() - t0,
        "mean_reward": float(np.mean(rewards)) if rewards else None,
        "best_reward": float(max(rewards)) if rewards else None,
    }


def decision_record(step: int, state: State, player: int, agent: AgentId,
                    action: Action | None, children: dict | None) -> dict:
    """One decision-log line of a tree planner: the move and each root arm's visits and mean."""
    return {
        "step": step, "turn": int(state.turn), "player": player, "agent": agent,
        "action": list(action) if action is not None else None,
        "candidates": [{"action": list(a), "visits": c.n, "q": c.mean}
                       for a, c in (children or {}).items()],
    }  # fmt: skip


def ucb1(parent: Node, child: Node, c: float) -> float:
    if child.n == 0:
        return math.inf
    return child.mean + c * math.sqrt(math.log(max(parent.n, 1.0)) / child.n)


class UCTPlanner:
    def __init__(
        self,
        *,
        game,
        config: SearchConfig,
        seed: int,
        prior: Prior | None = None,
        prior_visits: int | None = None,
        select: Callable[[Node, Node, float], float] = ucb1,
    ):
        self.game = game
        self.config = config
        self.seed = int(seed)
        self.prior = prior
        self.prior_visits = config.prior_visits if prior_visits is None else prior_visits
        self.select = select
        self.random_policy = make_rollout_policy(config.rollout, config.type_weights)
        self._opponents: dict[int, object] = {}
        self.step = 0
        self.last_log: list[dict] = []
        self.last_stats: dict = {}
        self.roots: dict[AgentId, Node] = {}

    def _opponent(self, p: int):
        if p not in self._opponents:
            self._opponents[p] = self.game.policy(self.config.opponent)
        return self._opponents[p]

    def _expand(self, node: Node, state: State, agent: AgentId, actions: list[Action]) -> None:
        node.children = {}
        priors = self.prior(state, agent, actions) if self.prior is not None else None
        for i, a in enumerate(actions):
            if priors is not None:
                node.children[a] = Node(self.prior_visits, priors[i] * self.prior_visits)
            else:
                node.children[a] = Node()

    def _pick(self, node: Node, actions: list[Action], rng) -> Action:
        scores = np.array(
            [self.select(node, node.children.setdefault(a, Node()), self.config.uct_c)
             for a in actions]  # fmt: skip
        )
        best = np.flatnonzero(scores >= scores.max())
        return actions[int(best[int(rng.integers(len(best)))])]

    def choose(self, state: State, player: int, rng) -> dict[AgentId, Action]:
        cfg = self.config
        t0 = time.perf_counter()
        self.roots = {a: Node() for a in state.agents(player)}
        rewards = []
        for k in range(cfg.rollouts):
            r_rng = rollout_rng(self.seed, self.step, k)
            sim = state.clone()
            current: dict[AgentId, Node | None] = dict(self.roots)
            paths: dict[AgentId, list[Node]] = {a: [n] for a, n in self.roots.items()}
            for _ in range(cfg.depth):
                if sim.is_terminal():
                    break
                joint = {}
                for agent in sim.agents(player):
                    actions = sim.legal_actions(agent)
                    node = current.get(agent)
                    if node is None:
                        joint[agent] = self.random_policy.choose(sim, agent, actions, r_rng)
                        continue
                    if node.children is None:
                        self._expand(node, sim, agent, actions)
                    action = self._pick(node, actions, r_rng)
                    child = node.children[action]
                    paths[agent].append(child)
                    # Leave the tree after adding a node this roll-out.
                    current[agent] = child if child.real > 0 else None
                    joint[agent] = action
                moves = {p: self._opponent(p).joint_action(sim, p, r_rng)
                         for p in range(sim.num_players) if p != player}  # fmt: skip
                moves[player] = joint
                sim.apply_joint_actions(moves, r_rng)
            r = reward(sim, player, cfg.reward, cfg.reward_weights)
            rewards.append(r)
            for path in paths.values():
                for node in path:
                    node.n += 1
                    node.real += 1
                    node.total += r
        move = {}
        for agent, root in self.roots.items():
            if root.children:
                move[agent] = max(root.children.items(), key=lambda kv: (kv[1].n, kv[1].mean))[0]
        self.last_stats = step_stats(self.step, t0, rewards)
        if cfg.log_decisions:
            self.last_log = [
                decision_record(self.step, state, player, agent, move.get(agent), root.children)
                for agent, root in self.roots.items()
            ]
        self.step += 1
        return move

    def joint_action(self, state: State, player: int, rng) -> dict[AgentId, Action]:
        return self.choose(state, player, rng)

    def close(self) -> None:
        pass
