"""Every `nlmcs game` command and `nlmcs bench engine` on tiny budgets, and bad input."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from nlmcs.cli import main
from nlmcs.paths import shipped_dir

CLASSIC = str(shipped_dir() / "rulesets" / "classic.json")
FREECIV_CLASSIC = Path("/usr/share/games/freeciv/classic")
SMALL = ["--map", "small", "--ruleset", CLASSIC]


@pytest.fixture(autouse=True)
def _data_root(tmp_path, monkeypatch):
    monkeypatch.setenv("NLMCS_DATA", str(tmp_path / "data"))


def test_play_saves_log_and_state_then_render(tmp_path, capsys):
    log, state = tmp_path / "g.jsonl", tmp_path / "s.json"
    rc = main(["game", "play", "--players", "builtin,random", "--seed", "3", "--turns", "8",
               "--render", "ascii", "--save-log", str(log), "--save-state", str(state), *SMALL])
    out = capsys.readouterr().out
    assert rc == 0 and "seed 3: 8 turns" in out and "player 0 (A)" in out
    kinds = [json.loads(line)["type"] for line in log.read_text().splitlines()]
    assert kinds[0] == "game" and kinds[-1] == "result" and kinds.count("turn") == 8
    png = tmp_path / "map.png"
    assert main(["game", "render", str(state), "--png", str(png), "--ruleset", CLASSIC]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["game", "render", str(state), "--ruleset", CLASSIC]) == 0
    assert "turn 8/8" in capsys.readouterr().out


def test_series_writes_a_csv(tmp_path, capsys):
    out = tmp_path / "r.csv"
    rc = main(["game", "series", "--players", "builtin,random", "--games", "2", "--turns", "10",
               "--out", str(out), *SMALL])
    assert rc == 0
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 2 and rows[0]["player0"] == "builtin" and rows[1]["player0"] == "random"
    assert "builtin:" in capsys.readouterr().out


def test_bench_engine_prints_figures(capsys):
    rc = main(["bench", "engine", "--rollouts", "2", "--depth", "3", "--midgame-turns", "4",
               *SMALL])
    out = capsys.readouterr().out
    assert rc == 0 and "turns_per_second" in out and "clone_microseconds" in out


@pytest.mark.skipif(not FREECIV_CLASSIC.is_dir(), reason="FreeCiv data not installed")
def test_convert_ruleset(tmp_path, capsys):
    out = tmp_path / "classic.json"
    assert main(["game", "convert-ruleset", str(FREECIV_CLASSIC), "--out", str(out),
                 "--name", "classic"]) == 0
    assert json.loads(out.read_text()) == json.loads(Path(CLASSIC).read_text())


def _bad_ruleset(tmp_path) -> str:
    data = json.loads(Path(CLASSIC).read_text())
    data["units"][0]["cost"] = -1
    path = tmp_path / "neg.json"
    path.write_text(json.dumps(data))
    return str(path)


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["game", "play", "--map", "small", "--ruleset", "RULESET"], "negative"),
        (["game", "play", "--width", "3", "--ruleset", CLASSIC], "width=3: must be between 8"),
        (["game", "play", "--players", "builtin,wizard", *SMALL], "unknown player 'wizard'"),
        (["game", "play", "--turns", "0", *SMALL], "--turns must be at least 1"),
        (["game", "play", "--map", "huge", "--ruleset", CLASSIC], "unknown map preset"),
        (["game", "render", "STATE"], "not valid JSON"),
        (["game", "render", "IMPOSSIBLE", "--ruleset", CLASSIC], "ocean"),
        (["game", "render", "MISSING"], "no such file"),
        (["game", "convert-ruleset", "NODIR", "--out", "x.json"], "not a directory"),
        (["game", "play", "--ruleset", "no-such-ruleset"], "ruleset not found"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, argv, needle):
    truncated = tmp_path / "trunc.json"
    truncated.write_text('{"format": "nlmcs-civ-state/1", "map": {"wid')
    state = tmp_path / "s.json"
    main(["game", "play", "--turns", "2", "--save-state", str(state), *SMALL])
    data = json.loads(state.read_text())
    ocean = "".join(data["map"]["terrain"]).index(" ")
    data["units"][0]["tile"] = ocean
    impossible = tmp_path / "bad.json"
    impossible.write_text(json.dumps(data))
    capsys.readouterr()
    subs = {"RULESET": _bad_ruleset(tmp_path), "STATE": str(truncated),
            "IMPOSSIBLE": str(impossible), "MISSING": str(tmp_path / "none.json"),
            "NODIR": str(tmp_path / "nodir")}
    rc = main([subs.get(a, a) for a in argv])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err
    assert needle in err
