"""The ablation runner on tiny games: pairing, resume after a crash or an interrupt, the Dask
path, configuration checks and damaged results files."""

import json
import multiprocessing as mp
import os
import signal
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from nlmcs.errors import UserInputError
from nlmcs.experiments.ablation.jobs import play_game_job
from nlmcs.experiments.ablation.report import run_status, write_report
from nlmcs.experiments.ablation.runner import (
    WorkerLost,
    dask_executor,
    prepare_run,
    run_ablation,
    run_jobs,
)
from nlmcs.experiments.ablation.spec import AblationSpec, fingerprint
from nlmcs.experiments.ablation.store import RESULTS_NAME, read_results
from nlmcs.processes import local_pool
from nlmcs.search.config import SearchConfig
from nlmcs.seeds import game_seed


def tiny_spec(**overrides) -> AblationSpec:
    fields = {"methods": ("linear", "uct"), "rollouts": (2,), "games": 3, "seed": 5,
              "steps": 2, "game_options": {"preset": "tiny"}, "search": SearchConfig(depth=2)}
    return AblationSpec(**{**fields, **overrides})


def rows_of(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / RESULTS_NAME).read_text().splitlines()]


def keys(rows) -> list[tuple[str, int]]:
    return sorted((r["arm"], r["game"]) for r in rows)


def _dies_once(job):
    """A job whose worker process is killed (SIGKILL) the first time it plays uct game 1."""
    marker = Path(os.environ["ABLATION_TEST_MARKER"])
    if job.key == ("uct", 1) and not marker.exists():
        marker.write_text("killed")
        os.kill(os.getpid(), signal.SIGKILL)
    return play_game_job(job)


def test_every_arm_plays_the_same_seeds(tmp_path):
    spec = tiny_spec()
    with ThreadPoolExecutor(2) as ex:
        report = run_ablation(spec=spec, out=tmp_path / "run", executor=ex)
    rows = rows_of(tmp_path / "run")
    assert keys(rows) == [(a, i) for a in ("linear", "uct") for i in range(3)]
    seeds = {a: {r["game"]: r["seed"] for r in rows if r["arm"] == a} for a in ("linear", "uct")}
    assert seeds["linear"] == seeds["uct"] == {i: game_seed(5, i) for i in range(3)}
    assert len(set(seeds["uct"].values())) == 3
    assert not set(seeds["uct"].values()) & {game_seed(6, i) for i in range(3)}
    row = rows[0]
    assert row["version"] and row["fingerprint"] == spec.fingerprint()
    assert row["config"]["search"]["rollouts"] == 2 and row["config"]["search"]["depth"] == 2
    assert row["config"]["model"]["kind"] in ("linear", "text")
    assert row["config"]["game_config"]["width"] == 10  # the tiny map, as the worker built it
    assert [p.name for p in report.files][:4] == ["games.csv", "summary.csv", "pairs.csv",
                                                  "summary.md"]  # fmt: skip
    assert [(s.arm, s.games) for s in report.arms] == [("linear", 3), ("uct", 3)]
    assert report.pairs[0].pairs == 3


@pytest.mark.slow
def test_random_text_reads_a_twin_per_game_unless_one_seed_is_fixed(tmp_path):
    from manual_pipeline.twins import order_path

    spec = tiny_spec(methods=("random-text",), games=2)
    with ThreadPoolExecutor(2) as ex:
        run_ablation(spec=spec, out=tmp_path / "own", executor=ex)
    rows = sorted(rows_of(tmp_path / "own"), key=lambda r: r["game"])
    read = [(r["config"]["manual"]["name"], r["config"]["manual"]["random"]["seed"])
            for r in rows]
    assert read == [(f"civ-guide-random-{r['seed']}", r["seed"]) for r in rows]
    assert len(set(read)) == 2  # two draws of word salad, not one
    assert all(order_path("civ-guide", r["seed"]).is_file() for r in rows)  # kept in the store
    run = json.loads((tmp_path / "own" / "run.json").read_text())
    assert run["spec"]["twin_seed"] is None and run["identities"][spec.fingerprint()]
    assert "a twin per game" in (tmp_path / "own" / "summary.md").read_text()
    fixed = tiny_spec(methods=("random-text",), games=2, twin_seed=4)
    assert fixed.fingerprint() != spec.fingerprint()
    with ThreadPoolExecutor(2) as ex:
        run_ablation(spec=fixed, out=tmp_path / "fixed", executor=ex)
    names = {r["config"]["manual"]["name"] for r in rows_of(tmp_path / "fixed")}
    assert names == {"civ-guide-random-4"}
    assert "one twin (seed 4)" in (tmp_path / "fixed" / "summary.md").read_text()
    with pytest.raises(UserInputError, match="ablation option twin_seed=-1: must be between 0"):
        tiny_spec(twin_seed=-1)


def test_several_budgets_make_arms_and_a_strength_plot(tmp_path):
    spec = tiny_spec(methods=("uct",), rollouts=(2, 3), games=2)
    with ThreadPoolExecutor(2) as ex:
        report = run_ablation(spec=spec, out=tmp_path / "run", executor=ex)
    assert [s.arm for s in report.arms] == ["uct@2", "uct@3"]
    assert (tmp_path / "run" / "strength_vs_time.png").stat().st_size > 1000
    assert {r["config"]["search"]["rollouts"] for r in rows_of(tmp_path / "run")} == {2, 3}


def test_full_games_play_to_the_turn_limit(tmp_path):
    spec = tiny_spec(games=2, game_options={"preset": "tiny", "max_turns": 2}, full_games=True)
    with ThreadPoolExecutor(2) as ex:
        run_ablation(spec=spec, out=tmp_path / "run", executor=ex)
    rows = rows_of(tmp_path / "run")
    assert all(r["finished"] and r["outcome"] in ("win", "loss", "draw") for r in rows)


def test_resume_after_a_worker_is_killed(tmp_path, monkeypatch):
    monkeypatch.setenv("ABLATION_TEST_MARKER", str(tmp_path / "killed"))
    out, spec = tmp_path / "run", tiny_spec(games=4)
    prepared = prepare_run(spec=spec, out=out)
    with pytest.raises(WorkerLost, match="re-run the same command"), local_pool(2) as pool:
        run_jobs(prepared, executor=pool, max_in_flight=2, job_fn=_dies_once)
    assert (tmp_path / "killed").exists()
    before = (out / RESULTS_NAME).read_bytes()
    first = rows_of(out)
    assert ("uct", 1) not in keys(first) and len(first) < 8
    prepared = prepare_run(spec=spec, out=out)
    assert len(prepared.jobs) == 8 - len(first)
    with ThreadPoolExecutor(2) as ex:
        played = run_jobs(prepared, executor=ex, max_in_flight=2)
    assert len(played) == 8 - len(first)
    assert (out / RESULTS_NAME).read_bytes().startswith(before)  # nothing stored rewritten
    assert keys(rows_of(out)) == [(a, i) for a in ("linear", "uct") for i in range(4)]


class _BreaksOnSubmit(ThreadPoolExecutor):
    """A pool that breaks between a finished game and the next submission (as a process
    pool whose other worker was killed meanwhile)."""

    def __init__(self, ok: int):
        super().__init__(1)
        self.ok = ok

    def submit(self, fn, /, *args, **kwargs):
        from concurrent.futures.process import BrokenProcessPool

        if self.ok == 0:
            raise BrokenProcessPool("a child process terminated abruptly")
        self.ok -= 1
        return super().submit(fn, *args, **kwargs)


def test_a_pool_broken_at_submission_is_a_lost_worker_and_keeps_the_games(tmp_path):
    out, spec = tmp_path / "run", tiny_spec(games=2)
    prepared = prepare_run(spec=spec, out=out)
    with pytest.raises(WorkerLost, match="1 games are stored"), _BreaksOnSubmit(1) as pool:
        run_jobs(prepared, executor=pool, max_in_flight=1)
    assert len(rows_of(out)) == 1


def test_an_interrupt_stops_the_workers_and_keeps_the_stored_games(tmp_path):
    out, spec = tmp_path / "run", tiny_spec(games=3)
    prepared = prepare_run(spec=spec, out=out)

    def interrupt(row):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt), local_pool(1) as pool:
        run_jobs(prepared, executor=pool, max_in_flight=1, on_game=interrupt)
    assert not mp.active_children()
    assert len(rows_of(out)) == 1
    with ThreadPoolExecutor(2) as ex:
        run_ablation(spec=spec, out=out, executor=ex)
    assert keys(rows_of(out)) == [(a, i) for a in ("linear", "uct") for i in range(3)]


def test_dask_cluster_plays_the_same_games_as_a_local_pool(tmp_path, monkeypatch):
    distributed = pytest.importorskip("distributed")
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.setenv(var, "1")  # pin_threads runs in this process (in-process workers)
    spec = tiny_spec(games=2)
    with ThreadPoolExecutor(2) as ex:
        run_ablation(spec=spec, out=tmp_path / "local", executor=ex)
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                       dashboard_address=None)  # fmt: skip
    with cluster, dask_executor(cluster.scheduler_address, timeout=10) as (executor, threads):
        assert threads == 2
        run_ablation(spec=spec, out=tmp_path / "dask", executor=executor,
                     max_in_flight=2 * threads)  # fmt: skip

    def outcomes(folder):
        return {(r["arm"], r["game"]): (r["seed"], r["outcome"], r["scores"], r["steps"])
                for r in rows_of(folder)}  # fmt: skip

    assert outcomes(tmp_path / "dask") == outcomes(tmp_path / "local")
    assert len(outcomes(tmp_path / "dask")) == 4


def test_unreachable_scheduler_is_a_clear_error():
    import socket

    with socket.socket() as s:  # a port where nothing listens
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(UserInputError, match="no Dask scheduler answers"):  # noqa: SIM117
        with dask_executor(f"tcp://127.0.0.1:{port}", timeout=1):
            pass


def test_another_configuration_is_refused_unless_mixed(tmp_path):
    out = tmp_path / "run"
    with ThreadPoolExecutor(2) as ex:
        run_ablation(spec=tiny_spec(games=2), out=out, executor=ex)
    stored = (out / RESULTS_NAME).read_bytes()
    with pytest.raises(UserInputError, match=r"another configuration \(steps 2 -> 3\)"):
        prepare_run(spec=tiny_spec(games=2, steps=3), out=out)
    with pytest.raises(UserInputError, match="another configuration"):
        prepare_run(spec=tiny_spec(games=2, search=SearchConfig(depth=3)), out=out)
    with pytest.raises(UserInputError, match=r"\(twin_seed None -> 4\)"):
        prepare_run(spec=tiny_spec(games=2, twin_seed=4), out=out)
    # issue 60: another single budget was "all games stored; nothing to play"
    with pytest.raises(UserInputError, match=r"arm '(linear|uct)' holds games at 2 roll-outs, and "
                                             r"this run asks 3"):
        prepare_run(spec=tiny_spec(games=2, rollouts=(3,)), out=out)
    assert (out / RESULTS_NAME).read_bytes() == stored
    # a run stored before the twin was part of a run's identity says what it lacks
    before = tmp_path / "before"
    before.mkdir()
    run = json.loads((out / "run.json").read_text())
    identity = run["identities"].pop(run["fingerprint"])
    del identity["twin_seed"]
    run["fingerprint"] = fingerprint(identity)
    run["identities"][run["fingerprint"]] = identity
    (before / "run.json").write_text(json.dumps(run))
    with pytest.raises(UserInputError, match=r"\(twin_seed \(absent\) -> None\)"):
        prepare_run(spec=tiny_spec(games=2), out=before)
    # More games, methods or budgets of the same configuration are welcome.
    assert len(prepare_run(spec=tiny_spec(games=3, methods=("linear", "uct", "nonlinear")),
                           out=out).jobs) == 3 + 2  # fmt: skip
    # --force-mix adds the missing games under the new configuration; stored ones stay.
    mixed = tiny_spec(games=3, steps=3)
    with ThreadPoolExecutor(2) as ex:
        run_ablation(spec=mixed, out=out, executor=ex, force_mix=True)
    rows = rows_of(out)
    assert (out / RESULTS_NAME).read_bytes().startswith(stored)
    assert [r["steps"] for r in rows if r["game"] == 2] == [3, 3]
    assert {r["fingerprint"] for r in rows} == {tiny_spec().fingerprint(), mixed.fingerprint()}
    assert run_status(out).configurations == 2


def test_a_damaged_results_file_names_the_line_and_keeps_the_rest(tmp_path):
    out = tmp_path / "run"
    with ThreadPoolExecutor(2) as ex:
        run_ablation(spec=tiny_spec(games=2), out=out, executor=ex)
    lines = (out / RESULTS_NAME).read_text().splitlines(keepends=True)
    lines[1] = '{"arm": "uct", "game": 0, "seed"\n'
    damaged = "".join(lines) + '{"arm": "linear"'  # and a truncated last line
    (out / RESULTS_NAME).write_text(damaged)
    with pytest.raises(UserInputError, match=r"games.jsonl line 2: malformed JSON.*3 good rows"):
        prepare_run(spec=tiny_spec(games=2), out=out)
    with pytest.raises(UserInputError, match="line 2"):
        write_report(out)
    report = write_report(out, strict=False)
    # a cut last line is a game never stored (a crash mid-write), not a bad line
    assert [b.line for b in report.bad] == [2] and read_results(out / RESULTS_NAME,
                                                                 strict=False).cut_tail == 5
    assert sum(s.games for s in report.arms) == 3
    assert (out / RESULTS_NAME).read_text() == damaged  # nothing stored is rewritten
    assert [b.line for b in run_status(out).bad] == [2]


def test_a_cut_last_line_is_dropped_when_the_run_resumes(tmp_path):
    out = tmp_path / "run"
    with ThreadPoolExecutor(2) as ex:
        run_ablation(spec=tiny_spec(games=2), out=out, executor=ex)
    lines = (out / RESULTS_NAME).read_text().splitlines(keepends=True)
    kept = "".join(lines[:-1])
    (out / RESULTS_NAME).write_text(kept + lines[-1][:40])  # the last game's write was cut
    prepared = prepare_run(spec=tiny_spec(games=2), out=out)
    assert len(prepared.jobs) == 1  # that game is played again
    with ThreadPoolExecutor(2) as ex:
        run_jobs(prepared, executor=ex)
    text = (out / RESULTS_NAME).read_text()
    assert text.startswith(kept) and len(rows_of(out)) == len(lines)
    assert text.endswith("\n") and read_results(out / RESULTS_NAME).cut_tail is None


def test_a_full_disk_leaves_no_half_line(tmp_path, monkeypatch):
    import errno

    from nlmcs.experiments.ablation.store import append_row

    path = tmp_path / RESULTS_NAME
    append_row(path, {"a": 1})
    before = path.read_bytes()
    real_write = os.write

    def full(fd, data):
        real_write(fd, bytes(data[:5]))  # part of the line lands, then the disk is full
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(OSError, match="No space left"):
        append_row(path, {"b": 2})
    monkeypatch.undo()
    assert path.read_bytes() == before


def test_results_rows_are_checked(tmp_path):
    path = tmp_path / RESULTS_NAME
    with ThreadPoolExecutor(1) as ex:
        run_ablation(spec=tiny_spec(games=1, methods=("uct",)), out=tmp_path / "r", executor=ex)
    good = (tmp_path / "r" / RESULTS_NAME).read_text()
    row = json.loads(good)
    bad_type = json.dumps({**row, "game": "one"})
    path.write_text(good + good + bad_type + "\n" + "\n" + json.dumps([1]) + "\n")
    results = read_results(path, strict=False)
    assert len(results.rows) == 1
    assert [(b.line, b.reason.split(" (")[0]) for b in results.bad] == [
        (2, "repeats uct game 0"), (3, "field 'game' has the wrong type"), (4, "empty line"),
        (5, "not a JSON object")]  # fmt: skip


def test_games_added_to_the_corpus_a_run_reads_make_it_another_run(tmp_path):
    """Issue 60: `corpus record` adding games to the corpus of a corpus method's run left the
    run's identity as it was, so one arm held games against two corpora."""
    from corpus.store import ingest
    from nlmcs.experiments.record import RecordConfig, record_games
    from nlmcs.methods import CorpusOptions

    def record(seed: int) -> None:
        config = RecordConfig(games=1, players=("builtin", "random"), preset="tiny",
                              max_turns=3, seed=seed, workers=1, record_states=False)
        ingest(record_games(out_dir=tmp_path / f"logs-{seed}", config=config),
               name=tmp_path / "corpus")

    record(1)
    spec = tiny_spec(games=1, methods=("uct-corpus",),
                     corpus=CorpusOptions(corpus=tmp_path / "corpus"))
    assert spec.identity()["corpus_content"]["games"] == 1
    out = tmp_path / "run"
    with ThreadPoolExecutor(1) as ex:
        run_ablation(spec=spec, out=out, executor=ex)
    assert not prepare_run(spec=spec, out=out).jobs  # the same corpus: nothing to play
    record(2)
    with pytest.raises(UserInputError, match=r"another configuration \(corpus_content"):
        prepare_run(spec=spec, out=out)
    # a run without corpus methods does not depend on the corpus
    assert "corpus_content" not in tiny_spec().identity()
