"""Simulated turns per second of the civ engine, the way the search uses it.

From a mid-game position (built-in AIs play `midgame_turns` turns from the seed), random
roll-outs of `depth` turns for every agent, then the same with the built-in AI moving the
opponent (as inside the search's roll-outs). Library side of `nlmcs bench engine`.
"""

from __future__ import annotations

import resource
import time

import numpy as np

from nlmcs.experiments.positions import start_position
from nlmcs.games.civ import CivGame

FIGURES = ("map_tiles", "start_turn", "start_units", "start_cities", "rollouts", "depth",
           "simulated_turns", "turns_per_second", "agent_decisions_per_second",
           "turns_per_second_vs_builtin_ai", "clone_microseconds", "peak_rss_mib",
           "legal_us_reference", "legal_us_compiled", "legal_us_compiled_kernel",
           "turns_per_second_compiled", "compiled_speedup", "clone_microseconds_compiled",
           "turns_per_second_vs_builtin_ai_compiled", "compiled_speedup_vs_builtin_ai",
           "state_vector_us", "recorded_decisions_per_second")
"""What `bench_engine` returns, in order (the columns of `nlmcs bench engine --out`). The
`legal_us_*` figures time listing every agent's legal actions for both players at the start
position: the Python reference, the compiled kernel with the conversion of the Python state to
a board, and the kernel alone (what it costs once the state lives on a board). The `*_compiled`
figures are the same random roll-outs played by the compiled engine (a board copied per
roll-out, its turns in one call), with random players and with the built-in AI moving the
opponent; a `compiled_speedup*` divides the compiled turns per second by the reference's, both
measured in this run. `state_vector_us` is one player's state vector at the start position
(what the corpus recorder reads before and after every decision, and a corpus prior per
candidate), `recorded_decisions_per_second` the decisions of `depth` turns of built-in AIs
from there recorded as a corpus log (`corpus record`'s work per game, file included)."""


def bench_engine(*, game: CivGame, rollouts: int = 200, depth: int = 20, seed: int = 0,
                 midgame_turns: int = 50) -> dict[str, float]:
    """Random roll-outs of `depth` turns from a mid-game position; returns the figures."""
    root = start_position(game, seed=seed, turns=midgame_turns)
    root.max_turns = root.turn + depth + 1  # roll-outs are never cut short by the turn limit
    policy = game.policy("random")
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
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # before numba is loaded
    legal = legal_microseconds(root)
    compiled = compiled_rollouts(root, [policy] * n, rollouts=rollouts, depth=depth, seed=seed)
    compiled_ai = compiled_rollouts(root, ai_pols, rollouts=max(1, rollouts // 4), depth=depth,
                                    seed=seed)
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
        "peak_rss_mib": peak,
        **legal,
        "turns_per_second_compiled": compiled["turns_per_second"],
        "compiled_speedup": compiled["turns_per_second"] / (turns / elapsed),
        "clone_microseconds_compiled": compiled["clone_microseconds"],
        "turns_per_second_vs_builtin_ai_compiled": compiled_ai["turns_per_second"],
        "compiled_speedup_vs_builtin_ai": compiled_ai["turns_per_second"] / (ai_turns / ai_elapsed),
        **recording(game, root, depth=depth, seed=seed),
    }


def recording(game: CivGame, root, *, depth: int, seed: int, repeat: int = 300
              ) -> dict[str, float]:
    """`bench_engine`'s recording figures (see FIGURES)."""
    import tempfile
    from pathlib import Path

    from nlmcs.games.record import CorpusRecorder
    from nlmcs.games.runner import GameHook, play_game

    players = range(root.num_players)
    t0 = time.perf_counter()
    for _ in range(repeat):
        for p in players:
            root.state_vector(p)
    vector_us = (time.perf_counter() - t0) / (repeat * len(players)) * 1e6

    class Count(GameHook):
        decisions = 0

        def on_decision(self, *args) -> None:
            self.decisions += 1

    count = Count()
    pols = {p: game.policy("builtin:normal") for p in players}
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        play_game(game, pols, seed=seed, max_turns=depth, state=root.clone(),
                  hooks=[CorpusRecorder(Path(tmp) / "game.jsonl"), count])
        elapsed = time.perf_counter() - t0
    return {"state_vector_us": vector_us,
            "recorded_decisions_per_second": count.decisions / elapsed}


def compiled_rollouts(root, policies, *, rollouts: int, depth: int,
                      seed: int) -> dict[str, float]:
    """`bench_engine`'s roll-outs of `policies` on the compiled engine: turns per second (a
    board copy per roll-out included) and the copy's microseconds."""
    from nlmcs.games.civ.compiled.board import copy, pack
    from nlmcs.games.civ.compiled.play import Engine

    board = pack(root, spare=64)
    engine = Engine(root, policies)
    rng = np.random.default_rng(seed)
    engine.play(copy(board), depth, rng)  # compile, or load the machine code
    turns = 0
    t0 = time.perf_counter()
    for _ in range(rollouts):
        turns += engine.play(copy(board), depth, rng)[1]
    elapsed = time.perf_counter() - t0
    t0 = time.perf_counter()
    for _ in range(1000):
        copy(board)
    return {"turns_per_second": turns / elapsed,
            "clone_microseconds": (time.perf_counter() - t0) / 1000 * 1e6}


def legal_microseconds(s, repeat: int = 300) -> dict[str, float]:
    """Microseconds to list both players' legal actions in `s`, each way (see FIGURES)."""
    from nlmcs.games.civ import legal
    from nlmcs.games.civ.compiled import legal as fast
    from nlmcs.games.civ.compiled.board import map_consts, pack, rule_consts

    players = range(s.num_players)
    board, mk, rk = pack(s), map_consts(s), rule_consts(s)
    for p in players:  # compile (or load the cached machine code) before timing
        fast.actions_of(board, mk, rk, p)

    def timed(f) -> float:
        t0 = time.perf_counter()
        for _ in range(repeat):
            f()
        return (time.perf_counter() - t0) / repeat * 1e6

    return {
        "legal_us_reference": timed(lambda: [legal.agents_with_actions(s, p) for p in players]),
        "legal_us_compiled": timed(lambda: [fast.actions_of(b, mk, rk, p) for b in [pack(s)]
                                            for p in players]),
        "legal_us_compiled_kernel": timed(lambda: [fast.actions_of(board, mk, rk, p)
                                                   for p in players]),
    }
