"""Sizes (issue 60, class 4): every option that counts games has one bound
(`commands.options.GAMES`, at most `MAX_GAMES`), on the command line and in a config file, so no
command plans 10**9 games in memory; a stored run.json that asks for more is counted, never
listed, by `ablation status`."""

from __future__ import annotations

import json

import pytest
from robust_support import assert_refused

from nlmcs.commands.options import MAX_GAMES

TOO_MANY = str(10**9)


@pytest.mark.parametrize("command", [
    ("ablation", "run", "--methods", "uct", "--out", "OUT"),
    ("advice", "audit", "--out", "OUT"),
    ("corpus", "record", "--name", "big"),
    ("game", "series"),
    ("reader", "train", "--out", "OUT"),
    ("reader", "agreement"),
    ("relevance", "accuracy", "--out", "OUT"),
    ("bench", "net"),
])
def test_every_games_option_has_one_bound(cli, tmp_path, command):
    args = [str(tmp_path / "out") if a == "OUT" else a for a in command]
    assert_refused(cli(*args, "--games", TOO_MANY), "--games", f"between 1 and {MAX_GAMES}")
    assert not (tmp_path / "out").exists()


def test_a_config_file_asking_for_too_many_games_is_refused(cli, tmp_path):
    config = tmp_path / "big.toml"
    config.write_text(f'games = {TOO_MANY}\nmethods = ["uct"]\n')
    assert_refused(cli("ablation", "run", "--config", config, "--out", tmp_path / "out"),
                   "big.toml", "games", str(MAX_GAMES))


def test_status_counts_a_stored_run_of_any_size_without_listing_it(cli, tmp_path):
    first = cli("ablation", "run", "--methods", "uct", "--map", "tiny", "--steps", "1",
                "--rollouts", "2", "--depth", "1", "--games", "1", "--workers", "1",
                "--no-progress", "--out", tmp_path / "run")
    assert first.code == 0, first.err
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    run["spec"]["games"] = 10**12
    (tmp_path / "run" / "run.json").write_text(json.dumps(run))
    status = cli("ablation", "status", tmp_path / "run")
    assert status.code == 0 and "1" in status.out, status.err
