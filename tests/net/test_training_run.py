"""A training run: writes its curve and checkpoints, resumes without replaying finished games,
and refuses a folder holding other settings."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pandas as pd
import pytest

from nlmcs.errors import UserInputError
from nlmcs.net.checkpoint import load
from nlmcs.net.spec import TrainSpec
from nlmcs.net.train import train_net

TINY = TrainSpec(corpus_games=2, bc_epochs=1, generations=1, games=2, rollouts=4,
                 eval_games=2, max_turns=4, hidden=8, batch=64)


def test_a_run_resumes_from_its_finished_games(tmp_path):
    out = tmp_path / "run"
    train_net(TINY, out, log=lambda line: None)
    curve = pd.read_csv(out / "curve.csv")
    assert list(curve["generation"]) == [0, 1]
    assert {"vs_builtin_win_pct", "vs_previous_win_pct", "valid_policy"} <= set(curve.columns)
    assert (out / "curve.png").stat().st_size > 0
    assert load(out / "net.pt").training["generation"] == 1
    games = sorted((out / "gen-001").glob("game-*.npz"))
    assert len(games) == 2
    stamps = [g.stat().st_mtime_ns for g in games]
    (out / "gen-001.pt").unlink()  # as if killed after its games, before its checkpoint
    lines = []
    train_net(TINY, out, log=lines.append)
    assert [g.stat().st_mtime_ns for g in games] == stamps
    assert any("2 self-play games kept" in line for line in lines)
    assert list(pd.read_csv(out / "curve.csv")["generation"]) == [0, 1]
    more = dataclasses.replace(TINY, generations=2)  # more generations may be asked for later
    train_net(more, out, log=lambda line: None)
    assert list(pd.read_csv(out / "curve.csv")["generation"]) == [0, 1, 2]
    with pytest.raises(UserInputError, match="other settings.*rollouts"):
        train_net(dataclasses.replace(TINY, rollouts=5), out, log=lambda line: None)


def test_show_and_bad_checkpoint_on_the_command_line(tmp_path):
    bad = tmp_path / "bad.pt"
    bad.write_text("{}")
    run = subprocess.run([sys.executable, "-m", "nlmcs.cli", "net", "show", str(bad)],
                         capture_output=True, text=True)
    assert run.returncode != 0 and "Traceback" not in run.stderr
    assert "bad.pt" in run.stderr and len(run.stderr.strip().splitlines()) == 1


def test_an_ablation_records_its_network_and_refuses_a_bad_one_before_any_game(tmp_path):
    import json

    from nlmcs.games import make_game
    from nlmcs.net.checkpoint import Checkpoint, save
    from nlmcs.net.model import NetConfig

    net = tmp_path / "n.pt"
    save(Checkpoint.fresh(make_game("civ", preset="tiny"), NetConfig(hidden=8)), net)
    base = [sys.executable, "-m", "nlmcs.cli", "ablation", "run", "--methods",
            "puct-net,uct-net-prior", "--games", "1", "--map", "tiny", "--steps", "2",
            "--rollouts", "3", "--depth", "2", "--workers", "1", "--no-progress"]
    ok = subprocess.run([*base, "--net", str(net), "--out", str(tmp_path / "run")],
                        capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    ident = json.loads((tmp_path / "run" / "run.json").read_text())
    recorded = json.dumps(ident)
    from nlmcs.files import sha256_file

    assert sha256_file(net)[:16] in recorded
    # the recorded run replays its settings, the network's included
    from nlmcs.cli import parse_command_line
    from nlmcs.commands.ablation import build_spec

    again = build_spec(parse_command_line(["ablation", "run", "--config",
                                           str(tmp_path / "run" / "run.json")]))[0]
    assert again.net.net == str(net) and again.identity()["net"] == ident["spec"]["net"]
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"junk")
    run = subprocess.run([*base, "--net", str(bad), "--out", str(tmp_path / "bad-run")],
                         capture_output=True, text=True)
    assert run.returncode != 0 and "bad.pt" in run.stderr and "Traceback" not in run.stderr
    assert not (tmp_path / "bad-run" / "results.jsonl").exists()



def test_a_training_folder_being_written_is_refused(tmp_path):
    """One writer per run folder, by the run store's lock, as for ablations and audits."""
    from filelock import FileLock

    out = tmp_path / "run"
    out.mkdir()
    other = FileLock(str(out / ".lock"), is_singleton=False)  # as another process holds it
    with other, pytest.raises(UserInputError, match="another nlmcs process is writing it"):
        train_net(TINY, out, log=lambda line: None)
    assert [p.name for p in out.iterdir()] == [".lock"]


def test_a_folder_of_an_older_version_keeps_its_settings_in_train_json(tmp_path):
    """The settings now live in the run store's run.json; train.json, which older versions
    wrote, is still read: the same settings resume, others are refused."""
    import json

    from nlmcs.net.train import _check_run

    out = tmp_path / "run"
    out.mkdir()
    old = {"format": "nlmcs-net-run/1", "identity": TINY.identity(), "generations": 1}
    (out / "train.json").write_text(json.dumps(old, indent=1) + "\n")
    with pytest.raises(UserInputError, match="other settings.*rollouts"):
        _check_run(out, dataclasses.replace(TINY, rollouts=5))
    _check_run(out, TINY)
    run = json.loads((out / "run.json").read_text())
    assert run["identity"] == json.loads(json.dumps(TINY.identity())) and run["generations"] == 1
    assert json.loads((out / "train.json").read_text()) == json.loads(json.dumps(old))
    (out / "run.json").write_text("[]")
    with pytest.raises(UserInputError, match="run.json: not a training run file"):
        _check_run(out, TINY)

def test_self_play_on_a_dask_cluster_plays_the_same_games(tmp_path, monkeypatch):
    import distributed
    import numpy as np

    from nlmcs.jobs import dask_executor
    from nlmcs.net.samples import load_samples

    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.setenv(var, "1")  # pin_threads runs in this process (in-process workers)
    spec = dataclasses.replace(TINY, eval_games=1)
    train_net(spec, tmp_path / "local", log=lambda line: None)
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                       dashboard_address=None)  # fmt: skip
    with cluster, dask_executor(cluster.scheduler_address, timeout=10) as (executor, _):
        train_net(spec, tmp_path / "dask", executor=executor, log=lambda line: None)
    for name in ("game-0000.npz", "game-0001.npz"):
        a, _ = load_samples(tmp_path / "local" / "gen-001" / name)
        b, _ = load_samples(tmp_path / "dask" / "gen-001" / name)
        assert np.array_equal(a.target, b.target) and np.array_equal(a.value, b.value)


def test_the_shipped_network_plays_from_the_command_line(tmp_path):
    run = subprocess.run([sys.executable, "-m", "nlmcs.cli", "play", "--method", "puct-net",
                          "--map", "tiny", "--steps", "2", "--rollouts", "4", "--no-progress"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "puct-net" in run.stdout


def test_a_run_can_start_from_a_network_and_judges_with_an_interval(tmp_path):
    """A curriculum: generation 0 is the given network (its weights, judged on this run's
    games); each judged generation carries Wilson's 95% interval."""
    import torch

    first = tmp_path / "first"
    train_net(dataclasses.replace(TINY, generations=0), first, log=lambda line: None)
    longer = dataclasses.replace(TINY, generations=0, max_turns=6, init=str(first / "net.pt"))
    out = tmp_path / "longer"
    train_net(longer, out, log=lambda line: None)
    start, again = load(first / "net.pt"), load(out / "gen-000.pt")
    assert all(torch.equal(a, b) for a, b in zip(start.net.state_dict().values(),
                                                  again.net.state_dict().values(), strict=True))
    row = pd.read_csv(out / "curve.csv").iloc[0]
    assert row["stage"] == "initial" and len(row["init_sha256"]) == 64
    assert 0 <= row["vs_builtin_win_low"] <= row["vs_builtin_win_pct"] \
        <= row["vs_builtin_win_high"] <= 100
    assert row["vs_builtin_win_high"] - row["vs_builtin_win_low"] > 10  # two games: wide
    # a run recorded before these fields existed keeps its identity at their defaults
    assert "init" not in TINY.identity() and "init" in longer.identity()


def test_one_checkpoint_named_two_ways_is_one_setting_of_a_run():
    """A resume that names `--init x.pt` as `./x.pt` is the same run, not other settings."""
    assert dataclasses.replace(TINY, init="./runs/x.pt").identity() == \
        dataclasses.replace(TINY, init="runs/x.pt").identity()
    assert dataclasses.replace(TINY, init="runs/y.pt").identity() != \
        dataclasses.replace(TINY, init="runs/x.pt").identity()


def test_playout_caps_search_most_moves_cheaply_and_learn_policy_only_from_full_ones(tmp_path):
    from nlmcs.net.selfplay import NetGameJob, selfplay_game
    from nlmcs.paths import shipped_dir

    job = NetGameJob(net=str(shipped_dir() / "nets" / "civ.pt"), opponent="builtin",
                     game="civ", game_options={"preset": "tiny", "max_turns": 12}, seed=3,
                     rollouts=6, net_depth=1, value_weight=0.5, puct_c=0.3, prior_floor=0.1)

    def full_rows(result) -> list[bool]:
        s = result["samples"]
        per_position = [s.target[(s.cand_agent >= 0)][
            (s.agent_pos[s.cand_agent] == i)].sum() > 0 for i in range(len(s))]
        return per_position

    every = full_rows(selfplay_game(job))
    assert all(every)  # at the full share, every move teaches the policy
    capped = selfplay_game(dataclasses.replace(job, full_share=0.3, cheap_rollouts=2))
    rows = full_rows(capped)
    assert len(rows) == len(every) and 0 < sum(rows) < len(rows)
    assert set(capped["samples"].value) <= {0.0, 0.5, 1.0}  # every position learns the result
    again = selfplay_game(dataclasses.replace(job, full_share=0.3, cheap_rollouts=2))
    assert full_rows(again) == rows  # the cap's draws come from the game's seed


def test_fewer_judging_games_against_the_previous_generation_are_the_first_seeds():
    from nlmcs.net.spec import eval_seeds, previous_seeds

    spec = dataclasses.replace(TINY, eval_games=100, previous_games=40)
    assert previous_seeds(spec) == eval_seeds(spec)[:40] and len(eval_seeds(spec)) == 100
    assert previous_seeds(dataclasses.replace(spec, previous_games=None)) == eval_seeds(spec)
    assert "previous_games" not in TINY.identity() and spec.identity()["previous_games"] == 40


@pytest.mark.parametrize("field", ["puct_c", "dirichlet_alpha"])
def test_a_setting_its_games_would_refuse_is_refused_before_any_work(field):
    # a 0 here used to pass the training spec, clone the corpus, then fail at the first game
    with pytest.raises(UserInputError, match=f"{field}=0.0: must be greater than 0"):
        TrainSpec(**{field: 0.0})


def test_judging_games_are_kept_as_they_end_and_a_rerun_plays_only_the_missing(tmp_path,
                                                                              monkeypatch):
    """A 100-turn judging of 100 games is most of an hour: a killed run keeps the games it
    judged (rows of the judged network's sha256, so another network's are never read)."""
    import json

    from nlmcs.files import sha256_file
    from nlmcs.games import make_game
    from nlmcs.net import train
    from nlmcs.net.checkpoint import Checkpoint, save
    from nlmcs.net.model import NetConfig
    from nlmcs.net.spec import eval_seeds

    game = make_game("civ", preset="small", max_turns=TINY.max_turns)
    net = save(Checkpoint.fresh(game, NetConfig(hidden=8)), tmp_path / "a.pt")
    played, real = [], train.match_game
    monkeypatch.setattr(train, "match_game", lambda job: played.append(job.seed) or real(job))
    record, seeds, lines = tmp_path / "gen-000-judging.jsonl", eval_seeds(TINY), []
    first = train._judge(TINY, net, "builtin:normal", None, seeds, lines.append, record)
    rows = [json.loads(line) for line in record.read_text().splitlines()]
    assert sorted(played) == sorted(seeds) and len(rows) == len(seeds) == 2
    assert {r["net_sha256"] for r in rows} == {sha256_file(net)}
    record.write_text(record.read_text().splitlines(keepends=True)[0])  # killed before game 2
    played.clear()
    again = train._judge(TINY, net, "builtin:normal", None, seeds, lines.append, record)
    assert played == [rows[1]["seed"]] and again == first
    assert any("1 of 2 judging games against builtin:normal kept" in line for line in lines)
    other = save(Checkpoint.fresh(game, NetConfig(hidden=8), seed=9), tmp_path / "b.pt")
    played.clear()
    train._judge(TINY, other, "builtin:normal", None, seeds, lines.append, record)
    assert sorted(played) == sorted(seeds)
