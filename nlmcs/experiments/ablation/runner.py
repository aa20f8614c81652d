"""Plays an ablation's games on any `concurrent.futures.Executor` and stores each as it ends.

The loop is the project's one job loop (`nlmcs.jobs.run_jobs`: a local pool or a Dask cluster,
a bounded window of games in flight, each finished game stored at once, the rest cancelled on
an interrupt or a lost worker) and the folder its one run store (`nlmcs.runs`); what is the
ablation's own is here: which games a spec still needs, the text each game reads (built as its
job is handed out), and a game's decision log written before its row. What was stored stays; a
re-run plays only the missing (arm, game) pairs.

Library side of `nlmcs ablation run`; `prepare_run` does every check that can fail on bad
input before anything is started or written.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from nlmcs.errors import UserInputError
from nlmcs.experiments.ablation.jobs import LOG_KEY, GameJob, play_game_job
from nlmcs.experiments.ablation.spec import AblationSpec
from nlmcs.experiments.ablation.store import (
    RESULTS_NAME,
    check_folder,
    check_row,
    game_log_path,
    locked,
    repair_tail,
    start_run,
)
from nlmcs.files import write_atomic
from nlmcs.jobs import WorkerLost, dask_executor  # noqa: F401  (the ablation's names)
from nlmcs.jobs import run_jobs as run_jobs_on
from nlmcs.methods import get_method, method_text, opponent_policy
from nlmcs.runs import JsonLinesStore
from nlmcs.seeds import game_seed

if TYPE_CHECKING:
    from nlmcs.experiments.ablation.report import Report

log = logging.getLogger(__name__)
notice = logging.getLogger("nlmcs.notice")


@dataclass
class PreparedRun:
    """A checked run: its folder, spec, the rows already stored and the games left to play."""

    folder: Path
    spec: AblationSpec
    stored: list[dict]
    jobs: list[GameJob]
    texts: dict[str, object] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return len(self.spec.arms()) * self.spec.games

    @property
    def done(self) -> int:
        return self.total - len(self.jobs)


def load_texts(spec: AblationSpec) -> dict[str, object]:
    """The parsed manuals the spec's methods read, by `Method.reads` ("manual", "random-twin",
    "unrelated").

    Loaded once here, in the parent: a shipped manual and its twin are built on first use, and
    workers must never race to build them; the jobs then carry the parsed manual itself. With a
    twin per game (`AblationSpec.twin_seed` None) there is no one twin to load: each game's is
    built as its job is handed out (`with_text`)."""
    from nlmcs.model.manuals import resolve_manual

    by_reads = {get_method(m).reads: m for m in spec.methods}
    reads = set(by_reads) - {"nothing"}
    texts: dict[str, object] = {}
    if reads:
        from manual_pipeline.store import vocabulary_warning

        texts["manual"] = resolve_manual(spec.manual)
        warning = vocabulary_warning(texts["manual"], min_count=spec.model.min_count)
        if warning is not None:
            notice.warning("%s", warning.removeprefix("warning: "))
    if "random-twin" in reads and spec.twin_seed is not None and not spec.variant:
        texts["random-twin"] = method_text(by_reads["random-twin"], spec.manual,
                                           twin_seed=spec.twin_seed)
    if "unrelated" in reads:
        # checked here once, before any game; a variant game's own is built per game
        unrelated = method_text(by_reads["unrelated"], texts["manual"])
        if not spec.variant:
            texts["unrelated"] = unrelated
    return texts


def with_text(job: GameJob, texts: dict[str, object]) -> GameJob:
    """The job with the twin its game reads, when that is the game's own: built from the
    game's seed (its word order cached in the manual store) now, so that only the games in
    flight hold one. In a variant game every text method reads a manual of the game's own
    (`nlmcs.model.variant_manuals.text_for_game`), built here the same way."""
    spec, method = job.spec, job.arm.method
    if spec.variant and get_method(method).reads != "nothing":
        return dataclasses.replace(job, manual=method_text(
            method, texts["manual"], game=_variant_game(spec), seed=job.seed,
            twin_seed=spec.twin_seed))
    if job.twin_seed is None:
        return job
    return dataclasses.replace(job, manual=method_text(method, texts["manual"],
                                                       twin_seed=job.twin_seed))


_GAMES: dict[str, object] = {}


def _variant_game(spec: AblationSpec):
    """The spec's game, built once per process (its maps give each seed's sacred terrain)."""
    from nlmcs.games import make_game

    key = spec.fingerprint()
    if key not in _GAMES:
        _GAMES.clear()
        _GAMES[key] = make_game(spec.game, **spec.game_options)
    return _GAMES[key]


def _check_game(spec: AblationSpec) -> None:
    """The game builds and knows the opponent; corpus methods find a corpus recorded for it,
    network methods a network trained for it."""
    from nlmcs.games import make_game

    game = make_game(spec.game, **spec.game_options)
    opponent_policy(game, spec.opponent)  # a network opponent too (net[:FILE])
    if hasattr(game, "check_available"):  # a game on a real server needs it installed
        game.check_available()
    if hasattr(game, "planning_game"):  # its planners search another game: ours
        game = game.planning_game()
    if any(get_method(m).corpus for m in spec.methods):
        from corpus.bundle import check_compatible, corpus_bundle

        check_compatible(corpus_bundle(spec.corpus.corpus).corpus, game)
    if any(get_method(m).net for m in spec.methods):
        from nlmcs.net.guide import load_guide

        load_guide(spec.net.net, game)  # a network trained for another game is refused here


def plan_jobs(spec: AblationSpec, *, done: set[tuple[str, int]],
              texts: dict[str, object], log_decisions: bool = False) -> list[GameJob]:
    """Games not yet done, game index by game index (every arm's game 0 first), so that even a
    partial run holds complete pairs; with `log_decisions` each keeps its decision log."""
    fp = spec.fingerprint()
    jobs = []
    for i in range(spec.games):
        seed = game_seed(spec.seed, i)
        for arm in spec.arms():
            if (arm.label, i) not in done:
                reads = get_method(arm.method).reads
                own_twin = reads == "random-twin" and spec.twin_seed is None and not spec.variant
                jobs.append(GameJob(spec, arm, i, seed, fp, texts.get(reads),
                                    seed if own_twin else None, log=log_decisions))
    return jobs


def prepare_run(*, spec: AblationSpec, out: Path, force_mix: bool = False,
                log_decisions: bool = False) -> PreparedRun:
    """Check everything that can fail on bad input (manual, corpus, run folder, results file);
    writes nothing except a shipped manual's first-use build."""
    _check_game(spec)
    if log_decisions and spec.game == "freeciv":
        raise UserInputError("--log-decisions keeps the simulated games' logs; for FreeCiv use "
                             "`nlmcs freeciv play --log-decisions`")
    results = check_folder(out, spec, force_mix=force_mix)  # before any manual is built
    if not force_mix:
        _check_budgets(out, spec, results.rows)
    texts = load_texts(spec)
    jobs = plan_jobs(spec, done=results.done(), texts=texts, log_decisions=log_decisions)
    return PreparedRun(Path(out), spec, results.rows, jobs, texts)


def _check_budgets(out: Path, spec: AblationSpec, rows: list[dict]) -> None:
    """Refuse an arm whose stored games were played at another roll-out budget: the budget is
    not in the run's identity (budgets may be added as arms), and an arm named by its method
    alone (one budget) would otherwise count `--rollouts 3` games as done for `--rollouts 5`."""
    budgets = {arm.label: arm.rollouts for arm in spec.arms()}
    for row in rows:
        wanted = budgets.get(row.get("arm"))
        if wanted is not None and row.get("rollouts") not in (None, wanted):
            raise UserInputError(
                f"{out}: arm {row['arm']!r} holds games at {row['rollouts']} roll-outs, and this "
                f"run asks {wanted}; give another --out (or --force-mix to pool them)")


class _GameStore(JsonLinesStore):
    """The run's results file, as the job loop keeps a finished game: its decision log (when
    kept) first, then its row."""

    def __init__(self, folder: Path, *, stored: int, on_game: Callable[[dict], None] | None):
        super().__init__(folder / RESULTS_NAME, stored=stored, check=check_row, on_row=on_game,
                         describe=lambda job: f"{job.arm.label} game {job.index}")
        self.folder = folder

    def keep(self, job: GameJob, row: dict) -> None:
        log_text = row.pop(LOG_KEY, None)
        problem = check_row(row)
        if problem is not None:  # a bug in the job, never a line to store
            raise RuntimeError(f"{self.describe(job)}: bad row ({problem})")
        if log_text is not None:  # before the row: a stored game has its log
            path = game_log_path(self.folder, job.arm.label, job.index)
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, log_text)
        super().keep(job, row)


def run_jobs(prepared: PreparedRun, *, executor: Executor, max_in_flight: int = 2,
             force_mix: bool = False, on_game: Callable[[dict], None] | None = None,
             job_fn: Callable[[GameJob], dict] = play_game_job) -> list[dict]:
    """Play the prepared games on the one job loop (`nlmcs.jobs.run_jobs`), appending each
    row as its game ends; returns the new rows.

    Holds the folder's lock and re-checks the folder under it. An exception (an interrupt, a
    lost worker as `WorkerLost`, a failing game) cancels the games not yet finished and
    propagates; the stored rows stay as they are."""
    folder, spec = prepared.folder, prepared.spec
    with locked(folder):
        repair_tail(folder / RESULTS_NAME)  # a half line a crash or a full disk left
        done = check_folder(folder, spec, force_mix=force_mix).done()
        todo = [j for j in prepared.jobs if j.key not in done]
        start_run(folder, spec)
        store = _GameStore(folder, stored=len(done), on_game=on_game)
        run_jobs_on(
            (with_text(job, prepared.texts) for job in todo), job_fn, store, executor,
            max_in_flight=max_in_flight, order=lambda job: job.key)
    return store.rows


def run_ablation(*, spec: AblationSpec, out: Path, executor: Executor, max_in_flight: int = 2,
                 force_mix: bool = False, on_game: Callable[[dict], None] | None = None,
                 job_fn: Callable[[GameJob], dict] = play_game_job) -> Report:
    """Prepare, play what is missing, and write the report (tables, tests, plots)."""
    from nlmcs.experiments.ablation.report import write_report

    prepared = prepare_run(spec=spec, out=out, force_mix=force_mix)
    run_jobs(prepared, executor=executor, max_in_flight=max_in_flight, force_mix=force_mix,
             on_game=on_game, job_fn=job_fn)  # fmt: skip
    return write_report(Path(out))
