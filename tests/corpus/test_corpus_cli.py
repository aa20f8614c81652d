"""Every `nlmcs corpus` command and `nlmcs bench priors`, smoke-run with tiny budgets."""

from __future__ import annotations

import json
import os

import pytest
from corpus_logs import game_lines, write_log

from nlmcs.cli import main
from nlmcs.paths import shipped_dir


@pytest.fixture
def shipped_rulesets(tmp_path):
    """The data root is a temporary one; the engine still needs the shipped rulesets in it."""
    (tmp_path / "data").mkdir(exist_ok=True)
    os.symlink(shipped_dir() / "rulesets", tmp_path / "data" / "rulesets")


def test_ingest_stats_and_bad_input(make_log, tmp_path, capsys):
    log = make_log(n_games=6, turns=4)
    assert main(["corpus", "ingest", str(log), "--name", "demo"]) == 0
    assert "+6 games" in capsys.readouterr().out
    assert main(["corpus", "ingest", str(log), "--name", "demo"]) == 0
    assert "already ingested" in capsys.readouterr().out
    assert main(["corpus", "stats", "demo", "--naive-bayes"]) == 0
    out = capsys.readouterr().out
    assert "games 6" in out and "decisions per action type" in out and "accuracy" in out
    bad = write_log(tmp_path / "bad.jsonl", [game_lines("zz", seed=1)], tail='{"type": "ga')
    assert main(["corpus", "ingest", str(bad), "--name", "demo"]) == 2
    assert "bad.jsonl:" in capsys.readouterr().err
    assert main(["corpus", "stats", "missing"]) == 2
    assert "no corpus at" in capsys.readouterr().err


def test_record_then_query_on_the_real_engine(tmp_path, capsys, shipped_rulesets):
    args = ["corpus", "record", "--games", "2", "--players", "builtin,random", "--name", "tiny",
            "--preset", "tiny", "--max-turns", "4", "--workers", "1"]
    assert main(args) == 0
    assert "corpus tiny: 2 games" in capsys.readouterr().out
    assert main(args) == 0  # resumes: nothing new to play or ingest
    assert "(0 games new)" in capsys.readouterr().out
    lean = ["corpus", "record", "--games", "1", "--players", "builtin,random", "--name", "lean",
            "--preset", "tiny", "--max-turns", "2", "--workers", "1", "--no-states"]
    assert main(lean) == 0
    logs = list((tmp_path / "data" / "corpora" / "lean" / "logs").glob("*.jsonl"))
    records = [json.loads(x) for x in logs[0].read_text().splitlines()]
    turns = [r for r in records if r["type"] == "turn"]
    assert turns and all("state" not in t for t in turns)
    assert main(["corpus", "list"]) == 0
    listed = capsys.readouterr().out
    assert "lean" in listed and "civ-sample" in listed and "shipped" in listed
    assert main(["corpus", "export", "lean", "--out", str(tmp_path / "lean-copy")]) == 0
    assert "exported lean" in capsys.readouterr().out
    assert not (tmp_path / "lean-copy" / "logs").exists()

    from nlmcs.games import make_game

    game = make_game("civ", preset="tiny", max_turns=4)
    state = game.new_initial_state(7)
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state.to_json()))
    agent = next(a for a in state.agents(0) if a.startswith("unit:"))
    assert main(["corpus", "query", "tiny", "--state", str(path), "--agent", agent, "-k", "2",
                 "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows and sum(r["pairs"] for r in rows) > 0
    assert all(len(r["top"]) <= 2 for r in rows)
    assert main(["corpus", "query", "tiny", "--state", str(path), "--agent", "unit:999"]) == 2
    assert "no agent 'unit:999'" in capsys.readouterr().err


def test_bench_priors_prints_a_table(capsys):
    assert main(["bench", "priors", "--sizes", "2000", "--queries", "5", "--features", "8"]) == 0
    out = capsys.readouterr().out
    assert "ms/decision" in out and "exact" in out and "ivf" in out
    assert main(["bench", "priors", "--sizes", "lots"]) == 2


@pytest.mark.parametrize(("players", "message"), [
    ("builtin", "at least two"), ("search,builtin", "needs --method"),
    ("builtin,wizard", "unknown player 'wizard'")])
def test_record_refuses_bad_players(players, message, capsys):
    assert main(["corpus", "record", "--players", players, "--name", "x", "--games", "1"]) == 2
    assert message in capsys.readouterr().err
