"""The one game loop: play a game between policies, with hooks that watch it.

Every caller that plays whole turns (corpus recording, `nlmcs play`, `nlmcs game play|series`,
benchmark positions) goes through `play_game`; the browser server, whose turns are driven by
requests, applies each order with `apply_decision`, which tells the hooks what the loop's
`apply_decisions` tells them for a whole joint action. The loop asks the players for their joint
actions in seat order, then applies them one agent at a time in exactly the order
`State.apply_joint_actions` uses (players in turn-rotating order, agents in the order the policy
returned them), so a hook sees the state vector before and after each decision; this is what the
corpus recorder stores. Side jobs (recording, decision logs, progress) live in hook objects,
never in the engine or the loop.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from nlmcs.games.base import Action, AgentId, Game, Policy, State
from nlmcs.seeds import chance_rng

ENGINES = ("compiled", "python")
"""`play_game`'s engines: compiled where the game has the players in compiled code, else (and
always with "python") the reference loop below."""


@dataclass
class GameResult:
    winner: int | None
    turns: int
    scores: list[float]
    seed: int
    stats: list[dict[str, float]] = field(default_factory=list)
    played: int = 0
    """Turns played by this call (`turns` counts from the game's start)."""
    finished: bool = False
    """The game is over (a winner, or the turn limit); False when `max_turns` stopped it."""


class GameHook:
    """A side job of the game loop. Every event is a no-op here: a hook overrides the ones it
    watches. Only hooks that override `on_decision` cost the loop the state vectors around each
    action."""

    def on_start(self, game: Game, state: State, seed: int, players_meta: list[dict]) -> None:
        """Before the first turn; `players_meta` as `policy_meta` names the players."""

    def on_turn(self, state: State) -> None:
        """At the start of a turn, before any player chooses."""

    def on_choice(self, state: State, player: int, actions: Mapping[AgentId, Action]) -> None:
        """Right after `player` chose its joint action (players choose in seat order, all
        from the same state at the start of the turn)."""

    def on_decision(self, state_before_vec: np.ndarray, state: State, turn: int, player: int,
                    agent: AgentId, action: Action, applied: bool,
                    after_vec: np.ndarray) -> None:
        """After one agent's action, with `player`'s state vectors before and after it (read
        them, do not change them: the loop hands the one after on as the next one's before)."""

    def on_turn_end(self, state: State) -> None:
        """After the turn closed (`State.end_turn`)."""

    def on_end(self, state: State, result: GameResult) -> None:
        """After the last turn (not when the game is interrupted)."""


def watches_decisions(hook: GameHook) -> bool:
    return type(hook).on_decision is not GameHook.on_decision


def apply_decision(state: State, turn: int, player: int, agent: AgentId, action: Action,
                   rng: np.random.Generator, watchers: Sequence[GameHook] = ()) -> bool:
    """Apply one agent's action, telling `watchers` (hooks that watch decisions) with the
    player's state vectors around it; returns whether it applied."""
    if not watchers:
        return state.apply_action(agent, action, rng)
    before = state.state_vector(player)
    applied = state.apply_action(agent, action, rng)
    after = state.state_vector(player)
    for h in watchers:
        h.on_decision(before, state, turn, player, agent, action, applied, after)
    return applied


def apply_decisions(state: State, turn: int, player: int, joint: Mapping[AgentId, Action],
                    rng: np.random.Generator, watchers: Sequence[GameHook] = ()) -> None:
    """Apply `player`'s joint action agent by agent, as `apply_decision` does each. Nothing
    moves between one decision and the next, so the state vector after one is the next one's
    before: each is computed once (the vectors are most of what recording a game costs)."""
    if not watchers or not joint:
        for agent, action in joint.items():
            state.apply_action(agent, action, rng)
        return
    before = state.state_vector(player)
    before.flags.writeable = False
    for agent, action in joint.items():
        applied = state.apply_action(agent, action, rng)
        after = state.state_vector(player)
        after.flags.writeable = False  # every watcher gets it twice: after this, before the next
        for h in watchers:
            h.on_decision(before, state, turn, player, agent, action, applied, after)
        before = after


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
    rng: np.random.Generator | None = None,
    engine: str = "compiled",
) -> GameResult:
    """Play from the seeded start (or `state`) until the game ends or `max_turns` more turns.

    All chance, the players' included, draws from one generator (`rng`, by default the game's
    chance stream `nlmcs.seeds.chance_rng(seed)`), so a game replays exactly. With `engine`
    "compiled" (the default) a game without hooks between players the game has in compiled
    code (the civ game's random player and built-in AI) is played there: the same game, the
    generator left where this loop would leave it; "python" always plays it here.
    """
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r} (known: {', '.join(ENGINES)})")
    rng = rng if rng is not None else chance_rng(seed)
    state = state if state is not None else game.new_initial_state(seed)
    n = state.num_players
    missing = [p for p in range(n) if p not in policies]
    if missing:
        raise ValueError(f"no policy for player(s) {missing}")
    meta = [policy_meta(p, policies[p]) for p in range(n)]
    for h in hooks:
        h.on_start(game, state, seed, meta)
    watchers = [h for h in hooks if watches_decisions(h)]
    played = 0
    fast = None
    if engine == "compiled" and not hooks and not state.is_terminal():
        fast = game.compiled_players(state, [policies[p] for p in range(n)])
    if fast is not None:
        played = fast.play_in_place(state, max_turns, rng)
    while fast is None and not state.is_terminal() and (max_turns is None or played < max_turns):
        for h in hooks:
            h.on_turn(state)
        joint = {}
        for p in range(n):
            joint[p] = policies[p].joint_action(state, p, rng)
            for h in hooks:
                h.on_choice(state, p, joint[p])
        turn = state.turn
        for player in state.player_order():
            apply_decisions(state, turn, player, joint[player], rng, watchers)
        state.end_turn(rng)
        played += 1
        for h in hooks:
            h.on_turn_end(state)
    finished = state.is_terminal()
    result = GameResult(
        winner=state.winner() if finished else None,
        turns=state.turn,
        scores=[float(state.score(p)) for p in range(n)],
        seed=seed,
        stats=[state.stats(p) for p in range(n)],
        played=played,
        finished=finished,
    )
    for h in hooks:
        h.on_end(state, result)
    return result
