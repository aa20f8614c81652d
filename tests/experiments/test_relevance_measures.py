"""Relevance in numbers: the sentence x step grid per unit type, word labels by part of speech,
two logs (or two ablation arms) compared with intervals, and the report over an ablation's kept
logs (`nlmcs ablation run --log-decisions`, `nlmcs relevance report RUN_DIR`)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from relevance_records import records, write

from nlmcs.cli import main
from nlmcs.experiments.relevance import measures
from nlmcs.experiments.relevance.log import read_log

UD_TAGS = {"ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM", "PART", "PRON",
           "PROPN", "PUNCT", "SCONJ", "SYM", "VERB", "X", "SPACE"}


def _log(tmp_path, recs, name="a.jsonl"):
    return read_log(write(tmp_path / name, recs))


def test_grid_is_the_mean_relevance_over_uniform_per_step_of_the_unit_type(tmp_path):
    recs = records(steps=2)  # every record: 4 candidates
    second = json.loads(json.dumps(recs[2]))  # another settlers decision at step 0
    second["agent"], second["num_candidates"] = "unit:9", 2
    second["sentences"] = [{"id": 7, "p": 0.9, "text": "Workers irrigate grassland near the "
                            "city."}, {"id": 3, "p": 0.1, "text": "x"}]  # fmt: skip
    log = _log(tmp_path, [*recs, second])
    grid = measures.relevance_grid(log, "settlers")
    assert grid.steps == [0, 1] and grid.decisions == 3
    row = dict(zip(grid.sentences, grid.values.tolist(), strict=True))
    # step 0: two settlers decisions (4 and 2 candidates): sentence 3 at 0.5 and 0.1, 7 at 0.2
    # and 0.9, NULL at 0.2 and unlisted (0); step 1: one decision of 4 candidates
    assert row[3] == pytest.approx([(0.5 * 4 + 0.1 * 2) / 2, 0.5 * 4])
    assert row[7] == pytest.approx([(0.2 * 4 + 0.9 * 2) / 2, 0.2 * 4])
    assert row[-1] == pytest.approx([0.2 * 4 / 2, 0.2 * 4])
    assert grid.sentences[:2] == [3, 7]  # most relevance over the game first: 4.2, 3.4
    assert measures.unit_types(log)[0] == "settlers"


def test_grid_shares_the_left_over_probability_among_unlisted_candidates(tmp_path):
    rec = records(steps=1)[2]  # settlers; lists 3, 7, NULL, 9
    rec["num_candidates"] = 10
    rec["sentences"] = [{"id": 3, "p": 0.4, "text": "x"}, {"id": 7, "p": 0.3, "text": "y"}]
    other = json.loads(json.dumps(rec))
    other["sentences"] = [{"id": 7, "p": 0.5, "text": "y"}, {"id": 3, "p": 0.5, "text": "x"}]
    grid = measures.relevance_grid(_log(tmp_path, [rec, other]), "settlers")
    row = dict(zip(grid.sentences, grid.values[:, 0].tolist(), strict=True))
    assert row == pytest.approx({3: (4.0 + 5.0) / 2, 7: (3.0 + 5.0) / 2})
    uniform = json.loads(json.dumps(rec))
    uniform["sentences"] = [{"id": 3, "p": 0.1, "text": "x"}]  # uniform over 10
    other["sentences"] = [{"id": 7, "p": 0.1, "text": "y"}]
    grid = measures.relevance_grid(_log(tmp_path, [uniform, other], "u.jsonl"), "settlers")
    assert grid.values == pytest.approx(np.ones((2, 1)))  # uniform reads 1 listed or not


def test_part_of_speech_counts_follow_the_logged_tags(tmp_path):
    recs = records(steps=1)
    for r in recs:
        r["word_pos"] = ["NOUN" if lab == "state" else "VERB" if lab == "action" else "ADP"
                         for _, lab in r["word_labels"]]  # fmt: skip
    recs[0]["word_pos"] = recs[0]["word_pos"][:-1]  # a misfit record is left out
    table = measures.pos_labels(_log(tmp_path, recs))
    kept = recs[1:]
    expect_verbs = sum(lab == "action" for r in kept for _, lab in r["word_labels"])
    assert table["VERB"] == {"action": expect_verbs}
    assert set(table) == {"NOUN", "VERB", "ADP"}
    assert measures.pos_labels(_log(tmp_path, records(), "old.jsonl")) == {}


def test_compare_games_pairs_by_game_and_tests_the_differences(tmp_path):
    def game(i, null_share):
        recs = records(steps=4)
        for k, r in enumerate(recs):
            if k < null_share * len(recs):  # NULL ranked first
                r["sentences"][0], r["sentences"][2] = r["sentences"][2], r["sentences"][0]
        return _log(tmp_path, recs, f"g{i}-{null_share}.jsonl")

    a = [game(i, 0.0) for i in range(6)]
    b = [game(i, 0.5) for i in range(6)]
    rows = {r.measure: r for r in measures.compare_games(a, b)}
    null = rows["null_first"]
    assert null.a == 0.0 and null.b == pytest.approx(0.5) and null.diff == pytest.approx(0.5)
    assert null.low == null.high == pytest.approx(0.5) and null.n == 6
    assert null.p == pytest.approx(0.03125)  # six positive differences, exact signed-rank
    ent = rows["entropy"]
    assert ent.diff == 0.0 and ent.p == 1.0


def test_compare_logs_resamples_steps(tmp_path):
    a = _log(tmp_path, records(steps=5), "a.jsonl")
    recs = records(steps=5)
    for r in recs:
        r["relevance_entropy"] = 0.5 if r["step"] % 2 else 0.7
    b = _log(tmp_path, recs, "b.jsonl")
    ent = {r.measure: r for r in measures.compare_logs(a, b, seed=1)}["entropy"]
    assert ent.a == pytest.approx(0.8) and ent.b == pytest.approx((0.7 * 3 + 0.5 * 2) / 5)
    assert ent.low < ent.diff < ent.high < 0 and ent.n == 5 and ent.p is None
    one = _log(tmp_path, records(steps=1), "one.jsonl")
    lone = {r.measure: r for r in measures.compare_logs(one, b)}["entropy"]
    assert math.isnan(lone.low)  # one step: no interval, said rather than invented


def test_text_records_carry_the_part_of_speech_of_each_labelled_word(text_game):
    log = read_log(text_game[0])
    seen = 0
    for r in log.decisions:
        if r.get("word_labels"):
            assert len(r["word_pos"]) == len(r["word_labels"])
            assert set(r["word_pos"]) <= UD_TAGS
            seen += 1
    assert seen
    assert measures.pos_labels(log)


def test_report_has_unit_grids_label_table_and_a_comparison(text_game, tmp_path, capsys):
    out = tmp_path / "two.html"
    copy = tmp_path / "copy.jsonl"  # the same games in another file (the file itself is refused)
    copy.write_bytes(text_game[0].read_bytes())
    assert main(["relevance", "report", str(text_game[0]), "--compare", str(copy),
                 "--html", str(out)]) == 0  # fmt: skip
    page = out.read_text()
    for ident in ("games", "compare", "units", "labels", "timeline"):
        assert f'id="{ident}"' in page
    assert "95% interval" in page and "+0.0000" in page  # a log against itself: no difference
    single = text_game[1].read_text()
    assert 'id="units"' in single and 'id="compare"' not in single


ABLATION = ["ablation", "run", "--methods", "text,random-text,uct", "--games", "3", "--steps",
            "2", "--rollouts", "4", "--depth", "2", "--map", "tiny", "--workers", "1",
            "--no-progress", "--seed", "5"]  # fmt: skip


def _rows(folder):
    keep = ("arm", "game", "seed", "outcome", "score", "opponent_score", "steps")
    return sorted(tuple(r[k] for k in keep) for r in
                  (json.loads(x) for x in (folder / "games.jsonl").read_text().splitlines()))


@pytest.fixture(scope="module")
def logged_run(tmp_path_factory):
    base = tmp_path_factory.mktemp("logged-run")
    plain, logged = base / "plain", base / "logged"
    assert main([*ABLATION, "--out", str(plain)]) == 0
    assert main([*ABLATION, "--out", str(logged), "--log-decisions"]) == 0
    return plain, logged


def test_ablation_keeps_a_log_per_game_without_changing_the_games(logged_run):
    plain, logged = logged_run
    assert _rows(plain) == _rows(logged)
    assert not (plain / "decisions").exists()
    for arm in ("text", "random-text", "uct"):
        paths = sorted((logged / "decisions" / arm).glob("game-*.jsonl"))
        assert [p.name for p in paths] == [f"game-{i:05d}.jsonl" for i in range(3)]
        log = read_log(paths[1])
        assert log.header["arm"] == arm and log.header["game_index"] == 1
        assert log.end is not None and not log.states
    twin = read_log(logged / "decisions" / "random-text" / "game-00000.jsonl")
    assert twin.manual.startswith("civ-guide-random-")
    assert "_decision_log" not in (logged / "games.jsonl").read_text()


def test_relevance_report_over_a_run_folder(logged_run, tmp_path, capsys):
    _, logged = logged_run
    out = tmp_path / "run.html"
    assert main(["relevance", "report", str(logged), "--html", str(out)]) == 0
    page = out.read_text()
    assert "random-text vs text, game by game" in page and "pairs of games" in page
    assert 'id="units"' in page and 'id="labels"' in page
    assert ">uct<" in page  # listed among the games, left out of the rest
    assert main(["relevance", "report", str(logged), "--arms", "random-text,text", "--html",
                 str(out)]) == 0  # fmt: skip
    assert "text vs random-text, game by game" in out.read_text()


@pytest.mark.parametrize("extra, needle", [
    (["--arms", "text,nope"], "no kept logs of arm 'nope'"),
    (["--arms", "text"], "name two different arms"),
    (["--compare", "x.jsonl"], "is a run folder"),
])  # fmt: skip
def test_run_report_bad_input_is_one_line(logged_run, tmp_path, capsys, extra, needle):
    _, logged = logged_run
    code = main(["relevance", "report", str(logged), "--html", str(tmp_path / "r.html"), *extra])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and needle in err, err


def test_run_folder_without_logs_is_refused(logged_run, tmp_path, capsys):
    plain, _ = logged_run
    code = main(["relevance", "report", str(plain), "--html", str(tmp_path / "r.html")])
    err = capsys.readouterr().err
    assert code == 2 and "keeps no decision logs" in err and err.count("\n") == 1
    (tmp_path / "not-a-run").mkdir()
    code = main(["relevance", "report", str(tmp_path / "not-a-run"), "--html",
                 str(tmp_path / "r.html")])
    assert code == 2 and "not an ablation run folder" in capsys.readouterr().err


def test_pooled_arms_keep_every_decision(logged_run):
    from nlmcs.experiments.relevance.run_report import read_run_logs

    _, logged = logged_run
    arms = {a.arm: a for a in read_run_logs(logged)}
    text = arms["text"]
    assert len(text.pooled().decisions) == sum(len(g.decisions) for g in text.games.values())
    assert np.isfinite(measures.game_mean(text.games[0], "null_first"))
