"""The one roll-out loop every planner shares, its source of chance, and its reward.

A roll-out clones the root, lets the searching player's `choose(state, depth)` and every other
player's scripted policy move for up to `depth` turns (through `nlmcs.games.base.step`), and
scores the state it ends in. From the depth where the searching player only draws uniform
roll-out moves (a tree search beyond its tree), the rest is played in one call to the game's
compiled engine where it has one for these players (`SearchConfig.engine`): the same turns.
A planner whose `choose` asks only what a board state answers (the MC search with the uniform
or typed roll-out policy) plays the whole roll-out on the compiled engine's board
(`Opponents.board_state`, `Game.compiled_states`), its joint moves handed to the board's turn.
The loop is one: a Python-engine roll-out is driven through `Turns`, which has the board
state's `play_turn` (`nlmcs.games.base.BoardState`, the typed interface a second game's
compiled engine implements to get these fast paths).
Planners differ only in `choose` (epsilon-greedy on Q, a UCT tree walk, a root bandit) and in
what they learn from the reward. Roll-out k of real step t draws all its chance from
`rollout_rng(seed, t, k)`, so a roll-out's result does not depend on the process that runs it.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from nlmcs.games.base import (
    UNIFORM_ROLLOUT,
    BoardState,
    CompiledPlayers,
    Game,
    JointAction,
    Policy,
    State,
    step,
)
from nlmcs.search.config import SearchConfig
from nlmcs.search.tree import Leaf

Chooser = Callable[[State, int], JointAction]
"""`choose(state, depth) -> joint action` of the searching player at simulated step `depth`."""


def rollout_rng(seed: int, step: int, index: int) -> np.random.Generator:
    """The one source of chance of roll-out `index` at real step `step`."""
    return np.random.default_rng(np.random.SeedSequence([seed, step, index]))


class Opponents:
    """The scripted policy of every other player inside roll-outs, one per player, made on
    first use and kept for the planner's life (the built-in AI keeps per-player caches)."""

    def __init__(self, game: Game, spec: str, engine: str = "python"):
        self.game = game
        self.spec = spec
        self.engine = engine
        self._policies: dict[int, Policy] = {}
        self._boards: dict[int, object] = {}  # per searching player: its board states' context
        self._root: tuple = (None, (), None, None)  # (root, key, context, board) last packed

    def of(self, state: State, player: int) -> dict[int, Policy]:
        """Policies of every player but `player`, in player order."""
        out = {}
        for p in range(state.num_players):
            if p != player:
                if p not in self._policies:
                    self._policies[p] = self.game.policy(self.spec)
                out[p] = self._policies[p]
        return out

    def compiled(self, state: State, player: int) -> CompiledPlayers | None:
        """The game's compiled engine for the rest of a roll-out in which `player` draws
        uniform roll-out moves and every other player its policy (None where there is none, or
        with engine "python")."""
        if self.engine != "compiled":
            return None
        others = self.of(state, player)
        players = [UNIFORM_ROLLOUT if p == player else others[p] for p in range(state.num_players)]
        return self.game.compiled_players(state, players, first=player)

    def board_state(self, state: State, player: int, when: tuple = ()) -> BoardState | None:
        """A copy of `state` on the compiled engine's board, every other player seated there
        with its policy, for roll-outs in which `player` gives its joint moves
        (`play_turn`); None where the game has no such engine, or with engine "python".
        `when` names the real step (say its number and seed): the roll-outs of one step start
        from one state, packed once and copied for each (a copy is ~30x cheaper)."""
        if self.engine != "compiled":
            return None
        ctx = self._boards.get(player)
        if ctx is None or not ctx.fits(state):
            others = self.of(state, player)
            ctx = self.game.compiled_states(state, [others.get(p) for p in
                                                    range(state.num_players)], player)
            if ctx is None:
                return None
            self._boards[player] = ctx
        if not when:
            return ctx.state(state)
        root, key, packed_ctx, board = self._root
        # the root object itself, not its id: a new state may reuse a freed one's address
        if root is not state or key != (player, *when) or packed_ctx is not ctx:
            board = ctx.packed(state)
            self._root = (state, (player, *when), ctx, board)
        return ctx.copied(board)


class Turns:
    """A roll-out's turns on the Python engine, with the interface of a compiled board state
    (`nlmcs.games.base.BoardState.play_turn`): one roll-out loop drives either; the rest of a
    roll-out whose searching player only draws uniform moves goes to the compiled players."""

    def __init__(self, state: State, player: int, opponents: Opponents):
        self.state, self.player, self.opponents = state, player, opponents

    def play_turn(self, player: int, joint: JointAction, rng: np.random.Generator) -> None:
        step(self.state, player, joint, self.opponents.of(self.state, player), rng)

    def finish_uniform(self, turns: int, rng: np.random.Generator) -> bool:
        """Play up to `turns` turns in which the searching player draws uniform roll-out moves
        on the game's compiled engine; False (nothing played) where it has none."""
        fast = self.opponents.compiled(self.state, self.player)
        if fast is None:
            return False
        fast.play_in_place(self.state, turns, rng)
        return True


def rollout(root: State, player: int, choose: Chooser, *, config: SearchConfig,
            opponents: Opponents, rng: np.random.Generator,
            leaf: Leaf | None = None,
            uniform_from: Callable[[int], bool] | None = None, on_board: bool = False,
            when: tuple = (), turns: Callable[[State, int], int] | None = None) -> float:
    """Play one roll-out of at most `config.depth` turns from `root`; return its reward, or,
    with `leaf` (a value network), `leaf(state, player)` of a state where the game goes on.
    `uniform_from(depth)`: whether, from `depth` on, `choose` would only draw the uniform
    roll-out policy's moves (then the compiled engine may play the rest). `on_board`: `choose`
    asks only what a board state answers, so the whole roll-out may play on the compiled
    engine's board (`Opponents.board_state`, `when` the real step the roll-out belongs to).
    `turns(board, depth)`: plays the turns from `depth` on such a board as `choose` would,
    as many as it can in compiled code, and returns the depth it reached (`depth` itself where
    that turn needs `choose`)."""
    board = opponents.board_state(root, player, when) if on_board and leaf is None else None
    if board is None:
        sim = Turns(root.clone(), player, opponents)
        state = sim.state
    else:
        sim = state = board
    depth = 0
    while depth < config.depth:
        if state.is_terminal():
            break
        if board is None and uniform_from is not None and uniform_from(depth) \
                and sim.finish_uniform(config.depth - depth, rng):
            break
        if board is not None and turns is not None:
            reached = turns(board, depth)
            if reached > depth:
                depth = reached
                continue
        sim.play_turn(player, choose(state, depth), rng)
        depth += 1
    if leaf is not None and not state.is_terminal():
        return float(leaf(state, player))
    return reward(state, player, config.reward, config.reward_weights)


def reward(state: State, player: int, kind: str = "ratio", weights=None) -> float:
    """Win 1, loss 0, else a bounded ratio of the player's totals against all others'."""
    if state.is_terminal():
        w = state.winner()
        if w is not None:
            return 1.0 if w == player else 0.0
    others = [p for p in range(state.num_players) if p != player]
    if kind == "ratio":
        return _ratio(state.score(player), sum(state.score(p) for p in others))
    mine = state.stats(player)
    theirs = [state.stats(p) for p in others]
    total = num = 0.0
    for key, wt in (weights or {}).items():
        if key in mine:
            num += wt * _ratio(mine[key], sum(t.get(key, 0.0) for t in theirs))
            total += wt
    return num / total if total else 0.5


def _ratio(mine: float, theirs: float) -> float:
    # Some stats (food surplus) go negative; clamp so the ratio stays a reward in [0, 1].
    mine, theirs = max(float(mine), 0.0), max(float(theirs), 0.0)
    s = mine + theirs
    return 0.5 if s <= 0 else mine / s
