"""An output named like an input (by any spelling or a link) is refused before any work, and
the input is left as it was."""

import os

import pytest

from nlmcs.cli import main
from nlmcs.errors import UserInputError
from nlmcs.files import check_distinct


def test_check_distinct_sees_through_spellings_and_links(tmp_path):
    log = tmp_path / "d.jsonl"
    log.write_text("{}\n")
    os.symlink(log, tmp_path / "link.jsonl")
    (tmp_path / "sub").mkdir()
    for spelling in (log, tmp_path / "sub" / ".." / "d.jsonl", tmp_path / "link.jsonl"):
        with pytest.raises(UserInputError, match="--html would write over the log"):
            check_distinct({"the log": log}, {"--html": spelling})
    with pytest.raises(UserInputError, match="--report would write over --log-decisions"):
        check_distinct({}, {"--log-decisions": tmp_path / "x.out",
                            "--report": tmp_path / "." / "x.out"})
    check_distinct({"the log": log}, {"--html": tmp_path / "r.html", "--csv": None})


def test_relevance_report_and_play_refuse_before_any_work(tmp_path, capsys):
    log = tmp_path / "d.jsonl"
    log.write_text('{"not": "a log"}\n')
    before = log.read_bytes()
    assert main(["relevance", "report", str(log), "--html", str(log)]) == 2
    assert main(["relevance", "report", str(log), "--compare", str(tmp_path / "c.jsonl"),
                 "--html", str(tmp_path / "c.jsonl")]) == 2
    assert log.read_bytes() == before and not (tmp_path / "c.jsonl").exists()
    out = tmp_path / "x.out"
    assert main(["play", "--method", "text", "--map", "tiny", "--steps", "1", "--rollouts", "2",
                 "--log-decisions", str(out), "--report", str(out), "--no-progress"]) == 2
    assert not out.exists()
    assert "would write over" in capsys.readouterr().err


def test_game_commands_refuse_outputs_over_inputs(tmp_path, capsys):
    from nlmcs.paths import shipped_dir

    ruleset = tmp_path / "r.json"
    ruleset.write_bytes((shipped_dir() / "rulesets" / "classic.json").read_bytes())
    before = ruleset.read_bytes()
    state = tmp_path / "s.json"
    assert main(["game", "play", "--players", "builtin,random", "--turns", "1", "--map",
                 "tiny", "--save-state", str(state)]) == 0  # fmt: skip
    cases = [
        ["game", "series", "--players", "builtin,random", "--games", "1", "--turns", "1",
         "--map", "tiny", "--ruleset", str(ruleset), "--out", str(ruleset)],
        ["game", "play", "--players", "builtin,random", "--turns", "1", "--map", "tiny",
         "--save-log", str(tmp_path / "a.jsonl"), "--save-state", f"{tmp_path}/./a.jsonl"],
        ["game", "render", str(state), "--png", str(state)],
    ]  # fmt: skip
    capsys.readouterr()
    for argv in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert "would write over" in err and err.count("\n") == 1, err
    assert ruleset.read_bytes() == before and state.read_text().startswith("{")
    assert not (tmp_path / "a.jsonl").exists()
