"""Does masked PPO on `nlmcs/Civ-v0` learn? Train it briefly, then play it and the random masked
policy on the same evaluation seeds and compare them pair by pair.

    nlmcs env ppo --steps 16384 --train-seed 0 --eval-seeds 1000:1100

`sb3_contrib`'s `MaskablePPO` (the `rl` extra) trains on the environment exactly as
`gymnasium.make` returns it: no wrapper. Every random choice flows from a printed seed: PPO's
(torch, its sampling, the training games' seeds) from `--train-seed`; evaluation game s is
`env.reset(seed=s)` (map, start, the scripted opponent's moves), the random policy draws from
`SeedSequence([s, 2])`, and PPO plays greedily (its most likely legal move). Per game the
measures are the return (score gained, +1 / -1 for a win / loss before the turn limit), the final
score margin over the opponent, and the win; the comparison is paired by seed (`pair`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nlmcs.errors import UserInputError
from nlmcs.experiments.ablation import stats

ENV = {"map": "tiny", "max_turns": 30, "max_agents": 8, "max_actions": 24,
       "opponent": "builtin:easy"}
"""The game trained and evaluated on: small enough to train on one core in minutes."""


@dataclass(frozen=True)
class Game:
    """One evaluation game of one policy."""

    seed: int
    ret: float  # the episode's return
    margin: float  # own final score minus the opponent's
    won: bool


def make_env(**env):
    import gymnasium

    import nlmcs.envs  # noqa: F401  (registers nlmcs/Civ-v0)

    return gymnasium.make("nlmcs/Civ-v0", **{**ENV, **env})


def train(*, steps: int, seed: int, env: dict | None = None):
    """MaskablePPO trained `steps` environment steps from `seed` (one environment, CPU)."""
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    torch.set_num_threads(1)
    vec = DummyVecEnv([lambda: make_env(**(env or {}))])
    vec.seed(seed)
    model = MaskablePPO("MultiInputPolicy", vec, n_steps=256, batch_size=64, n_epochs=4,
                        seed=seed, device="cpu", verbose=0)
    return model.learn(total_timesteps=steps)


def play(model, seed: int, *, env: dict | None = None) -> Game:
    """Game `seed` played by `model` (greedy) or, for None, by the random masked policy."""
    game = make_env(**(env or {}))
    obs, _ = game.reset(seed=seed)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 2]))
    slots = len(game.action_space.nvec)
    total, done, info = 0.0, False, {}
    while not done:
        mask = game.action_masks()
        if model is None:
            rows = mask.reshape(slots, -1)
            action = np.array([rng.choice(np.flatnonzero(r)) if r.any() else 0 for r in rows])
        else:
            action, _ = model.predict(obs, action_masks=mask, deterministic=True)
        obs, reward, terminated, truncated, info = game.step(action)
        total += float(reward)
        done = terminated or truncated
    state = game.unwrapped.game_state
    margin = state.score(0) - max(state.score(p) for p in range(1, state.num_players))
    return Game(seed, total, float(margin), info.get("winner") == 0)


def pair(ppo: list[Game], rnd: list[Game], *, seed: int = 0) -> dict:
    """PPO against random on the same seeds: rates with Wilson intervals, paired differences
    with bootstrap intervals (seeded by `seed`) and two-sided paired p-values."""
    if [g.seed for g in ppo] != [g.seed for g in rnd] or not ppo:
        raise UserInputError("pair needs both policies' games on the same seeds, in order")
    n = len(ppo)
    out: dict = {"games": n}
    for name, games in (("ppo", ppo), ("random", rnd)):
        wins = sum(g.won for g in games)
        out[name] = {"return": stats.mean_se([g.ret for g in games]),
                     "margin": stats.mean_se([g.margin for g in games]),
                     "wins": wins, "win_interval": stats.wilson_interval(wins, n)}
    a, b = np.array([g.ret for g in ppo]), np.array([g.ret for g in rnd])
    ahead = int(np.sum(a > b))
    out["return_difference"] = stats.paired_bootstrap(a, b, seed=seed)
    out["return_p"] = stats.signed_rank_test(a - b)
    out["ahead"] = (ahead, int(np.sum(a < b)), stats.wilson_interval(ahead, n))
    out["margin_difference"] = stats.paired_bootstrap([g.margin for g in ppo],
                                                      [g.margin for g in rnd], seed=seed)
    won = stats.discordant([g.won for g in ppo], [g.won for g in rnd])
    out["win_difference"] = stats.paired_bootstrap([g.won for g in ppo], [g.won for g in rnd],
                                                   seed=seed)
    out["win_p"] = stats.sign_test(*won)
    return out


def report(result: dict) -> str:
    """The comparison as lines of text (what `main` prints)."""
    n = result["games"]
    lines = [f"{n} evaluation games per policy, paired by seed"]
    for name in ("ppo", "random"):
        r = result[name]
        (ret, ret_se), (mar, mar_se) = r["return"], r["margin"]
        low, high = r["win_interval"]
        lines.append(f"  {name:6s} return {ret:+.2f} (se {ret_se:.2f})  margin {mar:+.2f} "
                     f"(se {mar_se:.2f})  wins {r['wins']}/{n} = {r['wins'] / n:.2f} "
                     f"[Wilson 95% {low:.2f}, {high:.2f}]")
    d, low, high = result["return_difference"]
    lines.append(f"  return PPO - random {d:+.2f} [bootstrap 95% {low:+.2f}, {high:+.2f}], "
                 f"Wilcoxon signed-rank p = {result['return_p']:.2g}")
    more, fewer, (low, high) = result["ahead"]
    lines.append(f"  PPO's return higher on {more}/{n} seeds = {more / n:.2f} [Wilson 95% "
                 f"{low:.2f}, {high:.2f}], lower on {fewer}")
    d, low, high = result["margin_difference"]
    lines.append(f"  margin PPO - random {d:+.2f} [bootstrap 95% {low:+.2f}, {high:+.2f}]")
    d, low, high = result["win_difference"]
    lines.append(f"  win rate PPO - random {d:+.2f} [bootstrap 95% {low:+.2f}, {high:+.2f}], "
                 f"exact sign test p = {result['win_p']:.2g}")
    return "\n".join(lines)
