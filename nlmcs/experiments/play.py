"""One game of a planner (player 0) against a scripted opponent, with an optional decision log.

Library side of `nlmcs play`. `make_player` builds the planner first (so a bad method, manual or
corpus is reported before anything runs), `play` plays the game through the game runner's loop
(`nlmcs.games.runner.play_game`) with the planner seated as player 0; the step statistics, the
progress callback and the decision log are hooks of that loop (`PlannerSteps`,
`DecisionLogWriter`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TextIO

import numpy as np

from nlmcs.experiments.relevance.log import END, GAME, LOG_FORMAT, STATE
from nlmcs.files import AtomicFile
from nlmcs.games.base import Game, Policy, State
from nlmcs.games.runner import GameHook, GameResult, play_game
from nlmcs.methods import (
    CorpusOptions,
    NetOptions,
    ReaderOptions,
    make_planner,
    opponent_policy,
    rollout_opponent,
)
from nlmcs.model.config import ModelConfig
from nlmcs.search.config import SearchConfig
from nlmcs.search.planner import Planner, PlannerPolicy
from nlmcs.seeds import chance_rng


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
                model_config: ModelConfig | None = None, log_decisions: bool = False,
                reader: ReaderOptions | None = None, net: NetOptions | None = None
                ) -> Planner:
    """The planner of `method` for a game against `opponent`: roll-outs model every other
    player as `opponent` too (a network opponent by the built-in AI: `rollout_opponent`)."""
    cfg = replace(search_config or SearchConfig(), opponent=rollout_opponent(opponent),
                  log_decisions=log_decisions)
    return make_planner(method, game=game, manual=manual, corpus=corpus, search_config=cfg,
                        model_config=model_config, seed=seed, reader=reader, net=net)


def play(*, game: Game, planner: Planner, method: str, opponent: str, seed: int, steps: int,
         log_path: Path | None = None, log_states: bool = False,
         log_header: Mapping | None = None,
         on_step: Callable[[int, dict], None] | None = None,
         extra_hooks: Sequence[GameHook] = ()) -> PlayResult:
    """Play `planner` as player 0 against `opponent` (`methods.opponent_policy`) for up to
    `steps` real steps,
    then close the planner.

    With `log_path`, every decision record (per agent: candidate actions with Q, candidate
    sentences with probabilities, the sampled sentence and its word labels) goes to a
    JSON-lines file that appears (atomically, with ordinary permissions) when the game ends or
    is interrupted (Ctrl-C, or SIGTERM through the CLI); records are strict JSON (a NaN is a
    bug, raised rather than written as a bare `NaN`). The log starts with a game record (with
    `log_header`'s fields, e.g. the manual and configurations) and ends with the result; with
    `log_states` it also holds each step's state before its decisions and the final state
    (`nlmcs.experiments.relevance.log` describes them). `extra_hooks` watch the
    game too (an ablation's variant game counts foundings).
    """
    policies: dict[int, Policy] = {0: PlannerPolicy(planner, method)}
    policies.update({p: opponent_policy(game, opponent) for p in range(1, game.num_players)})
    rng = chance_rng(seed)  # the game's chance, apart from the map's stream (`nlmcs.seeds`)
    steps_hook = PlannerSteps(planner, method=method, seed=seed, on_step=on_step)
    hooks: list[GameHook] = [steps_hook, *extra_hooks]
    out = None
    try:
        if log_path is not None:
            out = AtomicFile(log_path)
            header = game_record(game, method=method, opponent=opponent, seed=seed,
                                  steps=steps, extra=log_header)
            hooks.append(DecisionLogWriter(out.file, planner, header=header, states=log_states,
                                           summary=steps_hook.result))
        game_result = play_game(game, policies, seed=seed, max_turns=steps, hooks=hooks,
                                rng=rng)
    finally:
        planner.close()
        if out is not None:
            out.commit()  # the steps played so far are kept, whatever ended the game
    return steps_hook.result(game_result)


class PlannerSteps(GameHook):
    """The planner's side of each real step (it sits at player 0): its statistics right after
    it chose, and `on_step(t, stats and scores)` once the step is played."""

    def __init__(self, planner: Planner, *, method: str, seed: int,
                 on_step: Callable[[int, dict], None] | None = None):
        self.planner = planner
        self.method = method
        self.seed = seed
        self.on_step = on_step
        self.stats: dict = {}
        self.seconds: list[float] = []
        self.played = 0

    def on_choice(self, state: State, player: int, actions) -> None:
        if player == 0:
            self.stats = dict(self.planner.last_stats)
            self.seconds.append(self.stats.get("seconds", 0.0))

    def on_turn_end(self, state: State) -> None:
        t = self.played
        self.played += 1
        if self.on_step is not None:
            scores = [state.score(p) for p in range(state.num_players)]
            self.on_step(t, {**self.stats, "scores": scores})

    def result(self, game_result: GameResult) -> PlayResult:
        r = game_result
        return PlayResult(self.method, self.seed, r.played, r.winner, r.finished, r.scores,
                          list(self.seconds))


class DecisionLogWriter(GameHook):
    """Writes the decision log: the game record (`header`) first, the planner's decision
    records after each of its choices, the end record (`summary(result)`'s `PlayResult`) last;
    with `states`, also each step's state before its decisions and the final state."""

    def __init__(self, file: TextIO, planner: Planner, *, header: Mapping, states: bool,
                 summary: Callable[[GameResult], PlayResult]):
        self.file = file
        self.planner = planner
        self.header = header
        self.states = states
        self.summary = summary
        self.step = 0

    def write(self, record: Mapping) -> None:
        self.file.write(log_line(record))

    def on_start(self, game: Game, state: State, seed: int, players_meta: list[dict]) -> None:
        self.write(self.header)

    def on_turn(self, state: State) -> None:
        if self.states:
            self.write(_state_record(state, self.step))

    def on_choice(self, state: State, player: int, actions) -> None:
        if player == 0:
            for rec in self.planner.last_log:
                self.write(rec)

    def on_turn_end(self, state: State) -> None:
        self.step += 1

    def on_end(self, state: State, result: GameResult) -> None:
        if self.states:
            self.write({**_state_record(state, result.played), "final": True})
        self.write({"record": END, **self.summary(result).summary()})


def log_line(record: Mapping) -> str:
    """One JSON line; NaN and infinities are refused, since they are not JSON."""
    return json.dumps(record, allow_nan=False) + "\n"


def manual_label(method: str, manual, *, twin_seed: int | None = None) -> str | None:
    """What a decision log's header names as the text `method` read: None for a method that
    reads nothing, the twin's name for one that reads the manual's random twin."""
    from nlmcs.methods import get_method
    from nlmcs.model.manuals import text_read

    reads = get_method(method).reads
    if reads == "nothing":
        return None
    if reads in ("random-twin", "unrelated"):
        text = text_read(manual, reads, twin_seed=twin_seed)
        return getattr(text, "name", None) or str(text)
    return str(manual)


def game_record(game: Game, *, method: str, opponent: str, seed: int, steps: int,
                extra: Mapping | None) -> dict:
    """A decision log's first record: the game, its configuration, who played, and `extra`."""
    config = getattr(game, "config", None)
    return {"record": GAME, "format": LOG_FORMAT, "method": method, "opponent": opponent,
            "seed": seed, "steps": steps, "game": game.name,
            "game_config": config.to_dict() if hasattr(config, "to_dict") else None,
            **(extra or {})}  # fmt: skip


def _state_record(state, step: int) -> dict:
    return {"record": STATE, "step": step, "turn": getattr(state, "turn", None),
            "scores": [round(float(state.score(p)), 3) for p in range(state.num_players)],
            "state": state.to_json()}  # fmt: skip
