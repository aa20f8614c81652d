"""Signals and pipes: SIGTERM (what `timeout` and job schedulers send) is handled like Ctrl-C,
finished work is kept where the user asked for it, no worker prints a traceback, and a reader
that goes away ends a command quietly.

Signals go to the whole process group, as a terminal's Ctrl-C and most schedulers send them.
"""

from __future__ import annotations

import csv
import json
import os
import signal

import pytest
from robust_support import (
    DEADLINE,
    assert_clean,
    finish,
    hidden_leftovers,
    nlmcs_argv,
    ordinary_mode,
    run,
    start,
    wait_for,
)

EXIT = {signal.SIGTERM: 143, signal.SIGINT: 130}


def _strict_json(line: str):
    def refuse(name):
        raise ValueError(f"not JSON: {name}")

    return json.loads(line, parse_constant=refuse)


def _temporary(folder, name: str):
    """The hidden temporary a running command writes `name` through, once it holds data."""
    return [p for p in folder.iterdir()
            if p.name.startswith(f".{name}.") and p.stat().st_size > 0]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signalled_play_keeps_its_decision_log(sig, env, tmp_path):
    log = tmp_path / "decisions.jsonl"
    proc = start("play", "--method", "linear", "--map", "small", "--steps", "100000",
                 "--rollouts", "8", "--depth", "2", "--workers", "2", "--log-states",
                 "--log-decisions", log, env=env)
    wait_for(lambda: _temporary(tmp_path, log.name), "the log to hold data", proc)
    os.killpg(proc.pid, sig)
    result = finish(proc)
    assert result.code == EXIT[sig], result
    assert "Traceback" not in result.err and "Error" not in result.err, result
    assert log.is_file() and hidden_leftovers(tmp_path) == []
    records = [_strict_json(line) for line in log.read_text().splitlines()]
    assert records[0]["record"] == "game" and any(r.get("record") == "state" for r in records)
    assert log.stat().st_mode & 0o777 == ordinary_mode()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signalled_series_keeps_every_finished_game(sig, env, tmp_path):
    out = tmp_path / "series.csv"
    proc = start("game", "series", "--games", "100000", "--map", "tiny", "--turns", "3",
                 "--out", out, env=env)
    wait_for(out.exists, "the first game's row", proc)
    os.killpg(proc.pid, sig)
    result = finish(proc)
    assert result.code == EXIT[sig] and "Traceback" not in result.err, result
    rows = list(csv.DictReader(out.open()))
    note = next(line for line in result.err.splitlines() if "interrupted after" in line)
    assert f"after {len(rows)} of" in note  # every game the note counts is in the file
    assert [int(r["game"]) for r in rows] == list(range(len(rows)))
    assert hidden_leftovers(tmp_path) == []
    assert out.stat().st_mode & 0o777 == ordinary_mode()


def test_a_terminated_record_keeps_its_games_and_resumes(env, data):
    from corpus.store import load_corpus
    from nlmcs.seeds import game_seed

    logs = data / "corpora" / "rec" / "logs"
    args = ("corpus", "record", "--name", "rec", "--workers", "2", "--preset", "small")
    proc = start(*args, "--games", "500", env=env)
    wait_for(lambda: logs.is_dir() and list(logs.glob("game-*.jsonl")), "a recorded game", proc)
    os.killpg(proc.pid, signal.SIGTERM)
    result = finish(proc)
    assert result.code == 143 and "Traceback" not in result.err, result
    assert "finished game(s) kept" in result.err
    assert hidden_leftovers(logs) == []
    index = {game_seed(0, i): i for i in range(500)}  # game i's seed
    kept = sorted(index[int(p.stem.split("-")[1])] for p in logs.glob("game-*.jsonl"))
    games = kept[-1] + 2  # the same games from 0, a little further than any game kept
    again = run(*args, "--games", games, env=env)
    assert_clean(again)
    assert f"({len(kept)} were already recorded)" in again.out
    assert load_corpus(data / "corpora" / "rec").meta["counts"]["games"] == games


@pytest.mark.parametrize("args", [("manual", "list"), ("corpus", "ingest", "LOG", "--name", "d"),
                                  ("game", "play", "--map", "tiny", "--turns", "2",
                                   "--render", "ascii"),
                                  ("--help",), ("manual", "--help")])
def test_a_closed_pipe_ends_the_command_quietly(args, env, logs):
    """`nlmcs ... | head -1` when head has already gone: no traceback, no 'Exception ignored'."""
    import subprocess

    argv = nlmcs_argv(*(logs() if a == "LOG" else a for a in args))
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line is written
    try:
        proc = subprocess.run(argv, env=env, stdout=write, stderr=subprocess.PIPE, text=True,
                              timeout=DEADLINE)
    finally:
        os.close(write)
    assert proc.returncode in (0, 141), proc.stderr
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr, proc.stderr
    assert "BrokenPipe" not in proc.stderr
