"""One ablation game as a self-contained job, and the function a worker runs on it.

A job carries everything its game needs (spec, arm, seed and, for text methods, the parsed
manual itself), so a worker on another machine needs the package but not the user's manual
store. The worker returns the game's row: outcome, scores, timing, and the whole configuration
the game ran under, with the project version.
"""

from __future__ import annotations

import dataclasses
import os
import socket
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from nlmcs import __version__
from nlmcs.experiments.ablation.spec import AblationSpec, Arm
from nlmcs.experiments.ablation.store import outcome_of
from nlmcs.methods import get_method, method_model

ROW_FORMAT = "nlmcs-ablation-game/1"
LOG_KEY = "_decision_log"
"""A played row's decision log text, taken out before the row is stored."""


@dataclass(frozen=True)
class GameJob:
    """Game `index` of one arm."""

    spec: AblationSpec
    arm: Arm
    index: int
    seed: int
    fingerprint: str
    manual: object | None = None
    """The `StoredManual` this method reads (its twin for random-text), or None."""
    twin_seed: int | None = None
    """random-text with a twin per game: the seed its twin is built from (the runner builds it
    into `manual` as the job is handed out, so workers never write the store)."""
    log: bool = False
    """Keep the game's decision log: the row carries its text under `LOG_KEY`, which the runner
    writes into the run folder (so a worker on another machine needs no shared disk)."""

    @property
    def key(self) -> tuple[str, int]:
        return (self.arm.label, self.index)


def play_game_job(job: GameJob) -> dict:
    """Play one game (planner as player 0 against the spec's opponent) and return its row."""
    from nlmcs.experiments.play import make_player, play
    from nlmcs.games import make_game

    spec, arm = job.spec, job.arm
    if spec.game == "freeciv":
        return _play_freeciv_job(job)
    game = make_game(spec.game, **spec.game_options)
    search = spec.arm_search(arm)
    started = time.perf_counter()
    planner = make_player(arm.method, game=game, opponent=spec.opponent, seed=job.seed,
                          manual=job.manual, corpus=spec.corpus, search_config=search,
                          model_config=spec.model, reader=spec.reader, net=spec.net,
                          log_decisions=job.log)  # fmt: skip
    hooks = []
    if spec.variant:
        from nlmcs.experiments.ablation.foundings import FoundingsHook

        hooks.append(FoundingsHook())
    with tempfile.TemporaryDirectory(prefix="nlmcs-game-log-") as scratch:
        log_path = Path(scratch) / "decisions.jsonl" if job.log else None
        result = play(game=game, planner=planner, method=arm.method, opponent=spec.opponent,
                      seed=job.seed, steps=spec.steps, extra_hooks=hooks, log_path=log_path,
                      log_header=_log_header(job, search))  # fmt: skip
        text = log_path.read_text(encoding="utf-8") if log_path is not None else None
        relevance = _relevance(log_path, arm.method) if log_path is not None else None
    config = getattr(game, "config", None)
    row = game_row(job, result, wall_seconds=time.perf_counter() - started,
                   game_config=config.to_dict() if hasattr(config, "to_dict") else {})
    if hooks:
        row["foundings"] = hooks[0].summary()
    if relevance is not None:
        row["relevance"] = relevance
    if text is not None:
        row[LOG_KEY] = text
    return row


def _relevance(log_path: Path, method: str) -> dict | None:
    """A text arm's relevance in the game just played (`measures.game_relevance`), kept with
    its row so a report needs no log; None for a method that reads nothing."""
    if get_method(method).reads == "nothing":
        return None
    from nlmcs.experiments.relevance.log import read_log
    from nlmcs.experiments.relevance.measures import game_relevance

    return game_relevance(read_log(log_path).decisions)


def _log_header(job: GameJob, search) -> dict:
    """What a kept decision log's game record says beyond the game: the manual read (the twin's
    name for random-text), the configurations, and the arm and game of the run."""
    manual = getattr(job.manual, "name", None)
    return {"manual": None if manual is None else str(manual), "search": search.to_dict(),
            "model": method_model(job.arm.method, job.spec.model).to_dict(),
            "arm": job.arm.label, "game_index": job.index}


def _play_freeciv_job(job: GameJob) -> dict:
    """One game on a local FreeCiv server against FreeCiv's AI (`nlmcs.games.freeciv`)."""
    from nlmcs.experiments.freeciv_play import play_freeciv
    from nlmcs.experiments.play import PlayResult
    from nlmcs.games import make_game
    from nlmcs.games.freeciv import packets_def
    from nlmcs.games.freeciv.protocol_source import packets_def_path

    spec, arm = job.spec, job.arm
    match = make_game(spec.game, **spec.game_options)
    started = time.perf_counter()
    played = play_freeciv(proto=packets_def.load(packets_def_path()),
                          server=match.server_config(seed=job.seed, opponent=spec.opponent),
                          method=arm.method, turns=spec.steps, seed=job.seed,
                          # roll-outs model FreeCiv's AI by our built-in AI
                          search_config=dataclasses.replace(spec.arm_search(arm),
                                                            opponent="builtin"),
                          model_config=spec.model,
                          manual=job.manual, log=lambda line: None)  # fmt: skip
    r = played.result
    result = PlayResult(arm.method, job.seed, r["turns"], r["winner"], r["finished"],
                        [float(x) for x in r["scores"]] or [0.0, 0.0], r["seconds_per_turn"])
    return game_row(job, result, wall_seconds=time.perf_counter() - started,
                    game_config=match.config.to_dict())


def game_row(job: GameJob, result, *, wall_seconds: float, game_config: dict) -> dict:
    """The stored row of a finished game (`result`: a `PlayResult`; `game_config`: the game's
    full configuration as the worker built it)."""
    spec, arm = job.spec, job.arm
    method = get_method(arm.method)
    scores = [float(s) for s in result.scores]
    opponent_score = max(scores[1:]) if len(scores) > 1 else 0.0
    sec = result.seconds_per_step
    model = method_model(arm.method, spec.model)
    manual_meta = getattr(job.manual, "meta", None) or {}
    return {
        "format": ROW_FORMAT, "arm": arm.label, "method": arm.method, "rollouts": arm.rollouts,
        "game": job.index, "seed": job.seed, "outcome": outcome_of(result.winner,
                                                                  result.finished),
        "winner": result.winner, "finished": bool(result.finished), "steps": int(result.steps),
        "score": scores[0], "opponent_score": opponent_score,
        "margin": round(scores[0] - opponent_score, 6), "scores": scores,
        "seconds_per_step": round(sum(sec) / len(sec), 6) if sec else None,
        "wall_seconds": round(wall_seconds, 3), "host": socket.gethostname(),
        "pid": os.getpid(), "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "version": __version__, "fingerprint": job.fingerprint,
        "config": {
            "game": spec.game, "game_options": dict(spec.game_options),
            "game_config": game_config, "steps": spec.steps,
            "full_games": spec.full_games, "opponent": spec.opponent,
            "search": spec.arm_search(arm).to_dict(),
            "model": model.to_dict(), "uses_model": method.model is not None,
            "corpus": dataclasses.asdict(spec.corpus), "uses_corpus": method.corpus,
            "manual": ({"name": getattr(job.manual, "name", spec.manual),
                        "sha256": (manual_meta.get("source") or {}).get("sha256"),
                        "random": manual_meta.get("random")}
                       if job.manual is not None else None),
        },
    }  # fmt: skip
