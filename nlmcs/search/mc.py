"""Monte-Carlo search with an online-learned value function (Branavan, Silver & Barzilay 2011).

At every real step: reset the evaluator's weights, run `rollouts` roll-outs of `depth` simulated
turns from the current state (`nlmcs.search.mc_rollouts`), learn from each roll-out's reward with
the datapoints of its first `learn_steps` steps, and play the first joint move of the best
roll-out (or each agent's best mean Q).

Roll-outs run in fixed-size batches against one weight snapshot and the updates are applied in
roll-out order after each batch; roll-out k of step t draws from SeedSequence([seed, t, k]).
So a seed gives the same game whatever the number of worker processes. Steps after
`learn_steps` make no datapoints and rank candidates by E[Q] under the current weights.

With a policy prior (`text-corpus`: the corpus policy) the root choices of every roll-out are
biased by it, as `nlmcs.search.mc_rollouts` describes.
"""

from __future__ import annotations

import time

import numpy as np

from nlmcs.games.base import Action, AgentId, Game, State
from nlmcs.search.config import SearchConfig
from nlmcs.search.evaluator import Evaluator, Explains
from nlmcs.search.mc_rollouts import RolloutCore, RolloutResult, greedy
from nlmcs.search.planner import step_stats
from nlmcs.search.policies import RolloutPolicy
from nlmcs.search.tree import Prior, prior_explanation
from nlmcs.search.workers import make_executor


class MCPlanner:
    """The per-step search; `choose` returns the real joint move of `player`."""

    def __init__(self, *, game: Game, evaluator: Evaluator, config: SearchConfig,
                 seed: int, prior: Prior | None = None,
                 rollout_policy: RolloutPolicy | None = None):
        self.config = config
        self.seed = int(seed)
        self.core = RolloutCore(game, evaluator, config, prior=prior,
                                rollout_policy=rollout_policy)
        self.core.warm_up()
        self.executor = make_executor(self.core, config.workers)
        self.step = 0
        self.last_log: list[dict] = []
        self.last_stats: dict = {}

    def choose(self, state: State, player: int, rng: np.random.Generator
               ) -> dict[AgentId, Action]:
        cfg = self.config
        t0 = time.perf_counter()
        self.executor.begin_step(state, player, self.step, self.seed)
        best: RolloutResult | None = None
        rewards = []
        for lo in range(0, cfg.rollouts, cfg.batch):
            results = self.executor.run_batch(list(range(lo, min(lo + cfg.batch, cfg.rollouts))))
            for r in results:
                rewards.append(r.reward)
                if best is None or r.reward > best.reward:
                    best = r
            self.executor.apply(results)
        self.executor.flush()
        aux = np.random.default_rng(np.random.SeedSequence([self.seed, self.step, 1 << 40]))
        if cfg.real_move == "mean-q" or best is None or not best.first:
            move = self.mean_q_move(state, player, aux)
        else:
            move = best.first
        self.last_stats = step_stats(self.step, t0, rewards)
        if cfg.log_decisions:
            self.last_log = self.explain(state, player, move, aux)
        self.step += 1
        return move

    def mean_q_move(self, state, player, rng) -> dict[AgentId, Action]:
        candidates = state.agent_actions(player)
        qs, _ = self.core.evaluator.q_values(state, candidates, sampled=False, rng=rng)
        return {a: acts[greedy(q, rng)]
                for (a, acts), q in zip(candidates, qs, strict=True)}

    def explain(self, state, player, move, rng) -> list[dict]:
        ev = self.core.evaluator
        candidates = state.agent_actions(player)
        qs, _ = ev.q_values(state, candidates, sampled=False, rng=rng)
        records = []
        for (agent, actions), q in zip(candidates, qs, strict=True):
            rec = {
                "step": self.step,
                "turn": int(state.turn),
                "player": player,
                "agent": agent,
                "action": list(move[agent]) if agent in move else None,
                "candidates": [{"action": list(a), "q": float(v)}
                               for a, v in zip(actions, q, strict=True)],  # fmt: skip
            }
            if agent in move and isinstance(ev, Explains):
                rec.update(ev.explain(state, agent, move[agent], rng))
            rec.update(prior_explanation(self.core.prior, state, agent, actions))
            records.append(rec)
        return records

    def close(self) -> None:
        self.executor.close()
