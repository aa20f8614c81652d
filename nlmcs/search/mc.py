"""Monte-Carlo search with an online-learned value function (Branavan, Silver & Barzilay 2011).

At every real step: reset the evaluator's weights, run `rollouts` roll-outs of `depth` simulated
turns from the current state, in which every agent of the player picks epsilon-greedily on Q
(epsilon drawn per roll-out) and every other player follows its scripted policy; learn from each
roll-out's reward with the datapoints of its first `learn_steps` steps; play the first joint move
of the best roll-out (or each agent's best mean Q).

Roll-outs run in fixed-size batches against one weight snapshot and the updates are applied in
roll-out order after each batch; roll-out k of step t draws from SeedSequence([seed, t, k]).
So a seed gives the same game whatever the number of worker processes. Steps after
`learn_steps` make no datapoints and rank candidates by E[Q] refreshed every `late_refresh`
batches (see `SearchConfig`), which keeps the roll-out policy cheap.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from nlmcs.games.base import Action, AgentId, State
from nlmcs.search.config import SearchConfig
from nlmcs.search.evaluator import Evaluator
from nlmcs.search.policies import make_rollout_policy, reward


@dataclass
class RolloutResult:
    index: int
    reward: float
    first: dict[AgentId, Action]
    datapoints: list = field(default_factory=list)


def rollout_rng(seed: int, step: int, index: int) -> np.random.Generator:
    """The one source of chance of roll-out `index` at real step `step`."""
    return np.random.default_rng(np.random.SeedSequence([seed, step, index]))


def epsilon_greedy(q: np.ndarray, eps: float, rng: np.random.Generator) -> int | None:
    """Index of the best Q (ties broken at random), or None for an exploratory move."""
    if rng.random() < eps:
        return None
    best = np.flatnonzero(q >= q.max() - 1e-12)
    return int(best[0]) if len(best) == 1 else int(best[int(rng.integers(len(best)))])


class RolloutCore:
    """Everything one roll-out needs; a copy lives in each worker process."""

    def __init__(self, game, evaluator: Evaluator, config: SearchConfig):
        self.game = game
        self.evaluator = evaluator
        self.config = config
        self.random_policy = make_rollout_policy(config.rollout, config.type_weights)
        self._opponents: dict[int, object] = {}
        self.batches_applied = 0

    def opponent(self, player: int):
        if player not in self._opponents:
            self._opponents[player] = self.game.policy(self.config.opponent)
        return self._opponents[player]

    def run(self, root: State, player: int, step: int, seed: int, index: int) -> RolloutResult:
        cfg = self.config
        rng = rollout_rng(seed, step, index)
        eps = float(rng.uniform(cfg.epsilon_low, cfg.epsilon_high))
        state = root.clone()
        first: dict[AgentId, Action] = {}
        datapoints: list = []
        for d in range(cfg.depth):
            if state.is_terminal():
                break
            learn = d < cfg.learn_steps
            joint = self.joint_move(state, player, eps, rng, learn=learn, datapoints=datapoints)
            if d == 0:
                first = dict(joint)
            moves = {p: self.opponent(p).joint_action(state, p, rng)
                     for p in range(state.num_players) if p != player}  # fmt: skip
            moves[player] = joint
            state.apply_joint_actions(moves, rng)
        r = reward(state, player, cfg.reward, cfg.reward_weights)
        return RolloutResult(index, r, first, datapoints)

    def joint_move(self, state, player, eps, rng, *, learn: bool, datapoints: list):
        cfg = self.config
        agents = state.agents(player)
        candidates = [(a, state.legal_actions(a)) for a in agents]
        sampled = cfg.early_q == "sampled" if learn else cfg.late_q == "sampled"
        stale = not learn and cfg.late_refresh > 1
        qs, dps = self.evaluator.q_values(state, candidates, sampled=sampled, rng=rng,
                                          stale=stale)  # fmt: skip
        joint: dict[AgentId, Action] = {}
        for i, (agent, actions) in enumerate(candidates):
            k = epsilon_greedy(qs[i], eps, rng)
            if k is None:
                action = self.random_policy.choose(state, agent, actions, rng)
                k = actions.index(action)
            else:
                action = actions[k]
            joint[agent] = action
            if learn:
                if dps is not None and dps[i][k] is not None:
                    datapoints.append(dps[i][k])
                else:
                    datapoints.append(self.evaluator.datapoint(state, agent, action, rng))
        return joint

    def apply(self, results: list[RolloutResult]) -> None:
        """Learn from one batch in roll-out order; every replica calls this with the same
        batches in the same order, so they stay identical."""
        for r in sorted(results, key=lambda r: r.index):
            self.evaluator.update(r.datapoints, r.reward)
        if results:
            self.batches_applied += 1
            if self.batches_applied % max(self.config.late_refresh, 1) == 0:
                self.evaluator.refresh()

    def reset(self) -> None:
        self.evaluator.reset()
        self.evaluator.refresh()
        self.batches_applied = 0


class MCPlanner:
    """The per-step search; `choose` returns the real joint move of `player`."""

    def __init__(self, *, game, evaluator: Evaluator, config: SearchConfig, seed: int):
        from nlmcs.search.workers import make_executor

        self.config = config
        self.seed = int(seed)
        self.core = RolloutCore(game, evaluator, config)
        self.executor = make_executor(self.core, config.workers)
        self.step = 0
        self.last_log: list[dict] = []
        self.last_stats: dict = {}

    def choose(self, state: State, player: int, rng: np.random.Generator) -> dict[AgentId, Action]:
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
        self.last_stats = {
            "step": self.step,
            "seconds": time.perf_counter() - t0,
            "mean_reward": float(np.mean(rewards)) if rewards else None,
            "best_reward": best.reward if best else None,
        }
        if cfg.log_decisions:
            self.last_log = self.explain(state, player, move, aux)
        self.step += 1
        return move

    def joint_action(self, state: State, player: int, rng) -> dict[AgentId, Action]:
        """So a planner is also a `Policy` for the game runner."""
        return self.choose(state, player, rng)

    def mean_q_move(self, state, player, rng) -> dict[AgentId, Action]:
        candidates = [(a, state.legal_actions(a)) for a in state.agents(player)]
        qs, _ = self.core.evaluator.q_values(state, candidates, sampled=False, rng=rng)
        return {a: acts[epsilon_greedy(q, 0.0, rng)] for (a, acts), q in zip(candidates, qs,
                                                                               strict=True)}

    def explain(self, state, player, move, rng) -> list[dict]:
        ev = self.core.evaluator
        candidates = [(a, state.legal_actions(a)) for a in state.agents(player)]
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
            if agent in move and hasattr(ev, "explain"):
                rec.update(ev.explain(state, agent, move[agent], rng))
            records.append(rec)
        return records

    def close(self) -> None:
        self.executor.close()
