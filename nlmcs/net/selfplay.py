"""Games the network plays to learn from, and games that judge it; each a job for a worker.

Self-play seats PUCT guided by the network on both sides (or on one side against a scripted
player). Inside each search the other player is modelled by the search config's scripted
opponent, as in every search here. At each real step the root's visit shares per agent are the
policy target; the move is drawn from them (temperature 1) for the first `temperature_turns`
turns and is the most visited one after; the root priors get Dirichlet noise. The game's result
for each player is the value target of that player's positions.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from nlmcs.fields import MAX_SEED, check_fields, option
from nlmcs.games.base import Action, AgentId
from nlmcs.net.samples import Samples, result_of
from nlmcs.search.tree import pruned_visits
from nlmcs.seeds import chance_rng


@dataclass(frozen=True)
class NetGameJob:
    """One game of the network's PUCT as player 0, for self-play or for judging."""

    net: str
    """Checkpoint path the workers load (one per generation)."""
    opponent: str
    """Player 1: "self" (the same network searching), "net:PATH" (another checkpoint's
    PUCT) or a scripted player spec."""
    game: str
    """The game's name (`nlmcs.games.make_game`)."""
    game_options: Mapping[str, object]
    """Its keyword options."""
    seed: int = option(low=0, high=MAX_SEED)
    """The game's seed."""
    rollouts: int = option(low=1)
    """PUCT simulations per step."""
    net_depth: int = option(low=1)
    """Simulated turns below the tree before the network's value scores the leaf."""
    value_weight: float = option(low=0.0, high=1.0)
    """A leaf's score: this share of the network's value, the rest the game's reward."""
    puct_c: float = option(above=0.0)
    """PUCT's exploration constant."""
    prior_floor: float = option(low=0.0, high=1.0)
    """Share of uniform mixed into the network's prior."""
    temperature_turns: int = option(0, low=0)
    """Self-play: turns in which moves are drawn from the visit shares."""
    dirichlet_alpha: float = option(0.3, above=0.0)
    """Self-play: concentration of the root noise."""
    noise_share: float = option(0.0, low=0.0, high=1.0)
    """Self-play: share of Dirichlet noise in the root priors (0 when judging)."""
    full_share: float = option(1.0, above=0.0, high=1.0)
    """Self-play: share of moves searched at `rollouts` (playout-cap randomisation)."""
    cheap_rollouts: int = option(8, low=1)
    """Self-play: roll-outs of the other moves, whose visits are no policy target."""
    forced_k: float = option(0.0, low=0.0, high=100.0)
    """Self-play: forced playouts at the root (`SearchConfig.forced_k`), taken back out of
    the policy targets (0: none)."""

    def __post_init__(self) -> None:
        check_fields(self, "network game option")


def _planner(job, guide, game, seed, noise: bool, rollouts: int | None = None):
    from nlmcs.net.guide import MixedLeaf
    from nlmcs.search.config import SearchConfig
    from nlmcs.search.uct import UCTPlanner

    config = SearchConfig(rollouts=rollouts or job.rollouts, depth=job.net_depth,
                          prior_mode="puct",
                          puct_c=job.puct_c, prior_floor=job.prior_floor, opponent="builtin",
                          forced_k=job.forced_k)
    return UCTPlanner(game=game, config=config, seed=seed, prior=guide,
                      leaf=MixedLeaf(guide, job.value_weight, config),
                      root_noise=(job.dirichlet_alpha, job.noise_share) if noise else None)


def selfplay_game(job: NetGameJob) -> dict:
    """Play one game; its samples and a summary (a dict, to cross process boundaries)."""
    from nlmcs.games import make_game
    from nlmcs.net.guide import load_guide

    started = time.perf_counter()
    game = make_game(job.game, **job.game_options)
    guide = load_guide(job.net, game)
    state = game.new_initial_state(job.seed)
    rng = chance_rng(job.seed)
    pick_rng = np.random.default_rng(np.random.SeedSequence([job.seed, 2]))
    searching = [0, 1] if job.opponent == "self" else [0]
    planners = {p: _planner(job, guide, game, job.seed * 2 + p, noise=True) for p in searching}
    # Playout-cap randomisation (Wu 2019): most moves get a cheap search that plays the game
    # on; only the full searches' visit shares are policy targets. Its own stream, drawn only
    # when it is on, so games with every move full are the games played before it existed.
    capped = job.full_share < 1.0
    cap_rng = np.random.default_rng(np.random.SeedSequence([job.seed, 3]))
    cheap = {p: _planner(job, guide, game, job.seed * 2 + p + 1_000_003, noise=False,
                         rollouts=job.cheap_rollouts) for p in searching} if capped else {}
    scripted = {p: game.policy(job.opponent) for p in range(game.num_players)
                if p not in planners}
    positions, targets, players = [], [], []
    while not state.is_terminal():
        joint = {}
        for p in range(state.num_players):
            if p in scripted:
                joint[p] = scripted[p].joint_action(state, p, rng)
                continue
            position = guide.encoder.encode(state, p)
            full = not capped or cap_rng.random() < job.full_share
            planner = planners[p] if full else cheap[p]
            move = planner.choose(state, p, rng)
            visits = _visit_shares(planner.roots, position.agents, position.actions,
                                   job.forced_k, job.puct_c)  # the target: forced looks out
            if state.turn < job.temperature_turns:
                shares = visits if job.forced_k <= 0 else _visit_shares(
                    planner.roots, position.agents, position.actions)
                move = _sample(shares, position.agents, position.actions, pick_rng)
            positions.append(position)
            if not full:  # a cheap search's visits teach nothing; the result still does
                visits = [np.zeros_like(v) for v in visits]
            targets.append(np.concatenate(visits) if visits else np.zeros(0, np.float32))
            players.append(p)
            joint[p] = move
        state.apply_joint_actions(joint, rng)
    winner = state.winner()
    samples = Samples.from_positions(positions, targets, [result_of(winner, p) for p in players])
    return {"samples": samples, "seed": job.seed, "winner": winner, "turns": int(state.turn),
            "scores": [float(state.score(p)) for p in range(state.num_players)],
            "seconds": time.perf_counter() - started}


def _visit_shares(roots, agents: list[AgentId], actions: list, forced_k: float = 0.0,
                  puct_c: float = 0.0) -> list[np.ndarray]:
    """Each agent's root visit shares; with forced playouts, pruned of them (the target)."""
    out = []
    for agent, legal in zip(agents, actions, strict=True):
        root = roots.get(agent)
        n = pruned_visits(root.children if root and root.children else {}, legal, forced_k,
                          puct_c).astype(np.float32)
        out.append(n / n.sum() if n.sum() > 0 else np.zeros(len(legal), np.float32))
    return out


def _sample(visits: list[np.ndarray], agents, actions, rng) -> dict[AgentId, Action]:
    move = {}
    for agent, legal, share in zip(agents, actions, visits, strict=True):
        if share.sum() > 0:
            move[agent] = legal[int(rng.choice(len(legal), p=share / share.sum()))]
    return move


def match_game(job: NetGameJob) -> dict:
    """A judging game: no noise, most visited moves."""
    from nlmcs.games import make_game
    from nlmcs.games.runner import play_game
    from nlmcs.net.guide import load_guide
    from nlmcs.search.planner import PlannerPolicy

    game = make_game(job.game, **job.game_options)
    policies = {0: PlannerPolicy(_planner(job, load_guide(job.net, game), game, job.seed,
                                          noise=job.noise_share > 0), "puct-net")}
    if job.opponent.startswith("net:"):
        other = load_guide(job.opponent[4:], game)
        policies[1] = PlannerPolicy(_planner(job, other, game, job.seed + 1, noise=False),
                                    "puct-net")
    else:
        policies[1] = game.policy(job.opponent)
    rng = chance_rng(job.seed)
    result = play_game(game, policies, seed=job.seed, rng=rng)
    return {"seed": job.seed, "opponent": job.opponent, "winner": result.winner,
            "margin": result.scores[0] - result.scores[1]}
