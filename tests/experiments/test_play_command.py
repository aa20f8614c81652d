"""Smoke runs of `nlmcs play` and `nlmcs bench search` on the tiny civ map with tiny budgets."""

import json

import pytest

from nlmcs.cli import main
from nlmcs.experiments.bench_search import bench_search
from nlmcs.games import make_game
from nlmcs.search.config import SearchConfig


@pytest.mark.parametrize("method", ["uct", "linear"])
def test_play_runs_and_logs_decisions(method, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NLMCS_DATA", str(tmp_path))
    log = tmp_path / "decisions.jsonl"
    code = main(["play", "--method", method, "--map", "tiny", "--steps", "2", "--rollouts", "3",
                 "--depth", "2", "--no-progress", "--log-decisions", str(log)])  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    assert f"method {method}" in out and "seconds/step" in out
    records = [r for r in map(json.loads, log.read_text().splitlines()) if "record" not in r]
    assert {r["step"] for r in records} == {0, 1}
    assert all(r["candidates"] and "q" in r["candidates"][0] for r in records)


def test_play_rejects_bad_options(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NLMCS_DATA", str(tmp_path))
    assert main(["play", "--method", "nope", "--map", "tiny", "--steps", "1", "--no-progress"]) == 2
    assert "unknown method" in capsys.readouterr().err
    assert main(["play", "--rollouts", "0", "--map", "tiny", "--no-progress"]) == 2
    assert main(["play", "--method", "text", "--manual", "missing-manual", "--map", "tiny",
                 "--steps", "1", "--no-progress"]) == 2  # fmt: skip
    assert "error:" in capsys.readouterr().err


def test_bench_search_prints_a_table(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NLMCS_DATA", str(tmp_path))
    code = main(["bench", "search", "--methods", "linear,uct", "--rollouts", "2", "--workers", "1",
                 "--depth", "2", "--map", "tiny"])  # fmt: skip
    assert code == 0
    lines = capsys.readouterr().out.splitlines()
    header = ["method", "rollouts", "workers", "backend", "sec/step", "warm", "s", "cpu", "s",
              "peak", "MB", "x", "ref", "release"]
    assert lines[0].split() == header
    rows = [ln.split() for ln in lines[1:-2]]  # then the legend and the load average
    # the learned method is timed with the reference first, then the compiled path and its ratio
    assert [(r[0], r[3]) for r in rows] == [("linear", "numpy"), ("linear", "numba"), ("uct", "-")]
    assert len(rows[1]) == 9 and float(rows[1][8]) > 0
    assert all(r[5] == "-" for r in rows)  # one step: no warm mean
    assert main(["bench", "search", "--methods", "linear", "--rollouts", "2", "--workers", "1",
                 "--depth", "2", "--map", "tiny", "--backends", "numba", "--steps", "3"]) == 0
    row = capsys.readouterr().out.splitlines()[1].split()
    assert row[3] == "numba" and float(row[5]) >= 0  # the mean of steps 2 and 3
    timed = bench_search(game=make_game("civ", preset="tiny"), methods=["linear"], rollouts=[2],
                         workers=[1], search_config=SearchConfig(depth=2), steps=3)  # fmt: skip
    assert len(timed) == 1 and timed[0].warm_seconds > 0 and timed[0].seconds > 0
    assert main(["bench", "search", "--backends", "torch"]) == 2


def test_bad_input_fails_before_anything_plays(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NLMCS_DATA", str(tmp_path))
    cases = [
        (["--method", "text", "--manual", "missing-manual"], "missing-manual"),
        (["--method", "uct-corpus", "--corpus", "no-such-corpus"], "no-such-corpus"),
        (["--method", "linear", "--log-decisions", str(tmp_path)], "is a directory"),
        (["--method", "linear", "--log-decisions", str(tmp_path / "no" / "x.jsonl")],
         "does not exist"),
        (["--method", "linear", "--alpha", "nan"], "--alpha"),
        (["--method", "linear", "--seed", "-1"], "--seed"),
    ]  # fmt: skip
    for argv, needle in cases:
        code = main(["play", *argv, "--map", "tiny", "--steps", "2", "--rollouts", "2",
                     "--depth", "2"])  # fmt: skip
        err = capsys.readouterr().err
        assert code == 2, argv
        # one line, and no progress bar was drawn before it
        assert err.startswith("error:") and err.count("\n") == 1 and needle in err, (argv, err)


def test_shipped_manual_and_twin_are_built_on_first_use(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NLMCS_DATA", str(tmp_path))
    code = main(["play", "--method", "random-text", "--map", "tiny", "--steps", "1",
                 "--rollouts", "2", "--depth", "2", "--no-progress"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0
    notes = [line for line in err.splitlines() if line.startswith("note:")]
    assert len(notes) == 2 and "civ-guide" in notes[0] and "civ-guide-random" in notes[1]
    assert (tmp_path / "manuals" / "civ-guide" / "meta.json").is_file()
    assert (tmp_path / "manuals" / "civ-guide-random" / "meta.json").is_file()
    assert main(["play", "--method", "text", "--map", "tiny", "--steps", "1", "--rollouts", "2",
                 "--depth", "2", "--no-progress"]) == 0  # fmt: skip
    assert "note:" not in capsys.readouterr().err  # built once, then read


def test_random_text_reads_the_twin_of_the_seed_given(tmp_path, capsys):
    log = tmp_path / "d.jsonl"
    code = main(["play", "--method", "random-text", "--twin-seed", "3", "--map", "tiny",
                 "--steps", "1", "--rollouts", "2", "--depth", "2", "--no-progress",
                 "--log-decisions", str(log), "--log-states"])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    header = json.loads(log.read_text().splitlines()[0])
    assert header["manual"] == "civ-guide-random-3"
    assert main(["relevance", "show", str(log), "--manual", "civ-guide-random-3"]) == 0
    assert main(["relevance", "show", str(log), "--manual", "civ-guide-random"]) == 2


def test_play_reads_the_corpus_named_by_option(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NLMCS_DATA", str(tmp_path))
    assert main(["corpus", "record", "--games", "2", "--preset", "tiny", "--max-turns", "4",
                 "--workers", "1", "--name", "mine"]) == 0  # fmt: skip
    capsys.readouterr()
    log = tmp_path / "d.jsonl"
    code = main(["play", "--method", "flat-ucb-corpus", "--corpus", "mine", "--map", "tiny",
                 "--steps", "1", "--rollouts", "4", "--depth", "2", "--no-progress",
                 "--prior-mode", "visits", "--log-decisions", str(log)])  # fmt: skip
    assert code == 0
    arms = [c for r in map(json.loads, log.read_text().splitlines()) if "record" not in r
            for c in r["candidates"]]
    assert any(c["visits"] >= 10 for c in arms)  # the paper's mode seeds arms with 10 visits
