"""`nlmcs ablation run|report|status` end to end on the tiny map, and its answers to bad input."""

import json
import socket

import pytest

from nlmcs.cli import build_parser, main
from nlmcs.commands.ablation import build_spec

TINY = ["--map", "tiny", "--steps", "2", "--rollouts", "2", "--depth", "2", "--no-progress"]


@pytest.mark.slow
def test_run_status_report_and_resume(tmp_path, capsys):
    out = str(tmp_path / "run")
    args = ["ablation", "run", "--methods", "linear,uct", "--games", "2", "--workers", "1",
            "--out", out, *TINY]  # fmt: skip
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "2 arm(s) x 2 games, 0 stored, 4 to play in 1 local process(es)" in text
    assert ("| method | wins | losses | undecided | win % [95% CI] | s/step | margin (se) | "
            "games |") in text
    # the run records what code played, beside (not in) its identity
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert len(run["code"]["commit"]) == 40 and isinstance(run["code"]["dirty"], bool)
    assert run["code"]["packages"]["numpy"]
    assert all("code" not in ident for ident in run["identities"].values())
    assert "| linear vs uct | 2 |" in text
    # the tables end on a verdict in words: two pairs can say nothing
    assert "## What this run can say" in text
    assert "linear vs uct: no difference this run can see** at 2 pairs" in text
    assert "files written:" in text and "winrate.png" in text
    assert main(args) == 0  # resumes: everything is stored, nothing is replayed
    assert "all 4 games are stored; nothing to play" in capsys.readouterr().out
    assert main(["ablation", "status", out]) == 0
    status = capsys.readouterr().out.splitlines()
    assert status[-1] == "4 of 4 games done, 0 left"
    assert [line.split() for line in status[-3:-1]] == [["linear", "2", "2", "0"],
                                                          ["uct", "2", "2", "0"]]  # fmt: skip
    (tmp_path / "run" / "summary.md").unlink()
    assert main(["ablation", "report", out]) == 0
    assert (tmp_path / "run" / "summary.md").read_text().count("\n| ") >= 3


def test_bad_input_is_one_line_and_stores_nothing(tmp_path, capsys):
    out = tmp_path / "run"
    base = ["ablation", "run", "--methods", "uct", "--out", str(out), *TINY]
    cases = [
        (["--games", "0"], "--games must be between 1 and 100000, got 0"),
        (["--methods", "uct,nope"], "unknown method 'nope'"),
        (["--methods", "text", "--manual", "no-such-manual"], "no-such-manual"),
        (["--full-games", "--steps", "3"], "--full-games plays to the turn limit"),
        (["--rollouts", "0"], "--rollouts needs positive integers"),
        (["--opponent", "nobody"], "unknown player 'nobody'"),
    ]
    for extra, message in cases:
        assert main([*base, *extra]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and message in err and err.count("\n") == 1
    with socket.socket() as s:  # a port where nothing listens
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert main([*base, "--games", "1", "--scheduler", f"tcp://127.0.0.1:{port}",
                 "--connect-timeout", "1"]) == 2  # fmt: skip
    assert "error: no Dask scheduler answers at tcp://127.0.0.1:" in capsys.readouterr().err
    assert not out.exists()


def test_refusals_leave_the_run_folder_as_it_was(tmp_path, capsys):
    out = tmp_path / "run"
    args = ["ablation", "run", "--methods", "uct", "--games", "1", "--workers", "1", "--out",
            str(out), *TINY]  # fmt: skip
    assert main(args) == 0
    stored = (out / "games.jsonl").read_bytes()
    capsys.readouterr()
    assert main([*args, "--depth", "3"]) == 2
    assert "another configuration (search.depth 2 -> 3)" in capsys.readouterr().err
    (out / "games.jsonl").write_bytes(stored + b"not json\n")
    assert main(args) == 2
    assert "games.jsonl line 2: malformed JSON" in capsys.readouterr().err
    assert main(["ablation", "report", str(out)]) == 2
    assert main(["ablation", "report", str(out), "--skip-bad-lines"]) == 0
    assert "line 2: malformed JSON" in capsys.readouterr().err
    assert (out / "games.jsonl").read_bytes() == stored + b"not json\n"
    assert main(["ablation", "status", str(tmp_path)]) == 2


def test_presets_fill_in_what_the_options_leave_out():
    parse = build_parser().parse_args
    spec, out = build_spec(parse(["ablation", "run", "--preset", "quick"]))
    assert (spec.steps, spec.rollouts, spec.search.depth, spec.games) == (12, (10,), 5, 20)
    assert spec.full_games and spec.game_options == {"preset": "small", "max_turns": 12}
    assert spec.methods == ("text", "random-text", "nonlinear", "linear", "uct")
    assert str(out) == "runs/quick"
    assert spec.twin_seed is None  # random-text: a twin per game
    spec, _ = build_spec(parse(["ablation", "run", "--preset", "quick", "--twin-seed", "3"]))
    assert spec.twin_seed == 3 and spec.identity()["twin_seed"] == 3
    spec, _ = build_spec(parse(["ablation", "run", "--preset", "quick", "--steps", "3",
                                "--games", "4"]))  # fmt: skip
    assert (spec.steps, spec.full_games, spec.games) == (3, False, 4)
    assert spec.game_options == {"preset": "small"}
    spec, _ = build_spec(parse(["ablation", "run", "--preset", "quick", "--no-full-games"]))
    assert (spec.steps, spec.full_games) == (12, False)  # said, so not the preset's full games
    spec, out = build_spec(parse(["ablation", "run", "--rollouts", "50,100", "--map", "tiny"]))
    assert (spec.steps, spec.rollouts, spec.search.depth, spec.games) == (100, (50, 100), 20,
                                                                            200)  # fmt: skip
    assert [a.label for a in spec.arms()][:2] == ["text@50", "text@100"]
    spec, _ = build_spec(parse(["ablation", "run", "--full-games", "--max-turns", "7"]))
    assert spec.steps == 7 and spec.full_games and spec.game_options["max_turns"] == 7
    # a FreeCiv match, which `play` and the benchmarks refuse, is an ablation's game
    spec, _ = build_spec(parse(["ablation", "run", "--game", "freeciv", "--opponent",
                                "freeciv:easy", "--full-games", "--max-turns", "9"]))
    assert spec.game == "freeciv" and spec.steps == 9 and spec.game_options == {"max_turns": 9}


def test_the_reading_presets_ask_the_reading_question_at_its_horizon():
    parse = build_parser().parse_args
    for name, rollouts, games in (("reading", 30, 100), ("reading-quick", 10, 8)):
        spec, out = build_spec(parse(["ablation", "run", "--preset", name]))
        assert spec.methods == ("text", "random-text", "nonlinear") and str(out) == f"runs/{name}"
        assert spec.full_games and spec.steps == 100
        assert spec.game_options == {"preset": "small", "max_turns": 100}
        assert (spec.rollouts, spec.search.depth, spec.games) == ((rollouts,), 5, games)
    spec, _ = build_spec(parse(["ablation", "run", "--preset", "reading", "--methods", "text,q0"]))
    assert spec.methods == ("text", "q0")


@pytest.mark.slow
def test_a_preset_run_ends_with_what_the_pre_registered_blocks_found(tmp_path, capsys):
    from nlmcs.experiments.ablation.spec import READING_FINDINGS

    assert main(["ablation", "run", "--preset", "reading-quick", "--games", "1", "--max-turns",
                 "2", "--rollouts", "2", "--depth", "2", "--workers", "1", "--no-progress",
                 "--out", str(tmp_path / "run")]) == 0
    text = capsys.readouterr().out
    assert "text vs random-text: no difference this run can see** at 1 pairs" in text
    assert text.rstrip().endswith(READING_FINDINGS)
    assert "docs/reading.md" in READING_FINDINGS


@pytest.mark.parametrize("action", ["run", "report", "status"])
def test_help_ends_with_an_example(action, capsys):
    with pytest.raises(SystemExit):
        main(["ablation", action, "--help"])
    assert capsys.readouterr().out.rstrip().splitlines()[-1].startswith("  nlmcs ablation ")


def test_pair_compares_arms_of_two_runs_on_shared_seeds_only(tmp_path, capsys):
    def run(name, *extra):
        out = str(tmp_path / name)
        assert main(["ablation", "run", "--methods", "uct", "--games", "2", "--workers", "1",
                     "--out", out, *TINY, *extra]) == 0
        return out

    cheap, dear = run("cheap"), run("dear", "--rollouts", "3")
    other = run("other", "--seed", "9")
    capsys.readouterr()
    assert main(["ablation", "pair", cheap, "uct", dear, "uct"]) == 0
    assert "| cheap/uct vs dear/uct | 2 |" in capsys.readouterr().out
    assert main(["ablation", "pair", cheap, "uct", other, "uct"]) == 2
    assert "play different games (seed differ)" in capsys.readouterr().err
    assert main(["ablation", "pair", cheap, "nope", dear, "uct"]) == 2
    assert "no games of arm 'nope'" in capsys.readouterr().err
