"""UCT with one search tree per agent (the MC tree search baseline of Branavan et al. 2011).

Each agent of the searching player grows its own tree over its own action sequence (the other
agents' moves are part of the environment), selecting by UCB1 inside the tree and by the
roll-out policy beyond it; one node is added per agent per roll-out. With a prior (for
`uct-corpus`, corpus priors after Dobre & Lascarides 2015) a new node's children are informed by
it as `SearchConfig.prior_mode` says: a policy for PUCT selection, or the paper's virtual visits
(`nlmcs.search.tree`). The real move is each agent's root child of most real visits
(`tree.final_choice`: a prior's virtual visits never make an untried move the choice).

With a `leaf` value (the policy/value network of `puct-net`) a roll-out's last state is scored
by it instead of by the game's reward; self-play mixes Dirichlet noise into the root priors
(`root_noise`), as AlphaZero does.

With `SearchConfig.root` "gumbel" and a policy prior, each agent's root picks by Gumbel root
selection with sequential halving instead (`nlmcs.search.gumbel`), for small budgets; with
`SearchConfig.forced_k` the PUCT root takes forced playouts (`tree.forced_choice`).

The trees are updated after every roll-out, so UCT runs its roll-outs in this process; its
results are the same for a seed whatever `workers` says.
"""

from __future__ import annotations

import time

import numpy as np

from nlmcs.games.base import Action, AgentId, Game, State
from nlmcs.search.config import SearchConfig
from nlmcs.search.gumbel import GumbelRoot, round_ends
from nlmcs.search.planner import step_stats
from nlmcs.search.policies import RolloutPolicy, UniformRollout, make_rollout_policy
from nlmcs.search.rollout import Opponents, rollout, rollout_rng
from nlmcs.search.tree import (
    Leaf,
    Node,
    Prior,
    Select,
    decision_record,
    final_choice,
    forced_choice,
    pick,
    seeded_children,
    selection,
)


class UCTPlanner:
    def __init__(self, *, game: Game, config: SearchConfig, seed: int, prior: Prior | None = None,
                 rollout_policy: RolloutPolicy | None = None, select: Select | None = None,
                 leaf: Leaf | None = None,
                 root_noise: tuple[float, float] | None = None):
        self.config = config
        self.leaf = leaf
        self.root_noise = root_noise
        """(alpha, share): root priors become (1 - share) p + share Dirichlet(alpha)."""
        self.seed = int(seed)
        self.prior = prior
        rule, self.c = selection(config, prior)
        self.select = select or rule
        self.random_policy = rollout_policy or make_rollout_policy(config.rollout,
                                                                   config.type_weights)
        self.opponents = Opponents(game, config.opponent, config.engine)
        self.uniform = type(self.random_policy) is UniformRollout
        self.step = 0
        self.last_log: list[dict] = []
        self.last_stats: dict = {}
        self.roots: dict[AgentId, Node] = {}

    def choose(self, state: State, player: int, rng) -> dict[AgentId, Action]:
        cfg = self.config
        t0 = time.perf_counter()
        self.roots = {a: Node() for a in state.agents(player)}
        gumbel = self._gumbel_roots(state, player) if self._gumbel else {}
        ends = round_ends(cfg.rollouts, list(gumbel.values())) if gumbel else set()
        rewards = []
        for k in range(cfg.rollouts):
            r_rng = rollout_rng(self.seed, self.step, k)
            current: dict[AgentId, Node | None] = dict(self.roots)
            paths: dict[AgentId, list[Node]] = {a: [n] for a, n in self.roots.items()}

            def walk(sim: State, depth: int, current=current, paths=paths, r_rng=r_rng):
                joint = {}
                for agent, actions in sim.agent_actions(player):
                    node = current.get(agent)
                    if node is None:
                        joint[agent] = self.random_policy.choose(sim, agent, actions, r_rng)
                        continue
                    if node.children is None:
                        node.children = seeded_children(sim, agent, actions, self.prior, cfg)
                        if self.root_noise is not None and node is self.roots[agent]:
                            add_noise(node.children, *self.root_noise, r_rng)
                    action = None
                    if depth == 0 and agent in gumbel:
                        action = gumbel[agent].forced()
                    elif depth == 0 and self._forced:
                        action = forced_choice(node, actions, node.children, cfg.forced_k)
                    if action is None:
                        action = pick(node, actions, node.children, self.c, r_rng,
                                      self.select)
                    child = node.children[action]
                    paths[agent].append(child)
                    # Leave the tree after adding a node this roll-out.
                    current[agent] = child if child.real > 0 else None
                    joint[agent] = action
                return joint

            def beyond_tree(depth: int, current=current) -> bool:
                return all(node is None for node in current.values())

            r = rollout(state, player, walk, config=cfg, opponents=self.opponents, rng=r_rng,
                        leaf=self.leaf, uniform_from=beyond_tree if self.uniform else None)
            rewards.append(r)
            for path in paths.values():
                for node in path:
                    node.add(r)
            if k in ends:
                for root in gumbel.values():
                    root.halve()
        move = {}
        for agent, root in self.roots.items():
            if agent in gumbel:
                move[agent] = gumbel[agent].choice()
            elif root.children:
                move[agent] = final_choice(root.children, by_visits=True)
        self.last_stats = step_stats(self.step, t0, rewards)
        if cfg.log_decisions:
            self.last_log = [
                decision_record(self.step, state, player, agent, move.get(agent), root.children,
                                self.prior)
                for agent, root in self.roots.items()
            ]
        self.step += 1
        return move

    @property
    def _gumbel(self) -> bool:
        return self.config.root == "gumbel" and self.prior is not None \
            and self.config.prior_mode == "puct"

    @property
    def _forced(self) -> bool:
        """Forced playouts at the roots: PUCT with a policy prior and `forced_k` set."""
        return self.config.forced_k > 0 and self.prior is not None \
            and self.config.prior_mode == "puct"

    def _gumbel_roots(self, state: State, player: int) -> dict[AgentId, GumbelRoot]:
        """Each agent's root expanded now (its prior, and self-play's noise), with its Gumbel
        draws from a stream of this step's own (`nlmcs.search.gumbel`)."""
        cfg = self.config
        rng = np.random.default_rng(np.random.SeedSequence([self.seed, self.step, 1 << 41]))
        out = {}
        for agent, actions in state.agent_actions(player):
            if not actions:
                continue
            root = self.roots[agent]
            root.children = seeded_children(state, agent, list(actions), self.prior, cfg)
            if self.root_noise is not None:
                add_noise(root.children, *self.root_noise, rng)
            out[agent] = GumbelRoot(root.children, cfg.gumbel_k, rng, cfg.gumbel_c_visit,
                                    cfg.gumbel_c_scale)
        return out

    def close(self) -> None:
        pass


def add_noise(children: dict[Action, Node], alpha: float, share: float,
              rng: np.random.Generator) -> None:
    """Mix Dirichlet(alpha) noise into the children's priors (exploration in self-play)."""
    if len(children) < 2:
        return
    noise = rng.dirichlet(np.full(len(children), alpha))
    for child, eta in zip(children.values(), noise, strict=True):
        child.p = (1.0 - share) * child.p + share * float(eta)
