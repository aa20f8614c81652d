"""The roll-out side of Monte-Carlo search with a learned value (Branavan et al. 2011).

`RolloutCore` plays one roll-out in which every agent of the searching player picks
epsilon-greedily on the evaluator's Q (epsilon drawn per roll-out from [epsilon_low,
epsilon_high]), keeps the datapoints of the first `learn_steps` simulated steps, and learns from
batches of finished roll-outs in roll-out order. One copy lives in every worker process
(`nlmcs.search.workers`); they stay identical because they apply the same batches in the same
order.

With a policy prior (`text-corpus`), each agent's choice at the root (depth 0) is biased: the
prior p over its candidates (mixed with `prior_floor` of uniform) is computed once per real step
and every roll-out picks epsilon-greedily on Q + `prior_weight` p, its exploratory moves drawn
from p instead of the roll-out policy. Early in a step, when the freshly reset Q says nothing,
the roll-outs try what recorded players did; as Q is learned it can overrule them. The prior is
a function of the root state, so every worker computes the same bias. Every other exploratory
move comes from the roll-out policy (`SearchConfig.rollout`, or one given, such as the corpus's
naive-Bayes policy); it travels to the workers with the core, so it must pickle.

On a board state, where the roll-out policy is the uniform one and Q is E[Q], the evaluator
may choose and play the turns in compiled calls of many turns (`ChoosesTurns.board_turns`, the
value network's tables; the root turn's picks come back as the roll-out's result), or one turn
at a time (`ChoosesTurns.board_joint`: a root turn that a policy prior biases is chosen in
Python): the same draws in the same order, so the same roll-outs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nlmcs.games.base import Action, AgentId, Game, Picks, State
from nlmcs.search.config import SearchConfig
from nlmcs.search.evaluator import Evaluator, Replica, WarmsUp
from nlmcs.search.policies import (
    RolloutPolicy,
    TypedRollout,
    UniformRollout,
    make_rollout_policy,
)
from nlmcs.search.rollout import Opponents, rollout, rollout_rng
from nlmcs.search.tree import Prior, policy


@dataclass
class RolloutResult:
    index: int
    reward: float
    first: dict[AgentId, Action]
    prepared: object = None  # the roll-out's datapoints (a replica's: made ready to learn from)


def epsilon_greedy(q: np.ndarray, eps: float, rng: np.random.Generator) -> int | None:
    """Index of the best Q (ties broken at random), or None for an exploratory move."""
    if rng.random() < eps:
        return None
    return greedy(q, rng)


def greedy(q: np.ndarray, rng: np.random.Generator) -> int:
    """Index of the best Q, ties broken at random."""
    values = q.tolist()  # a handful of candidates: plain floats beat numpy's per-call cost
    top = max(values) - 1e-12
    best = [i for i, x in enumerate(values) if x >= top]
    return best[0] if len(best) == 1 else best[int(rng.integers(len(best)))]


class RolloutCore:
    """Everything one roll-out needs; a copy lives in each worker process."""

    def __init__(self, game: Game, evaluator: Evaluator, config: SearchConfig,
                 prior: Prior | None = None, rollout_policy: RolloutPolicy | None = None):
        self.evaluator = evaluator
        self.config = config
        self.prior = prior
        self._bias_key: tuple | None = None  # the (player, step, seed) of the cached bias
        self._bias_root: State | None = None  # and its root (the object: ids are reused)
        self._actions: list = []  # `root_actions`, cached as the bias is
        self._actions_key: tuple | None = None
        self._actions_root: State | None = None
        self._bias: dict[AgentId, np.ndarray] = {}
        self.random_policy = rollout_policy or make_rollout_policy(config.rollout,
                                                                   config.type_weights)
        self.opponents = Opponents(game, config.opponent, config.engine)
        self._replica: tuple = (None, False)  # (evaluator, whether it is a `Replica`)

    @property
    def on_board(self) -> bool:
        """Whether roll-outs may play on the compiled engine's board: the roll-out policy asks
        only what a board state answers (the search's own questions: actions, labels, types)."""
        return type(self.random_policy) in (UniformRollout, TypedRollout)

    def warm_up(self) -> None:
        """What loads lazily, loaded now, so a first real step times only itself: the
        evaluator's compiled kernels, and the game's compiled engine through one throwaway
        roll-out from a fresh initial state, with opponents and chance of its own (the real
        game's opponents, roll-outs and evaluator are untouched)."""
        if isinstance(self.evaluator, WarmsUp):
            self.evaluator.warm_up()
        if self.config.engine != "compiled":
            return
        game = self.opponents.game
        rng = np.random.default_rng(0)

        def choose(state: State, depth: int) -> dict[AgentId, Action]:
            joint = {}
            for agent, actions in state.agent_actions(0):
                if actions:
                    state.candidate_labels(agent, actions)
                    joint[agent] = actions[int(rng.integers(len(actions)))]
            return joint

        turns, loaded = None, []
        if self.compiled_turns and hasattr(self.evaluator, "board_turns"):
            def turns(board, depth: int) -> int:
                """Load the compiled turns with a call that plays none (nothing drawn)."""
                if not loaded:
                    loaded.append(self.evaluator.board_turns(
                        board, 0, 0.0, rng, depth=depth, end=depth, learn_until=0,
                        datapoints=[]))
                return depth

        rollout(game.new_initial_state(0), 0, choose, config=self.config,
                opponents=Opponents(game, self.config.opponent, self.config.engine), rng=rng,
                uniform_from=lambda depth: depth > 0, on_board=self.on_board, turns=turns)

    def run(self, root: State, player: int, step: int, seed: int, index: int) -> RolloutResult:
        cfg = self.config
        rng = rollout_rng(seed, step, index)
        eps = float(rng.uniform(cfg.epsilon_low, cfg.epsilon_high))
        first: dict[AgentId, Action] = {}
        datapoints: list = []
        bias = self.root_bias(root, player, (step, seed))
        compiled = self.compiled_turns

        def choose(state: State, depth: int) -> dict[AgentId, Action] | Picks:
            joint = self.joint_move(state, player, eps, rng, learn=depth < cfg.learn_steps,
                                    datapoints=datapoints, bias=bias if depth == 0 else None,
                                    compiled=compiled)
            if depth == 0:  # the root's moves are the result: as actions
                if isinstance(joint, Picks):
                    first.update((agent, actions[k]) for (agent, actions), k in
                                 zip(state.agent_actions(player), joint.index.tolist(),
                                     strict=True))
                else:
                    first.update(joint)
            return joint

        turns = None
        if compiled and hasattr(self.evaluator, "board_turns"):
            def turns(board, depth: int) -> int:
                if depth == 0 and bias:
                    return 0
                picks: list = []
                acts = self.root_actions(root, board, player, (step, seed)) if depth == 0 else ()
                reached = self.evaluator.board_turns(
                    board, player, eps, rng, depth=depth, end=cfg.depth,
                    learn_until=cfg.learn_steps, datapoints=datapoints, root=picks)
                if picks:  # the root's moves are the result: as actions
                    first.update((agent, actions[k]) for (agent, actions), k in zip(
                        acts, picks[0].index.tolist(), strict=True))
                return reached

        r = rollout(root, player, choose, config=cfg, opponents=self.opponents, rng=rng,
                    on_board=self.on_board, when=(step, seed), turns=turns)
        return RolloutResult(index, r, first, self.prepared(datapoints))

    def prepared(self, datapoints: list) -> object:
        """What a finished roll-out hands on to be learned: a replica's prepared form, else the
        datapoints themselves. Whether the evaluator replicates is asked once per evaluator (a
        protocol's isinstance checks each member, ~50 us)."""
        evaluator = self.evaluator
        if self._replica[0] is not evaluator:
            self._replica = (evaluator, isinstance(evaluator, Replica))
        return evaluator.prepare(datapoints) if self._replica[1] else datapoints

    def root_bias(self, root: State, player: int, when: tuple = ()
                  ) -> dict[AgentId, np.ndarray]:
        """The prior policy of each of `player`'s agents at `root`, computed once per real step
        (`when`): a game played in place passes the same state object at every step."""
        if self.prior is None:
            return {}
        key = (player, *when)
        if self._bias_root is not root or self._bias_key != key:
            self._bias = {}
            for agent, actions in root.agent_actions(player):
                values = self.prior(root, agent, actions)
                if values is not None and actions:
                    self._bias[agent] = policy(values, len(actions), self.config.prior_floor)
            self._bias_root, self._bias_key = root, key
        return self._bias

    def root_actions(self, root: State, board: State, player: int, when: tuple
                     ) -> list[tuple[AgentId, list[Action]]]:
        """`player`'s agents and actions on a roll-out's board made from `root` at real step
        `when` (`agent_actions`, asked before the board's first turn), once per step: every
        roll-out of the step starts from the same board."""
        key = (player, *when)
        if self._actions_root is not root or self._actions_key != key:
            self._actions = board.agent_actions(player)
            self._actions_root, self._actions_key = root, key
        return self._actions

    @property
    def compiled_turns(self) -> bool:
        """Whether a turn without a root bias may be chosen in one compiled call
        (`ChoosesTurns`, on a board state): the evaluator can, the roll-out policy is the
        uniform one it draws, and Q is E[Q] in every turn."""
        cfg = self.config
        return (getattr(self.evaluator, "compiled_turns", False) and type(self.random_policy)
                is UniformRollout and cfg.early_q == cfg.late_q == "expected")

    def joint_move(self, state, player, eps, rng, *, learn: bool, datapoints: list,
                   bias: dict[AgentId, np.ndarray] | None = None, compiled: bool = False):
        cfg = self.config
        if compiled and not bias:
            picks = self.evaluator.board_joint(state, player, eps, rng, learn=learn,
                                               datapoints=datapoints)
            if picks is not None:
                return picks
        candidates = state.agent_actions(player)
        sampled = cfg.early_q == "sampled" if learn else cfg.late_q == "sampled"
        # E[Q] is asked per agent, and only of agents that do not explore (the same draws, in
        # the same order); sampled Q draws for every candidate, so it is asked for all first.
        qs, dps = None, None
        if sampled:
            qs, dps = self.evaluator.q_values(state, candidates, sampled=True, rng=rng)
        joint: dict[AgentId, Action] = {}
        for i, (agent, actions) in enumerate(candidates):
            p = bias.get(agent) if bias else None
            k = None  # explore (the draw epsilon_greedy makes), else the best Q
            if rng.random() >= eps:
                q = qs[i] if qs is not None else self.evaluator.q_values(
                    state, ((agent, actions),), sampled=False, rng=rng)[0][0]
                k = greedy(q if p is None else q + cfg.prior_weight * p, rng)
            if k is None and p is not None:
                k = int(rng.choice(len(actions), p=p))
                action = actions[k]
            elif k is None:
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

    def learn(self, results: list[RolloutResult]) -> None:
        """Learn from roll-outs of a batch in roll-out order (a batch may come in pieces, each
        piece after the ones before it); every replica learns the same batches in the same
        order, so they stay identical."""
        for r in sorted(results, key=lambda r: r.index):
            self.evaluator.learn(r.prepared, r.reward)

    def reset(self) -> None:
        self.evaluator.reset()
