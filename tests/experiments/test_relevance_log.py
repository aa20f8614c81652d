"""The decision log read back: typed records (header, states, result) beside unchanged decision
records, and bad logs answered with one line naming the file (and line), non-zero where nothing
shows."""

from __future__ import annotations

import json

import pytest
from relevance_records import records, write

from nlmcs.cli import main
from nlmcs.experiments.relevance.log import LOG_FORMAT, read_log
from nlmcs.experiments.relevance.summary import associations

TINY = ["--map", "tiny", "--steps", "2", "--rollouts", "3", "--depth", "2", "--no-progress"]


def _lines(path):
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_log_states_adds_typed_records_and_keeps_decisions(tmp_path, capsys):
    plain, full = tmp_path / "plain.jsonl", tmp_path / "full.jsonl"
    assert main(["play", "--method", "text", *TINY, "--log-decisions", str(plain),
                 "--no-log-states"]) == 0  # fmt: skip
    assert main(["play", "--method", "text", *TINY, "--log-decisions", str(full)]) == 0
    capsys.readouterr()
    typed = [r for r in _lines(full) if "record" in r]
    decisions = [r for r in _lines(full) if "record" not in r]
    assert decisions == [r for r in _lines(plain) if "record" not in r]  # the same game
    # the header and the result are always there; states by default (--no-log-states: none)
    assert [r["record"] for r in _lines(plain) if "record" in r] == ["game", "end"]
    assert [r["record"] for r in typed] == ["game", "state", "state", "state", "end"]
    header = typed[0]
    assert header["format"] == LOG_FORMAT and header["manual"] == "civ-guide"
    assert header["game_config"]["width"] == 10 and header["search"]["rollouts"] == 3
    assert [r["step"] for r in typed[1:4]] == [0, 1, 2] and typed[3]["final"] is True
    log = read_log(full)
    assert log.steps() == [0, 1] and sorted(log.states) == [0, 1, 2] and log.end["steps"] == 2
    assert log.method == "text" and log.manual == "civ-guide" and log.has_text


def test_logged_associations_are_the_sampled_words(text_game):
    log = read_log(text_game[0])
    seen = 0
    for rec in log.decisions:
        for word, label, attribute, weight in rec.get("associations", ()):
            seen += 1
            assert [word, label] in rec["word_labels"] and label in ("action", "state")
            assert attribute.startswith(("action type", "state")) or ":" in attribute
            assert weight != 0
        weights = [abs(a[3]) for a in rec.get("associations", ())]
        assert weights == sorted(weights, reverse=True) and len(weights) <= 8
    assert seen
    source, rows = associations(log)
    assert source == "weights" and rows and rows[0].strength >= rows[-1].strength


def _err(capsys, argv) -> tuple[int, str]:
    code = main(argv)
    return code, capsys.readouterr().err


@pytest.mark.parametrize("command", ["show", "report"])
def test_bad_logs_are_one_line(command, tmp_path, capsys):
    extra = ["--html", str(tmp_path / "r.html")] if command == "report" else []
    good = [json.dumps(r) for r in records()]
    cases = {
        "empty.jsonl": ("", "is empty"),
        "cut.jsonl": ('{"step": 0, "agent": "unit:1", "cand', "no complete decision record"),
        "bad.jsonl": ("\n".join([good[0], "{nope", good[1]]) + "\n", "bad.jsonl:2: malformed JSON"),
        "odd.jsonl": ('{"hello": 1}\n', "odd.jsonl:1: not a decision record"),
        "linear.jsonl": (json.dumps({"step": 0, "agent": "unit:1", "action": ["wait"],
                                     "candidates": [{"action": ["wait"], "q": 0.1}]}) + "\n",
                         "reads no manual"),
        "bin.jsonl": ("\x00\x01\x02", "binary"),
    }  # fmt: skip
    for name, (text, needle) in cases.items():
        (tmp_path / name).write_text(text)
        code, err = _err(capsys, ["relevance", command, str(tmp_path / name), *extra])
        assert code == 2, name
        assert err.startswith("error: ") and err.count("\n") == 1 and needle in err, (name, err)
        assert name in err
    code, err = _err(capsys, ["relevance", command, str(tmp_path / "missing.jsonl"), *extra])
    assert code == 2 and "no such file" in err
    assert not (tmp_path / "r.html").exists()


def test_a_cut_last_line_is_skipped_with_a_warning(tmp_path, capsys):
    recs = records()
    log = write(tmp_path / "d.jsonl", recs, tail=json.dumps(recs[0])[:40])
    code = main(["relevance", "show", str(log)])
    out = capsys.readouterr()
    assert code == 0
    assert out.err.count("\n") == 1 and f"d.jsonl:{len(recs) + 1}: last line is cut off" in out.err
    assert out.out.count("\nstep ") == len(recs)


def test_a_log_of_another_manual_is_refused(text_game, tmp_path, capsys, monkeypatch):
    from pathlib import Path

    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "manuals" / "guide.txt"
    assert main(["manual", "ingest", str(fixture), "--name", "other-guide"]) == 0
    capsys.readouterr()
    log = text_game[0]
    code, err = _err(capsys, ["relevance", "show", str(log), "--manual", "other-guide"])
    assert code == 2 and "written reading manual 'civ-guide', not 'other-guide'" in err
    # without the header, the logged sentences themselves give it away
    bare = tmp_path / "bare.jsonl"
    bare.write_text("".join(x + "\n" for x in log.read_text().splitlines() if '"record"' not in x))
    code, err = _err(capsys, ["relevance", "report", str(bare), "--manual", "other-guide",
                              "--html", str(tmp_path / "r.html")])  # fmt: skip
    assert code == 2 and err.count("\n") == 1
    assert "bare.jsonl:" in err and "not sentence" in err and "another manual" in err
    assert main(["relevance", "show", str(bare), "--manual", "civ-guide", "--step", "0"]) == 0


@pytest.mark.parametrize("sentences,message", [
    ([{"id": 1, "p": "high"}], "sentences.0.p = 'high': input should be a valid number"),
    ({"0": {"id": 1, "p": 0.5}}, "sentences = {'0': {'id': 1, 'p': 0.5}}: input should be a "
                                 "valid array"),
    ([{"id": 1, "p": float("nan")}], "sentences.0.p = nan: input should be a finite number"),
    ([{"id": 1, "p": 5.0}], "sentences.0.p = 5.0 is not a probability"),
    ([{"id": 1, "p": True}], "sentences.0.p = True: input should be a valid number"),
    ([{"id": "one", "p": 0.5}], "sentences.0.id = 'one'"),
])  # fmt: skip
def test_a_hand_damaged_probability_is_one_line_naming_file_and_line(tmp_path, sentences,
                                                                     message):
    from nlmcs.errors import UserInputError

    path = tmp_path / "d.jsonl"
    good = {"step": 0, "agent": "unit:1", "sentences": [{"id": 1, "p": 0.5}]}
    bad = {**good, "sentences": sentences}
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(UserInputError) as err:
        read_log(path)
    assert str(err.value).startswith(f"{path}:2: ") and message in str(err.value)
