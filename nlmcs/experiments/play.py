"""One game of a planner (player 0) against a scripted opponent, with an optional decision log.

Library side of `nlmcs play`. `make_player` builds the planner first (so a bad method, manual or
corpus is reported before anything runs), `play` plays the game.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from nlmcs.experiments.relevance.log import END, GAME, LOG_FORMAT, STATE
from nlmcs.files import AtomicFile
from nlmcs.games.base import Game
from nlmcs.games.base import step as play_step
from nlmcs.model.config import ModelConfig
from nlmcs.search.config import SearchConfig
from nlmcs.search.methods import CorpusOptions, make_planner
from nlmcs.search.planner import Planner


@dataclass
class PlayResult:
    method: str
    seed: int
    steps: int
    winner: int | None
    finished: bool
    scores: list[float]
    seconds_per_step: list[float] = field(default_factory=list)

    def summary(self) -> dict:
        sec = self.seconds_per_step
        return {
            "method": self.method,
            "seed": self.seed,
            "steps": self.steps,
            "finished": self.finished,
            "winner": self.winner,
            "scores": [round(s, 2) for s in self.scores],
            "mean_seconds_per_step": round(float(np.mean(sec)), 3) if sec else None,
        }


def make_player(method: str, *, game: Game, opponent: str, seed: int, manual=None,
                corpus: CorpusOptions | None = None, search_config: SearchConfig | None = None,
                model_config: ModelConfig | None = None, log_decisions: bool = False) -> Planner:
    """The planner of `method` for a game against `opponent`: roll-outs model every other
    player as `opponent` too."""
    cfg = replace(search_config or SearchConfig(), opponent=opponent, log_decisions=log_decisions)
    return make_planner(method, game=game, manual=manual, corpus=corpus, search_config=cfg,
                        model_config=model_config, seed=seed)


def play(*, game: Game, planner: Planner, method: str, opponent: str, seed: int, steps: int,
         log_path: Path | None = None, log_states: bool = False,
         log_header: Mapping | None = None,
         on_step: Callable[[int, dict], None] | None = None) -> PlayResult:
    """Play `planner` as player 0 against `game.policy(opponent)` for up to `steps` real steps,
    then close the planner.

    With `log_path`, every decision record (per agent: candidate actions with Q, candidate
    sentences with probabilities, the sampled sentence and its word labels) goes to a
    JSON-lines file that appears (atomically, with ordinary permissions) when the game ends or
    is interrupted (Ctrl-C, or SIGTERM through the CLI); records are strict JSON (a NaN is a
    bug, raised rather than written as a bare `NaN`). With
    `log_states` the log also holds a game record first (with `log_header`'s fields, e.g. the
    manual and configurations), each step's state before its decisions, the final state and
    the result (`nlmcs.experiments.relevance.log` describes them).
    """
    opponents = {p: game.policy(opponent) for p in range(1, game.num_players)}
    state = game.new_initial_state(seed)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 1]))
    result = PlayResult(method, seed, 0, None, False, [])
    out = log = None
    snapshots = log_path is not None and log_states
    try:
        if log_path is not None:
            out = AtomicFile(log_path)
            log = out.file
        if snapshots:
            log.write(_line(_game_record(game, method=method, opponent=opponent, seed=seed,
                                         steps=steps, extra=log_header)))
        for t in range(steps):
            if state.is_terminal():
                break
            if snapshots:
                log.write(_line(_state_record(state, t)))
            move = planner.choose(state, 0, rng)
            stats = dict(planner.last_stats)
            result.seconds_per_step.append(stats.get("seconds", 0.0))
            if log is not None:
                for rec in planner.last_log:
                    log.write(_line(rec))
            play_step(state, 0, move, opponents, rng)
            result.steps = t + 1
            if on_step is not None:
                on_step(t, {**stats, "scores": [state.score(p) for p in range(state.num_players)]})
        result.finished = state.is_terminal()
        result.winner = state.winner()
        result.scores = [float(state.score(p)) for p in range(state.num_players)]
        if snapshots:
            log.write(_line({**_state_record(state, result.steps), "final": True}))
            log.write(_line({"record": END, **result.summary()}))
    finally:
        planner.close()
        if out is not None:
            out.commit()  # the steps played so far are kept, whatever ended the game
    return result


def _line(record: Mapping) -> str:
    """One JSON line; NaN and infinities are refused, since they are not JSON."""
    return json.dumps(record, allow_nan=False) + "\n"


def _game_record(game: Game, *, method: str, opponent: str, seed: int, steps: int,
                 extra: Mapping | None) -> dict:
    config = getattr(game, "config", None)
    return {"record": GAME, "format": LOG_FORMAT, "method": method, "opponent": opponent,
            "seed": seed, "steps": steps, "game": game.name,
            "game_config": config.to_dict() if hasattr(config, "to_dict") else None,
            **(extra or {})}  # fmt: skip


def _state_record(state, step: int) -> dict:
    return {"record": STATE, "step": step, "turn": getattr(state, "turn", None),
            "scores": [round(float(state.score(p)), 3) for p in range(state.num_players)],
            "state": state.to_json()}  # fmt: skip
