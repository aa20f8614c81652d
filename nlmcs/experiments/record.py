"""Record games for a corpus: games in parallel processes, one log file per game.

Each game is played by `nlmcs.games.runner.play_game` with a `CorpusRecorder` hook writing the
nlmcs-corpus/1 log. A game's file appears only once the game is complete (the recorder writes
atomically), so an interrupted run resumes by skipping the seeds whose log already exists; a log
recorded with other players or another map is not taken for one of this run's games but refused.
The games are played by the one job loop (`nlmcs.jobs.run_jobs`): the log folder is its store,
each log a whole file rather than a line, since the corpus reads the logs themselves. Workers
(`nlmcs.processes`) stop with the command, however it ends.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from nlmcs.errors import UserInputError
from nlmcs.fields import MAX_GAMES, MAX_SEED, check_fields, option
from nlmcs.files import sweep_folder
from nlmcs.games.base import SCRIPTED_PLAYERS
from nlmcs.jobs import WorkerLost, run_jobs
from nlmcs.processes import local_pool
from nlmcs.runs import FileStore
from nlmcs.seeds import LEGACY_CHANCE, game_seed, stored_rule

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RecordConfig:
    """What to play."""

    games: int = option(10, low=1, high=MAX_GAMES)
    """Games to record."""
    players: tuple[str, ...] = ("builtin", "builtin")
    """A player spec per seat: "builtin[:easy|normal|hard]", "howto", "random", "greedy", or
    "search" (played by the search method `method` at `rollouts` roll-outs per step)."""
    method: str | None = None
    """The search method of a "search" player."""
    rollouts: int = option(50, low=1)
    """Roll-outs per step of a "search" player."""
    seed: int = option(0, low=0, high=MAX_SEED)
    """Game i is played from `game_seed(seed, i)` (`nlmcs.seeds`)."""
    workers: int = option(2, low=1)
    """Games played at a time, one process each."""
    max_turns: int | None = option(None, low=1)
    """The game's turn limit (None: the preset's)."""
    preset: Literal["default", "small", "tiny"] = "default"
    """`CivConfig.preset`: "default" (40x25), "small" (16x12), "tiny" (10x8)."""
    ruleset: str = "classic"
    """A ruleset name or a path to a JSON ruleset."""
    record_states: bool = True
    """False: leave each turn's full state out of the logs."""

    def __post_init__(self) -> None:
        check_fields(self, "corpus record option")
        if len(self.players) < 2:
            raise UserInputError("--players needs at least two comma-separated players")
        for spec in self.players:
            head = spec.split(":", 1)[0]
            if head == "search":
                if not self.method:
                    raise UserInputError("a 'search' player needs --method (e.g. --method uct)")
            elif head not in SCRIPTED_PLAYERS:
                raise UserInputError(f"unknown player {spec!r}: use builtin[:level], howto, "
                                     "random, greedy or search")


def make_civ(config: RecordConfig):
    from nlmcs.games.civ import CivConfig, CivGame

    overrides: dict = {"ruleset": config.ruleset}
    if config.max_turns is not None:
        overrides["max_turns"] = config.max_turns
    return CivGame(CivConfig.preset(config.preset, **overrides))


def _policy(game, spec: str, config: RecordConfig, seed: int):
    if spec.split(":", 1)[0] != "search":
        return game.policy(spec)
    from nlmcs.methods import make_planner
    from nlmcs.search.config import SearchConfig
    from nlmcs.search.planner import PlannerPolicy

    planner = make_planner(config.method, game=game, search_config=SearchConfig(
        rollouts=config.rollouts), seed=seed)
    return PlannerPolicy(planner, f"search:{config.method}")


def expected_header(config: RecordConfig) -> tuple[dict, list[str]]:
    """(game config, player names) that the header of every log of this run carries."""
    game = make_civ(config)
    names = [f"search:{config.method}" if spec.split(":", 1)[0] == "search"
             else game.policy(spec).name for spec in config.players]
    return json.loads(json.dumps(game.config.to_dict())), names


def check_existing(path: Path, expected: tuple[dict, list[str]]) -> None:
    """Refuse to reuse a log (found by its seed) that another configuration recorded."""
    try:
        with open(path, encoding="utf-8") as fh:
            header = json.loads(fh.readline())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        raise UserInputError(f"{path}: unreadable recorded game ({err}); delete it to record "
                             "that seed again") from None
    game_config, names = expected
    if not isinstance(header, dict):
        raise UserInputError(f"{path}: not a recorded game; delete it to record that seed again")
    old_names = [p.get("name") for p in header.get("players", []) if isinstance(p, dict)]
    differences = []
    if old_names != names:
        differences.append(f"players {','.join(map(str, old_names))} (now {','.join(names)})")
    old_config = header.get("config")
    if old_config != game_config and isinstance(old_config, dict):
        changed = sorted(k for k in {*old_config, *game_config}
                         if old_config.get(k) != game_config.get(k))
        differences += [f"{k} {old_config.get(k)!r} (now {game_config.get(k)!r})"
                        for k in changed]
    elif not isinstance(old_config, dict):
        differences.append("no game configuration")
    if differences:
        raise UserInputError(f"{path}: this corpus's games were recorded with "
                             f"{'; '.join(differences)}; record into another --name")


def check_rule(out_dir: Path, ours: set[Path]) -> None:
    """Refuse a folder holding logs recorded by the earlier seed rule (game i from seed + i,
    chance from `default_rng`; their headers name no chance rule): this run's games would sit
    beside games of another rule, and a corpus of both would pair nothing."""
    for path in sorted(out_dir.glob("game-*.jsonl")):
        if path in ours:
            continue
        try:
            with open(path, encoding="utf-8") as fh:
                header = json.loads(fh.readline())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            continue  # not one of ours to judge: a corpus ingest reports it
        if isinstance(header, dict) and stored_rule(header.get("chance")) == LEGACY_CHANCE:
            raise UserInputError(f"{out_dir}: holds games recorded with the earlier seed rule "
                                 f"(seed + i, {LEGACY_CHANCE} chance; e.g. {path.name}); record "
                                 "into another folder")


def _play_one(config: RecordConfig, seed: int, path: str) -> str:
    """Worker: play one game and write its log; returns the path."""
    from nlmcs.games.record import CorpusRecorder
    from nlmcs.games.runner import play_game

    game = make_civ(config)
    policies = {p: _policy(game, spec, config, seed) for p, spec in enumerate(config.players)}
    recorder = CorpusRecorder(Path(path), record_states=config.record_states)
    play_game(game, policies, seed=seed, hooks=[recorder])
    return path


def _play_job(job: tuple[RecordConfig, int, str]) -> str:
    return _play_one(*job)


def record_games(*, out_dir: Path, config: RecordConfig,
                 progress: Callable[[int, int], None] | None = None) -> list[Path]:
    """Play `config.games` games into `out_dir/game-<seed>.jsonl`; skips logs already there
    (after checking that this configuration recorded them)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    seeds = [game_seed(config.seed, i) for i in range(config.games)]
    paths = {s: out_dir / f"game-{s:07d}.jsonl" for s in seeds}
    todo = [s for s in seeds if not paths[s].exists()]
    expected = expected_header(config)
    for s in seeds:
        if s not in todo:
            check_existing(paths[s], expected)
    check_rule(out_dir, set(paths.values()))
    done = len(seeds) - len(todo)
    if done:
        log.info("%d of %d games already recorded in %s", done, len(seeds), out_dir)
    if progress:
        progress(done, len(seeds))
    # the logs are the store: a game's recorder wrote its file whole
    store = FileStore(out_dir, stored=done, noun="finished games",
                      describe=lambda job: f"the game of seed {job[1]}",
                      on_kept=lambda n: progress(n, len(seeds)) if progress else None)
    if not todo:
        return [paths[s] for s in seeds]
    # one worker plays in this process; more are a pool (of one, should one game be left)
    pool = contextlib.nullcontext() if config.workers == 1 else \
        local_pool(min(config.workers, len(todo)))
    try:
        with pool as executor:
            # every game in flight at once (None), as the pool always had them
            run_jobs([(config, s, str(paths[s])) for s in todo], _play_job, store, executor,
                     max_in_flight=None)
    except WorkerLost:
        raise UserInputError(f"a worker process died (killed, or out of memory); the "
                             f"{store.stored} finished games are kept in {out_dir}; re-run the "
                             "same command to play the rest") from None
    finally:
        # a worker killed mid-game (SIGKILL, or a SIGTERM that found it in compiled code
        # until the pool killed it) left its log's temporary: the pool is stopped, so sweep
        sweep_folder(out_dir)
    return [paths[s] for s in seeds]
