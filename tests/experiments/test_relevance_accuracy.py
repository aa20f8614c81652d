"""Relevance accuracy against decoys: decoys at random positions, the arg-max classing (ties drawn
at random, chance within the offered sentences), and `nlmcs relevance accuracy` on a tiny budget
measuring text and its twin (sane CSV, PNG and summaries, text minus twin)."""

from __future__ import annotations

import csv
import json
import re

import numpy as np
import pytest
from relevance_records import records, write

from manual_pipeline.words import stem
from nlmcs.cli import main
from nlmcs.experiments.relevance.accuracy import COLUMNS, measure, offered_sentences
from nlmcs.experiments.relevance.decoys import combine, decoy_ids, load_decoys, shipped_decoys
from nlmcs.experiments.relevance.log import read_log
from nlmcs.model.config import ModelConfig
from nlmcs.model.manuals import load_index, random_twin, resolve_manual
from nlmcs.seeds import game_seed


@pytest.fixture(scope="module")
def mixed():
    return combine(manual=resolve_manual("civ-guide"), decoys=load_decoys(shipped_decoys()),
                   seed=0)


def test_decoys_are_mixed_in_at_random_positions_and_become_candidates(mixed):
    manual, info = resolve_manual("civ-guide"), mixed.meta["decoys"]
    n, d = info["manual_sentences"], info["decoy_sentences"]
    assert n == len(manual.sentences) and d >= 150 and info["seed"] == 0
    assert list(mixed.sentences["sentence_id"]) == list(range(n + d))
    assert set(mixed.tokens["sentence_id"]) == set(range(n + d))
    ids = decoy_ids(mixed)
    assert len(ids) == d
    assert all(mixed.sentences["section"].iloc[i].startswith("decoy: ") for i in ids)
    kept = [t for i, t in enumerate(mixed.sentences["text"]) if i not in ids]
    assert kept == list(manual.sentences["text"])  # the manual keeps its order
    # spread over the whole document, not appended: about a fair share in each half
    first_half = sum(i < (n + d) // 2 for i in ids)
    assert 0.35 * d < first_half < 0.65 * d
    again = combine(manual=manual, decoys=load_decoys(shipped_decoys()), seed=0)
    other = combine(manual=manual, decoys=load_decoys(shipped_decoys()), seed=1)
    assert decoy_ids(again) == ids != decoy_ids(other)
    index = load_index(mixed, min_count=5)
    for word in ("settlers", "workers", "warriors", "city", "civilization", "legion"):
        found = index.candidates((word,), None)
        decoys = [i for i in found if i in ids]
        assert len(decoys) >= 2 and len(found) - len(decoys) > 0, word
        for i in decoys:  # a decoy is a candidate because it holds the agent's word
            assert stem(word) in {stem(w) for w in re.findall(r"\w+", index.texts[i])}, word


def test_position_does_not_decide_which_sentences_are_offered(mixed):
    # The model keeps the first `max_sentences` candidates in document order (and the earlier
    # of equally ranked ones): decoys appended after the manual were never offered. In the
    # twin, where words carry no meaning, the decoys' share of the first ten is about their
    # share of all candidates.
    ids, index = decoy_ids(mixed), load_index(random_twin(mixed), min_count=5)
    offered = candidates = offered_decoys = all_decoys = 0
    for word in ("settlers", "workers", "warriors", "city", "civilization", "legion"):
        first, found = index.candidates((word,), 10), index.candidates((word,), None)
        offered, candidates = offered + len(first), candidates + len(found)
        offered_decoys += sum(int(i) in ids for i in first)
        all_decoys += sum(int(i) in ids for i in found)
    assert offered_decoys / offered > 0.5 * all_decoys / candidates > 0.05


def _rec(step, ps, ids, n=None):
    sents = [{"id": i, "p": p, "text": "x" if i >= 0 else None} for i, p in zip(ids, ps,
                                                                           strict=True)]
    return {"step": step, "agent": "unit:1", "agent_labels": ["settlers"],
            "num_candidates": n or len(ids), "sentences": sents}


def test_measure_classes_the_argmax_and_counts_chance_within_the_offered(tmp_path):
    decoys = range(100, 200)
    log = write(tmp_path / "g.jsonl", [
        _rec(0, [0.5, 0.3, 0.2], [3, 120, -1]),  # manual; offered: one manual, one decoy
        _rec(0, [0.5, 0.3, 0.1, 0.1], [120, 3, 4, -1]),  # decoy; two manual, one decoy
        _rec(1, [0.5, 0.3, 0.2], [-1, 130, 5]),  # NULL
        _rec(1, [1.0], [-1]),  # no candidate sentence: not counted
        _rec(1, [0.3, 0.2], [7, 140], n=5),  # cut short: the offered set is not in the log
    ])  # fmt: skip
    rows = measure(paths=[log], decoys=decoys)
    by = {r["step"]: r for r in rows}
    assert by[0]["decisions"] == 2 and by[0]["manual_share"] == 0.5 and by[0]["accuracy"] == 0.5
    assert by[0]["chance_accuracy"] == pytest.approx((1 / 2 + 2 / 3) / 2, abs=1e-6)
    assert by[1]["decisions"] == 2 and by[1]["null_share"] == 0.5
    assert by[1]["manual_share"] == 0.5
    assert by[1]["chance_accuracy"] == 0.5  # the cut one's offered set is unknown here
    asked = []

    def offered(rec):  # the model's own candidates of that decision
        asked.append(rec["step"])
        return np.array([7, 140, 141, 142])

    rows = measure(paths=[log], decoys=decoys, offered=offered)
    assert asked == [1]  # only where the log does not list every candidate
    assert {r["step"]: r for r in rows}[1]["chance_accuracy"] == pytest.approx((1 / 2 + 1 / 4)
                                                                               / 2, abs=1e-6)
    for r in rows:
        assert abs(r["manual_share"] + r["decoy_share"] + r["null_share"] - 1) < 1e-9


def test_ties_at_the_top_are_drawn_at_random_with_the_seed(tmp_path):
    decoys = range(100, 200)
    # Listed in document order, manual first: the log's order among equals is no ranking.
    tied = write(tmp_path / "tied.jsonl",
                 [_rec(t, [0.3, 0.3, 0.3, 0.1], [3, 4, 150, -1]) for t in range(600)])
    rows = measure(paths=[tied], decoys=decoys, seed=3)
    assert measure(paths=[tied], decoys=decoys, seed=3) == rows
    assert measure(paths=[tied], decoys=decoys, seed=4) != rows
    assert rows[-1]["decoy_share"] == pytest.approx(1 / 3, abs=0.06)
    assert rows[-1]["null_share"] == 0
    # every listed sentence ties and the log was cut, and the mass left is the left-out ones'
    # at the same value: all offered ones and NULL tie
    p = round(1 / 9, 6)
    cut = write(tmp_path / "cut.jsonl", [_rec(t, [p] * 3, [5, 6, 7], n=9) for t in range(600)])

    def offered(rec):
        return np.array([5, 6, 7, 160, 161, 162, 163, 164])

    overall = measure(paths=[cut], decoys=decoys, offered=offered)[-1]
    assert overall["decoy_share"] == pytest.approx(5 / 9, abs=0.06)
    assert overall["null_share"] == pytest.approx(1 / 9, abs=0.04)
    assert overall["chance_accuracy"] == pytest.approx(3 / 8)
    # ... but a mass left over that is less than that: the left-out ones are lower, and the
    # draw is among the listed (all manual) alone
    lower = write(tmp_path / "lower.jsonl",
                  [_rec(t, [0.25] * 3, [5, 6, 7], n=9) for t in range(200)])
    overall = measure(paths=[lower], decoys=decoys, offered=offered)[-1]
    assert overall["manual_share"] == 1.0


def test_accuracy_command_measures_text_and_its_twin_on_a_tiny_budget(tmp_path, capsys):
    out = tmp_path / "acc"
    code = main(["relevance", "accuracy", "--manual", "civ-guide", "--games", "2", "--steps",
                 "2", "--rollouts", "4", "--depth", "2", "--map", "tiny", "--seed", "5",
                 "--out", str(out)])
    std = capsys.readouterr()
    assert code == 0, std.err
    assert "overall" in std.out and "random positions (seed 5)" in std.out
    combined = json.loads((out / "summary.json").read_text())
    assert list(combined["methods"]) == ["text", "random-text"]
    for method, summary in combined["methods"].items():
        folder = out / method
        with open(folder / "accuracy.csv") as fh:
            rows = list(csv.DictReader(fh))
        assert tuple(rows[0]) == COLUMNS and [r["step"] for r in rows] == ["0", "1", "all"]
        for r in rows:
            shares = [float(r[k]) for k in ("manual_share", "decoy_share", "null_share")]
            assert all(0 <= s <= 1 for s in shares) and abs(sum(shares) - 1) < 1e-5
            assert int(r["decisions"]) > 0 and 0 <= float(r["chance_accuracy"]) <= 1
            if r["accuracy"]:
                assert 0 <= float(r["accuracy"]) <= 1
        total = int(rows[-1]["decisions"])
        assert total == int(rows[0]["decisions"]) + int(rows[1]["decisions"])
        assert (folder / "accuracy.png").read_bytes()[:4] == b"\x89PNG"
        assert summary == json.loads((folder / "summary.json").read_text())
        assert summary["games"] == 2 and summary["decoys"] == "decoys-unrelated"
        assert summary["decoy_seed"] == summary["tie_seed"] == 5
        logs = sorted(p.name for p in (folder / "games").iterdir())
        assert logs == sorted(f"game-{game_seed(5, i)}.jsonl" for i in range(2))
    assert combined["settings"]["games"] == 2 and combined["settings"]["seed"] == 5
    # issue 60: the same folder with other settings is refused, not silently replaced
    before = (out / "summary.json").read_text()
    assert main(["relevance", "accuracy", "--manual", "civ-guide", "--games", "3", "--steps",
                 "2", "--rollouts", "4", "--depth", "2", "--map", "tiny", "--seed", "5",
                 "--out", str(out)]) == 2
    assert "other settings (games 2 -> 3)" in capsys.readouterr().err
    assert (out / "summary.json").read_text() == before
    # the games' logs are ordinary decision logs of the mixed manual
    game = out / "text" / "games" / f"game-{game_seed(5, 0)}.jsonl"
    assert main(["relevance", "show", str(game), "--step", "0"]) == 0
    # the sentences the model offered, asked of it again from a record's words, are those the
    # record counts and lists (where the log is cut short, chance and ties rest on them)
    mixed = combine(manual=resolve_manual("civ-guide"), decoys=load_decoys(shipped_decoys()),
                    seed=5)
    offered = offered_sentences(ModelConfig(kind="text"), load_index(mixed, min_count=5))
    decisions = [r for r in read_log(game).decisions if r.get("sentences")]
    assert any(len(r["sentences"]) < r["num_candidates"] for r in decisions)
    for rec in decisions:
        ids = offered(rec)
        assert len(ids) + 1 == rec["num_candidates"]
        assert {s["id"] for s in rec["sentences"] if s["id"] >= 0} <= set(ids.tolist())
    text, twin = (combined["methods"][m]["overall"] for m in ("text", "random-text"))
    diff = combined["text_minus_twin"]
    assert diff["accuracy"] == pytest.approx(text["accuracy"] - twin["accuracy"], abs=1e-6)
    assert diff["above_chance"] == pytest.approx(
        text["accuracy"] - text["chance_accuracy"] - twin["accuracy"] + twin["chance_accuracy"],
        abs=1e-6)
    assert f"text - random-text: accuracy {100 * diff['accuracy']:+.1f} points" in std.out


def test_accuracy_refuses_bad_input(tmp_path, capsys):
    base = ["relevance", "accuracy", "--games", "1", "--steps", "1", "--out", str(tmp_path / "o")]
    for argv, needle in ((["--decoys", str(tmp_path / "none.txt")], "no such file"),
                         (["--method", "linear"], "reads no text"),
                         (["--method", "text,uct"], "reads no text"),
                         (["--method", ","], "names no method"),
                         (["--games", "0"], "--games")):
        assert main([*base, *argv]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and needle in err, err
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    assert main([*base, "--decoys", str(empty), "--map", "tiny"]) == 2
    assert "empty.txt" in capsys.readouterr().err
    assert not (tmp_path / "o" / "text" / "accuracy.csv").exists()


def test_synthetic_records_measure_without_decoys(tmp_path):
    rows = measure(paths=[write(tmp_path / "d.jsonl", records())], decoys=())
    assert rows[-1]["decoy_share"] == 0 and rows[-1]["accuracy"] == 1.0


def test_a_uniform_decision_picks_nothing_and_scores_chance(tmp_path):
    # Near-uniform relevance whose arg-max is always a manual sentence: 1 manual of 4 offered.
    decoys = range(100, 200)
    p = [0.2002, 0.2, 0.2, 0.2, 0.1998]
    recs = [{**_rec(t, p, [3, 120, 121, 122, -1]), "relevance_entropy": 0.99999}
            for t in range(800)]
    overall = measure(paths=[write(tmp_path / "u.jsonl", recs)], decoys=decoys, seed=1)[-1]
    assert overall["uniform_share"] == 1.0
    assert overall["manual_share"] == pytest.approx(1 / 5, abs=0.05)  # not 1.0
    assert overall["null_share"] == pytest.approx(1 / 5, abs=0.05)
    # the same arg-max with a top 1.5x uniform selects: it counts as picked
    sharp = [{**_rec(t, [0.3, 0.2, 0.2, 0.15, 0.15], [3, 120, 121, 122, -1]),
              "relevance_entropy": 0.99} for t in range(10)]
    overall = measure(paths=[write(tmp_path / "s.jsonl", sharp)], decoys=decoys)[-1]
    assert overall["uniform_share"] == 0.0 and overall["manual_share"] == 1.0
