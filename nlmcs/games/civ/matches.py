"""Series of games between two scripted players, and the engine benchmark.

`play_matches` alternates sides every game (so neither player always moves first or keeps the
same start) and writes one CSV row per game. `bench_engine` measures simulated turns per second
from a mid-game position with random play for every agent, the way the search uses the engine.
"""

from __future__ import annotations

import csv
import io
import math
import os
import resource
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nlmcs.games.civ.game import CivConfig, CivGame
from nlmcs.games.runner import play_game

CSV_FIELDS = ("game", "seed", "player0", "player1", "winner", "winner_name", "turns", "score0",
              "score1", "cities0", "cities1", "units0", "units1")


@dataclass
class MatchSummary:
    games: int
    wins: dict[str, int]
    draws: int
    csv_path: Path | None

    def win_rate(self, name: str) -> tuple[float, float]:
        """Win share of `name` and its standard error."""
        p = self.wins.get(name, 0) / max(1, self.games)
        return p, math.sqrt(p * (1 - p) / max(1, self.games))


def play_matches(*, config: CivConfig, players: tuple[str, str], games: int, turns: int,
                 seed: int = 0, out: str | Path | None = None, progress=None) -> MatchSummary:
    game = CivGame(config)
    rows = []
    wins = {players[0]: 0, players[1]: 0}
    draws = 0
    for k in range(games):
        order = players if k % 2 == 0 else (players[1], players[0])
        pols = {0: game.policy(order[0]), 1: game.policy(order[1])}
        r = play_game(game, pols, seed=seed + k, max_turns=turns)
        name = order[r.winner] if r.winner is not None else ""
        if name:
            wins[name] += 1
        else:
            draws += 1
        rows.append({
            "game": k, "seed": seed + k, "player0": order[0], "player1": order[1],
            "winner": "" if r.winner is None else r.winner, "winner_name": name, "turns": r.turns,
            "score0": round(r.scores[0], 2), "score1": round(r.scores[1], 2),
            "cities0": int(r.stats[0]["cities"]), "cities1": int(r.stats[1]["cities"]),
            "units0": int(r.stats[0]["units"]), "units1": int(r.stats[1]["units"]),
        })
        if progress is not None:
            progress(k + 1, games)
    path = None
    if out is not None:
        path = Path(out)
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=CSV_FIELDS)
        writer.writeheader()
        writer.writerows(rows)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(buf.getvalue())
        os.replace(tmp, path)
    return MatchSummary(games=games, wins=wins, draws=draws, csv_path=path)


def midgame_state(game: CivGame, *, seed: int = 0, turns: int = 50):
    """The position the benchmark starts from: built-in AIs play `turns` turns from `seed`."""
    pols = {p: game.policy("builtin:normal") for p in range(game.num_players)}
    state = game.new_initial_state(seed)
    play_game(game, pols, seed=seed, max_turns=turns, state=state)
    return state


def bench_engine(*, config: CivConfig | None = None, rollouts: int = 200, depth: int = 20,
                 seed: int = 0, midgame_turns: int = 50) -> dict[str, float]:
    """Random roll-outs of `depth` turns from a mid-game position; returns the figures."""
    from nlmcs.games.civ.policies import RandomPolicy

    game = CivGame(config or CivConfig())
    root = midgame_state(game, seed=seed, turns=midgame_turns)
    root.max_turns = root.turn + depth + 1  # roll-outs are never cut short by the turn limit
    policy = RandomPolicy()
    rng = np.random.default_rng(seed)
    n = game.num_players
    t0 = time.perf_counter()
    for _ in range(1000):
        root.clone()
    clone_us = (time.perf_counter() - t0) / 1000 * 1e6


    def run(pols, count):
        turns = decisions = 0
        t0 = time.perf_counter()
        for _ in range(count):
            s = root.clone()
            for _ in range(depth):
                if s.is_terminal():
                    break
                joint = {p: pols[p].joint_action(s, p, rng) for p in range(n)}
                decisions += sum(len(j) for j in joint.values())
                s.apply_joint_actions(joint, rng)
                turns += 1
        return turns, decisions, time.perf_counter() - t0

    turns, decisions, elapsed = run([policy] * n, rollouts)
    # The same roll-outs with the built-in AI moving every other player (opponent modelling).
    ai_pols = [policy] + [game.policy("builtin:normal")] * (n - 1)
    ai_turns, _, ai_elapsed = run(ai_pols, max(1, rollouts // 4))
    return {
        "map_tiles": game.config.width * game.config.height,
        "start_turn": root.turn,
        "start_units": len(root.units),
        "start_cities": len(root.cities),
        "rollouts": rollouts,
        "depth": depth,
        "simulated_turns": turns,
        "turns_per_second": turns / elapsed,
        "agent_decisions_per_second": decisions / elapsed,
        "turns_per_second_vs_builtin_ai": ai_turns / ai_elapsed,
        "clone_microseconds": clone_us,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
