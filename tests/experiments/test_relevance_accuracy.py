"""Relevance accuracy against decoys: the mixed manual, the arg-max classing (ties shared), and
`nlmcs relevance accuracy` on a tiny budget writing sane CSV, PNG and summary."""

from __future__ import annotations

import csv
import json
import re

import pytest
from relevance_records import records, write

from manual_pipeline.words import stem
from nlmcs.cli import main
from nlmcs.experiments.relevance.accuracy import COLUMNS, measure
from nlmcs.experiments.relevance.decoys import combine, load_decoys, shipped_decoys
from nlmcs.model.manuals import load_index, resolve_manual


@pytest.fixture(scope="module")
def mixed():
    return combine(manual=resolve_manual("civ-guide"), decoys=load_decoys(shipped_decoys()))


def test_decoys_follow_the_manual_and_become_candidates(mixed):
    info = mixed.meta["decoys"]
    n, d = info["first_decoy"], info["decoy_sentences"]
    assert n == len(resolve_manual("civ-guide").sentences) and d >= 150
    assert list(mixed.sentences["sentence_id"]) == list(range(n + d))
    assert set(mixed.tokens["sentence_id"]) == set(range(n + d))
    assert mixed.sentences["section"].iloc[n].startswith("decoy: ")
    index = load_index(mixed, min_count=5)
    for word in ("settlers", "workers", "warriors", "city", "civilization", "legion"):
        ids = index.candidates((word,), None)
        decoys = ids[ids >= n]
        assert len(decoys) >= 2 and len(ids) - len(decoys) > 0, word
        for i in decoys:  # a decoy is a candidate because it holds the agent's word
            assert stem(word) in {stem(w) for w in re.findall(r"\w+", index.texts[i])}, word


def _rec(step, ps, ids, n=None):
    sents = [{"id": i, "p": p, "text": "x" if i >= 0 else None} for i, p in zip(ids, ps,
                                                                           strict=True)]
    return {"step": step, "agent": "unit:1", "agent_labels": ["settlers"],
            "num_candidates": n or len(ids), "sentences": sents}


def test_measure_classes_the_argmax_and_shares_ties(tmp_path):
    first = 100  # ids 100.. are decoys
    log = write(tmp_path / "g.jsonl", [
        _rec(0, [0.5, 0.3, 0.2], [3, 120, -1]),  # manual
        _rec(0, [0.5, 0.3, 0.2], [120, 3, -1]),  # decoy
        _rec(1, [0.4, 0.4, 0.2], [-1, 130, 5]),  # NULL and a decoy tie
        _rec(1, [1.0], [-1]),  # no candidate sentence: not counted
        _rec(1, [0.25, 0.25], [7, 140], n=4),  # every listed one ties, more candidates
    ])  # fmt: skip
    rows = measure(paths=[log], first_decoy=first)
    by = {r["step"]: r for r in rows}
    assert by[0]["decisions"] == 2 and by[0]["manual_share"] == 0.5 and by[0]["accuracy"] == 0.5
    # step 1: 1/2 NULL + 1/2 decoy; then (no index to ask) the listed tie: 1/2 manual, 1/2 decoy
    assert by[1]["decisions"] == 2
    assert by[1]["null_share"] == 0.25 and by[1]["decoy_share"] == 0.5
    assert by[1]["manual_share"] == 0.25
    assert by["all"]["decisions"] == 4
    for r in rows:
        assert abs(r["manual_share"] + r["decoy_share"] + r["null_share"] - 1) < 1e-9


def test_accuracy_command_on_a_tiny_budget(tmp_path, capsys):
    out = tmp_path / "acc"
    code = main(["relevance", "accuracy", "--manual", "civ-guide", "--games", "2", "--steps",
                 "2", "--rollouts", "4", "--depth", "2", "--map", "tiny", "--out", str(out)])
    std = capsys.readouterr()
    assert code == 0, std.err
    assert "accuracy" in std.out and "overall" in std.out
    with open(out / "accuracy.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert tuple(rows[0]) == COLUMNS and [r["step"] for r in rows] == ["0", "1", "all"]
    for r in rows:
        shares = [float(r[k]) for k in ("manual_share", "decoy_share", "null_share")]
        assert all(0 <= s <= 1 for s in shares) and abs(sum(shares) - 1) < 1e-5
        assert int(r["decisions"]) > 0 and 0 <= float(r["chance_accuracy"]) <= 1
        if r["accuracy"]:
            assert 0 <= float(r["accuracy"]) <= 1
    assert int(rows[-1]["decisions"]) == int(rows[0]["decisions"]) + int(rows[1]["decisions"])
    assert (out / "accuracy.png").read_bytes()[:4] == b"\x89PNG"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["games"] == 2 and summary["decoys"] == "decoys-unrelated"
    assert sorted(p.name for p in (out / "games").iterdir()) == ["game-0.jsonl", "game-1.jsonl"]
    # the games' logs are ordinary decision logs of the mixed manual
    assert main(["relevance", "show", str(out / "games" / "game-0.jsonl"), "--step", "0"]) == 0


def test_accuracy_refuses_bad_input(tmp_path, capsys):
    base = ["relevance", "accuracy", "--games", "1", "--steps", "1", "--out", str(tmp_path / "o")]
    for argv, needle in ((["--decoys", str(tmp_path / "none.txt")], "no such file"),
                         (["--method", "linear"], "reads no text"),
                         (["--games", "0"], "--games")):
        assert main([*base, *argv]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and needle in err, err
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    assert main([*base, "--decoys", str(empty), "--map", "tiny"]) == 2
    assert "empty.txt" in capsys.readouterr().err
    assert not (tmp_path / "o" / "accuracy.csv").exists()


def test_synthetic_records_measure_without_decoys(tmp_path):
    rows = measure(paths=[write(tmp_path / "d.jsonl", records())], first_decoy=10**6)
    assert rows[-1]["decoy_share"] == 0 and rows[-1]["accuracy"] == 1.0
