"""Derived files trusted blindly (issue 60, class 3): every results file of JSON lines is read by
one reader (`runs.read_results`), which refuses a number no writer writes (NaN, Infinity, a
literal too large to be a float) on the line it is on; a labelled-outcomes row that contradicts
itself (margins that do not match its moves) is refused by the outcomes' row check. Each case is
one line naming the file and line, and nothing stored changes."""

from __future__ import annotations

import json

import pytest
from robust_support import assert_refused

from nlmcs.errors import UserInputError
from nlmcs.runs import read_results

LABELLED = {"format": "nlmcs-reader-outcomes/1", "index": 0, "seed": 5, "rows": [
    {"turn": 0, "agent": ["settlers"], "state": ["plains"], "actions": [["build city"], ["wait"]],
     "moves": [["build_city", None], ["wait", None]], "margin": [0.5, -0.5]}]}


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_a_results_line_holding_no_number_is_refused_by_its_line(tmp_path, number):
    path = tmp_path / "games.jsonl"
    path.write_text('{"game": 0, "margin": 1.5}\n' + f'{{"game": 1, "margin": {number}}}\n')
    with pytest.raises(UserInputError, match=r"games.jsonl line 2: holds"):
        read_results(path)
    assert read_results(path, strict=False).rows == [{"game": 0, "margin": 1.5}]


def _outcomes(tmp_path, change) -> tuple:
    row = json.loads(json.dumps(LABELLED))
    change(row["rows"][0])
    path = tmp_path / "outcomes.jsonl"
    header = {"spec": {"format": "nlmcs-reader-outcomes/1", "seed": 5, "turns": 8, "map": "small",
                       "opponent": "builtin", "points": 1, "candidates": 2, "variant": ""}}
    path.write_text(json.dumps(header) + "\n" + json.dumps(row, allow_nan=True) + "\n")
    return path


@pytest.mark.parametrize("change, needle", [
    (lambda d: d.update(margin=[0.5]), "1 margins for 2 moves"),
    (lambda d: d.update(margin=[float("nan"), 0.5]), "holds NaN"),
    (lambda d: d.update(margin=["a lot", 0.5]), "a margin that is not a number"),
    (lambda d: d.update(margin=[]), "no tried moves"),
    (lambda d: d.update(agent="settlers"), "agent is not a list of words"),
])
def test_reader_training_refuses_labelled_outcomes_that_contradict_themselves(cli, tmp_path,
                                                                             change, needle):
    path = _outcomes(tmp_path, change)
    before = path.read_bytes()
    assert_refused(cli("reader", "train", "--games", "1", "--seed", "5", "--turns", "8",
                       "--points", "1", "--candidates", "2", "--epochs", "1", "--outcomes",
                       path, "--out", tmp_path / "reader", "--no-progress"),
                   "outcomes.jsonl line 2", needle)
    assert path.read_bytes() == before and not (tmp_path / "reader" / "reader.json").exists()


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    from nlmcs.cli import main

    out = tmp_path_factory.mktemp("run") / "run"
    assert main(["ablation", "run", "--methods", "uct", "--map", "tiny", "--steps", "1",
                 "--rollouts", "2", "--depth", "1", "--games", "2", "--workers", "1",
                 "--no-progress", "--out", str(out)]) == 0
    return out


@pytest.mark.parametrize("change, needle", [
    (lambda r: r.update(margin=r["margin"] + 5), "is not score"),
    (lambda r: r.update(outcome="win" if r["outcome"] != "win" else "loss"), "but winner"),
])
def test_a_games_row_that_contradicts_itself_is_refused_by_its_line(cli, tiny_run, tmp_path,
                                                                    change, needle):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(tiny_run, run)
    lines = (run / "games.jsonl").read_text().splitlines()
    row = json.loads(lines[1])
    change(row)
    lines[1] = json.dumps(row)
    (run / "games.jsonl").write_text("\n".join(lines) + "\n")
    before = (run / "games.jsonl").read_bytes()
    assert_refused(cli("ablation", "report", run), "games.jsonl line 2", needle)
    assert (run / "games.jsonl").read_bytes() == before
