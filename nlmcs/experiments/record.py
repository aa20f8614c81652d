"""Record games for a corpus: games in parallel processes, one log file per game.

Each game is played by `nlmcs.games.runner.play_game` with a `CorpusRecorder` hook writing the
nlmcs-corpus/1 log. A game's file appears only once the game is complete (the recorder writes
atomically), so an interrupted run resumes by skipping the seeds whose log already exists.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from nlmcs.errors import UserInputError
from nlmcs.search.workers import pin_threads

log = logging.getLogger(__name__)

SCRIPTED = ("builtin", "random", "greedy")


@dataclass(frozen=True)
class RecordConfig:
    """What to play. A player spec is "builtin[:easy|normal|hard]", "random", "greedy", or
    "search" (played by the search method `method` at `rollouts` roll-outs per step)."""

    games: int = 10
    players: tuple[str, ...] = ("builtin", "builtin")
    method: str | None = None
    rollouts: int = 50
    seed: int = 0  # game i uses seed + i
    workers: int = 2
    max_turns: int | None = None
    preset: str = "default"  # CivConfig.preset: "default" (40x25), "small" (16x12), "tiny"
    ruleset: str = "classic"
    record_states: bool = True  # False: leave each turn's full state out of the logs
    extra: dict = field(default_factory=dict)  # further CivConfig fields


def check_players(config: RecordConfig) -> None:
    if len(config.players) < 2:
        raise UserInputError("--players needs at least two comma-separated players")
    for spec in config.players:
        head = spec.split(":", 1)[0]
        if head == "search":
            if not config.method:
                raise UserInputError("a 'search' player needs --method (e.g. --method uct)")
        elif head not in SCRIPTED:
            raise UserInputError(f"unknown player {spec!r}: use builtin[:level], random, greedy "
                                 "or search")
    if config.games < 1 or config.workers < 1:
        raise UserInputError("--games and --workers must be at least 1")


def make_civ(config: RecordConfig):
    from nlmcs.games.civ import CivConfig, CivGame

    overrides = {"ruleset": config.ruleset, **config.extra}
    if config.max_turns is not None:
        overrides["max_turns"] = config.max_turns
    return CivGame(CivConfig.preset(config.preset, **overrides))


def _policy(game, spec: str, config: RecordConfig, seed: int):
    if spec.split(":", 1)[0] != "search":
        return game.policy(spec)
    from nlmcs.search.config import SearchConfig
    from nlmcs.search.methods import make_planner
    from nlmcs.search.planner import PlannerPolicy

    planner = make_planner(config.method, game=game, search_config=SearchConfig(
        rollouts=config.rollouts), seed=seed)
    return PlannerPolicy(planner, f"search:{config.method}")


def _play_one(config: RecordConfig, seed: int, path: str) -> str:
    """Worker: play one game and write its log; returns the path."""
    from nlmcs.games.record import CorpusRecorder
    from nlmcs.games.runner import play_game

    game = make_civ(config)
    policies = {p: _policy(game, spec, config, seed) for p, spec in enumerate(config.players)}
    recorder = CorpusRecorder(Path(path), record_states=config.record_states)
    play_game(game, policies, seed=seed, hooks=[recorder])
    return path


def record_games(*, out_dir: Path, config: RecordConfig,
                 progress: Callable[[int, int], None] | None = None) -> list[Path]:
    """Play `config.games` games into `out_dir/game-<seed>.jsonl`; skips logs already there."""
    check_players(config)
    out_dir.mkdir(parents=True, exist_ok=True)
    seeds = [config.seed + i for i in range(config.games)]
    paths = {s: out_dir / f"game-{s:07d}.jsonl" for s in seeds}
    todo = [s for s in seeds if not paths[s].exists()]
    done = len(seeds) - len(todo)
    if done:
        log.info("%d of %d games already recorded in %s", done, len(seeds), out_dir)
    if progress:
        progress(done, len(seeds))
    if config.workers == 1:
        for s in todo:
            _play_one(config, s, str(paths[s]))
            done += 1
            if progress:
                progress(done, len(seeds))
    else:
        with ProcessPoolExecutor(max_workers=config.workers, initializer=pin_threads) as pool:
            futures = [pool.submit(_play_one, config, s, str(paths[s])) for s in todo]
            for future in as_completed(futures):
                future.result()
                done += 1
                if progress:
                    progress(done, len(seeds))
    return [paths[s] for s in seeds]
