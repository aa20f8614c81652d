"""`play` is the game runner's loop with the planner at seat 0 and its logging in hooks: it plays
the game a step-by-step loop plays (the planner's choice, then `base.step` with the opponents,
all chance from one `SeedSequence([seed, 1])` stream) and logs exactly that game."""

from __future__ import annotations

import json

import numpy as np

from nlmcs.experiments.play import make_player, play
from nlmcs.games import make_game
from nlmcs.games.base import step
from nlmcs.search.config import SearchConfig


def _planner(game, seed):
    return make_player("uct", game=game, opponent="random", seed=seed,
                       search_config=SearchConfig(rollouts=4, depth=2), log_decisions=True)


def test_play_plays_and_logs_the_step_by_step_game(tmp_path):
    game = make_game("civ", preset="tiny")
    seed, steps = 3, 4
    log = tmp_path / "log.jsonl"
    seen = []
    result = play(game=game, planner=_planner(game, seed), method="uct", opponent="random",
                  seed=seed, steps=steps, log_path=log, log_states=True,
                  log_header={"note": "x"}, on_step=lambda t, stats: seen.append((t, stats)))

    planner = _planner(game, seed)
    state = game.new_initial_state(seed)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 1]))
    opponents = {1: game.policy("random")}
    states, decisions = [], []
    for _ in range(steps):
        states.append(state.to_json())
        move = planner.choose(state, 0, rng)
        decisions += planner.last_log
        step(state, 0, move, opponents, rng)
    planner.close()

    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert records[0]["record"] == "game" and records[0]["note"] == "x"
    assert records[0]["steps"] == steps and records[0]["game"] == "civ"
    snapshots = [r for r in records if r.get("record") == "state"]
    assert [r["state"] for r in snapshots[:-1]] == json.loads(json.dumps(states))
    assert [r["step"] for r in snapshots] == [*range(steps), steps]
    assert snapshots[-1]["final"] and snapshots[-1]["state"] == json.loads(
        json.dumps(state.to_json()))
    assert [r for r in records if "record" not in r] == json.loads(json.dumps(decisions))
    # each step's decisions follow its state snapshot
    kinds = [r.get("record", "decision") for r in records]
    assert kinds[:3] == ["game", "state", "decision"] and kinds[-1] == "end"
    scores = [float(state.score(p)) for p in range(state.num_players)]
    assert (result.steps, result.scores, result.finished) == (steps, scores, False)
    assert records[-1]["steps"] == steps and records[-1]["scores"] == [round(s, 2)
                                                                        for s in scores]
    assert [t for t, _ in seen] == list(range(steps))
    assert seen[-1][1]["scores"] == scores and "seconds" in seen[-1][1]
    assert len(result.seconds_per_step) == steps
