import json

import pytest
from corpus_logs import game_lines, write_log

from corpus.format import CorpusFormatError, ReadReport, WrongGameError, read_games


def test_reads_every_game_lazily_and_honours_limit(make_log):
    path = make_log(n_games=3, turns=2)
    games = list(read_games(path))
    assert [g.game_id for g in games] == ["g0", "g1", "g2"]
    assert games[0].turns == 2
    assert len(games[0].decisions) == 2 * 2 * 4  # turns x players x agents
    d = games[0].decisions[0]
    assert d.agent_labels == ("settlers",) and len(d.state_vector) == 6
    assert [g.game_id for g in read_games(path, limit=2)] == ["g0", "g1"]
    it = read_games(path)
    assert next(it).game_id == "g0"  # a generator: nothing more read yet


def test_malformed_line_names_file_and_line(tmp_path):
    lines = game_lines("g0", seed=1)
    lines[3] = lines[3][:-5] + "oops"
    path = write_log(tmp_path / "bad.jsonl", [lines])
    with pytest.raises(CorpusFormatError, match=r"bad.jsonl:4: malformed JSON"):
        list(read_games(path))


def test_skip_mode_drops_the_line_and_reports_it(tmp_path):
    lines = game_lines("g0", seed=1)
    n_decisions = sum('"decision"' in line for line in lines)
    lines[3] = "{not json"
    path = write_log(tmp_path / "bad.jsonl", [lines, game_lines("g1", seed=2)])
    report = ReadReport()
    games = list(read_games(path, on_error="skip", report=report))
    assert [g.game_id for g in games] == ["g0", "g1"]
    assert len(games[0].decisions) == n_decisions - 1
    assert len(report.problems) == 1 and "bad.jsonl:4:" in report.problems[0]


def test_truncated_last_line_is_reported(tmp_path):
    good = game_lines("g0", seed=1)
    cut = game_lines("g1", seed=2)
    path = write_log(tmp_path / "crash.jsonl", [good, cut[:4]], tail=cut[4][:20])
    expected_line = len(good) + 5
    with pytest.raises(CorpusFormatError, match=rf"crash.jsonl:{expected_line}: truncated last"):
        list(read_games(path))
    report = ReadReport()
    games = list(read_games(path, on_error="skip", report=report))
    assert [g.game_id for g in games] == ["g0"]
    assert any("truncated last line" in p for p in report.problems)
    assert any("'g1' has no result line" in p for p in report.problems)


def test_game_without_result_is_an_error(tmp_path):
    path = write_log(tmp_path / "short.jsonl", [game_lines("g0", seed=1)[:-1]])
    with pytest.raises(CorpusFormatError, match="short.jsonl:1: game 'g0' has no result line"):
        list(read_games(path))


def test_wrong_game_or_ruleset_is_never_skipped(tmp_path):
    path = write_log(tmp_path / "other.jsonl", [game_lines("g0", seed=1, ruleset="civ2")])
    with pytest.raises(WrongGameError, match="ruleset 'civ2', expected 'classic'"):
        list(read_games(path, on_error="skip", expect_ruleset="classic"))
    with pytest.raises(WrongGameError, match="game 'civ', expected 'catan'"):
        list(read_games(path, expect_game="catan"))


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [("state_vector", [1.0, 2.0], "has 2 values; the header names 6"),
     ("applied", "yes", "field 'applied' has the wrong type"),
     ("action", {"kind": 3}, "action must be"),
     ("game_id", "zz", "game_id 'zz' inside game 'g0'"),
     ("after_vector", [1, 2, 3, 4, 5, "x"], "non-finite or non-numeric")])
def test_bad_decision_fields(tmp_path, field, value, message):
    lines = game_lines("g0", seed=1)
    rec = json.loads(lines[2])
    assert rec["type"] == "decision"
    rec[field] = value
    lines[2] = json.dumps(rec)
    path = write_log(tmp_path / "f.jsonl", [lines])
    with pytest.raises(CorpusFormatError, match=f"f.jsonl:3: .*{message}"):
        list(read_games(path))


def test_bad_header_skips_its_whole_game_once(tmp_path):
    bad = game_lines("g0", seed=1)
    rec = json.loads(bad[0])
    rec["format"] = "other/9"
    bad[0] = json.dumps(rec)
    path = write_log(tmp_path / "h.jsonl", [bad, game_lines("g1", seed=2)])
    report = ReadReport()
    games = list(read_games(path, on_error="skip", report=report))
    assert [g.game_id for g in games] == ["g1"]
    assert len(report.problems) == 1 and "unknown format" in report.problems[0]


def test_binary_file(tmp_path):
    path = tmp_path / "b.jsonl"
    path.write_bytes(b"\xff\xfe\x00\x01garbage\n")
    with pytest.raises(CorpusFormatError, match="b.jsonl:1: not UTF-8"):
        list(read_games(path))
