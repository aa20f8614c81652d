"""Play one game between policies, with hooks that watch every decision.

The runner applies actions one agent at a time in exactly the order `State.apply_joint_actions`
uses (players in turn-rotating order, agents in the order the policy returned them), so a hook sees
the state vector before and after each decision; this is what the corpus recorder stores.
Side jobs (recording, statistics) live in hook objects, never in the engine.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from nlmcs.games.base import Action, AgentId, Game, Policy, State


@dataclass
class GameResult:
    winner: int | None
    turns: int
    scores: list[float]
    seed: int
    stats: list[dict[str, float]] = field(default_factory=list)


class GameHook(Protocol):
    def on_start(self, game: Game, state: State, seed: int, players_meta: list[dict]) -> None: ...

    def on_turn(self, state: State) -> None: ...

    def on_decision(self, state_before_vec: np.ndarray, state: State, turn: int, player: int,
                    agent: AgentId, action: Action, applied: bool,
                    after_vec: np.ndarray) -> None: ...

    def on_end(self, state: State, result: GameResult) -> None: ...


def policy_meta(player: int, policy: Policy) -> dict:
    """How the corpus names a player: scripted policies say their kind; anything else (a planner
    wrapped as a policy) counts as "search"."""
    kind = getattr(policy, "kind", None) or "search"
    return {"player": player, "kind": kind, "name": getattr(policy, "name", type(policy).__name__)}


def play_game(
    game: Game,
    policies: Mapping[int, Policy],
    *,
    seed: int,
    max_turns: int | None = None,
    hooks: Sequence[GameHook] = (),
    state: State | None = None,
) -> GameResult:
    """Play from the seeded start (or `state`) until the game ends or `max_turns` more turns.

    All chance draws from one generator seeded with `seed`, so a game replays exactly.
    """
    rng = np.random.default_rng(seed)
    state = state if state is not None else game.new_initial_state(seed)
    n = state.num_players
    missing = [p for p in range(n) if p not in policies]
    if missing:
        raise ValueError(f"no policy for player(s) {missing}")
    meta = [policy_meta(p, policies[p]) for p in range(n)]
    for h in hooks:
        h.on_start(game, state, seed, meta)
    start = state.turn
    watch = bool(hooks)
    while not state.is_terminal() and (max_turns is None or state.turn - start < max_turns):
        for h in hooks:
            h.on_turn(state)
        joint = {p: policies[p].joint_action(state, p, rng) for p in range(n)}
        turn = state.turn
        for player in state.player_order():
            for agent, action in joint[player].items():
                if not watch:
                    state.apply_action(agent, action, rng)
                    continue
                before = state.state_vector(player)
                applied = state.apply_action(agent, action, rng)
                after = state.state_vector(player)
                for h in hooks:
                    h.on_decision(before, state, turn, player, agent, action, applied, after)
        state.end_turn(rng)
    winner = state.winner() if state.is_terminal() else None
    result = GameResult(
        winner=winner,
        turns=state.turn,
        scores=[float(state.score(p)) for p in range(n)],
        seed=seed,
        stats=[state.stats(p) for p in range(n)],
    )
    for h in hooks:
        h.on_end(state, result)
    return result
