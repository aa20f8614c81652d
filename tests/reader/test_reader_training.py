"""Training the reader: outcome labels, the fit, the command, and the methods that use it."""

from __future__ import annotations

import json

import numpy as np
import pytest
from toy_game import make_manual

from nlmcs.cli import main
from nlmcs.errors import UserInputError
from nlmcs.games import make_game
from nlmcs.reader.index import ReaderIndex
from nlmcs.reader.outcomes import OutcomeSpec, label_game, label_outcomes, map_seed
from nlmcs.reader.train import Decisions, FitSpec, decisions, fit
from nlmcs.reader.weights import default_model
from nlmcs.seeds import game_seed

SMALL = OutcomeSpec(games=2, seed=5, turns=8, points=3, candidates=2)


def test_a_labelled_game_replays_and_tries_the_ais_move_first():
    a, b = label_game(SMALL, 0), label_game(SMALL, 0)
    assert a == b and len(a["rows"]) == SMALL.points
    for row in a["rows"]:
        assert len(row["margin"]) == len(row["actions"]) == len(row["moves"]) == 2
        assert row["agent"] and 0 <= row["turn"] < SMALL.turns


def test_training_maps_are_never_an_ablations_games():
    for s in range(3):
        assert not {map_seed(s, i) for i in range(300)} & {game_seed(s, i) for i in range(300)}


def test_labelling_resumes_after_a_cut_line_and_refuses_other_settings(tmp_path):
    path = tmp_path / "outcomes.jsonl"
    first = label_outcomes(SMALL, path, progress=False, log=lambda m: None)
    data = path.read_bytes()
    path.write_bytes(data[:-40])  # the last game's line cut by a crash
    again = label_outcomes(SMALL, path, progress=False, log=lambda m: None)
    assert [g["index"] for g in again] == [0, 1] and again == first
    with pytest.raises(UserInputError, match="other settings"):
        label_outcomes(OutcomeSpec(games=2, seed=5, turns=8, points=4, candidates=2), path,
                       progress=False, log=lambda m: None)



def test_interrupted_labelling_keeps_its_games_and_reads_files_of_older_versions(tmp_path,
                                                                                   monkeypatch):
    """The labels go through the one job loop and run store: an interrupt keeps the games
    stored; a file written by an older version (spaced JSON) resumes as it is."""
    from nlmcs.reader import outcomes

    path = tmp_path / "outcomes.jsonl"
    spec = OutcomeSpec(games=3, seed=5, turns=8, points=3, candidates=2)
    real, played = outcomes._job, []

    def interrupted_at_game_1(job):
        if job[1] == 1:
            raise KeyboardInterrupt
        return real(job)

    monkeypatch.setattr(outcomes, "_job", interrupted_at_game_1)
    with pytest.raises(KeyboardInterrupt):
        label_outcomes(spec, path, progress=False, log=lambda m: None)
    header, *games = [json.loads(line) for line in path.read_text().splitlines()]
    assert header == {"spec": spec.identity()} and [g["index"] for g in games] == [0]
    old = "".join(json.dumps(x) + "\n" for x in (header, *games))  # as older versions wrote
    path.write_text(old)
    monkeypatch.setattr(outcomes, "_job", lambda job: played.append(job[1]) or real(job))
    again = label_outcomes(spec, path, progress=False, log=lambda m: None)
    assert played == [1, 2] and [g["index"] for g in again] == [0, 1, 2]
    assert again[0] == games[0] and path.read_text().startswith(old)

def _planted(n_maps: int) -> list[dict]:
    """Settlers on grassland: building a city is worth one point more than building a road."""
    rng = np.random.default_rng(0)
    games = []
    for i in range(n_maps):
        rows = []
        for _ in range(6):
            city_first = bool(rng.integers(2))
            actions = [["build city"], ["build road"]]
            margin = [1.0, 0.0]
            if not city_first:
                actions, margin = actions[::-1], margin[::-1]
            rows.append({"turn": 0, "agent": ["settlers"], "state": ["grassland"],
                         "actions": actions, "margin": margin})
        games.append({"index": i, "seed": i, "rows": rows})
    return games


def test_the_fit_learns_the_move_the_outcomes_back_from_what_the_manual_says():
    game = make_game("civ", preset="small", max_turns=5)
    index = ReaderIndex.build(make_manual(["Settlers build city on grassland.",
                                           "Settlers build road on grassland."]),
                              game.label_vocabulary())
    start = {**default_model(), "advice": {}, "relevance": {}}  # no advice before training
    train = decisions(_planted(8), lambda seed: index)
    valid = decisions(_planted(2), lambda seed: index)
    assert isinstance(train, Decisions) and len(train) == 48
    net, curve = fit(index, train, valid, FitSpec(epochs=60, lr=0.1), start, progress=False)
    assert curve[0]["valid_gain"] == pytest.approx(0.0, abs=1e-6)  # uniform at the start
    assert max(c["valid_gain"] for c in curve) > 0.1


def test_reader_train_and_show_and_a_twin_reader_on_the_same_labels(tmp_path, capsys):
    out, twin = tmp_path / "guide", tmp_path / "twin"
    common = ["--games", "2", "--points", "2", "--candidates", "2", "--turns", "6",
              "--epochs", "3", "--seed", "4", "--no-progress"]
    assert main(["reader", "train", "--manual", "civ-guide", "--out", str(out), *common]) == 0
    printed = capsys.readouterr().out
    assert "held-out maps" in printed and (out / "curve.png").stat().st_size > 0
    model = json.loads((out / "reader.json").read_text())
    assert model["manual"]["name"] == "civ-guide" and not model["manual"]["twin"]
    assert model["training"]["outcomes"]["games"] == 2
    assert main(["reader", "train", "--manual", "civ-guide-random", "--out", str(twin),
                 "--outcomes", str(out / "outcomes.jsonl"), *common]) == 0
    assert json.loads((twin / "reader.json").read_text())["manual"]["twin"]
    capsys.readouterr()
    assert main(["reader", "show", str(out / "reader.json"), "--turn", "2"]) == 0
    assert "advises:" in capsys.readouterr().out
    # the manual's reader is no twin's reader
    code = main(["play", "--method", "uct-random-text", "--twin-reader",
                 str(out / "reader.json"), "--steps", "1", "--rollouts", "2", "--depth", "1",
                 "--no-progress"])
    assert code != 0
    assert "is a twin" in capsys.readouterr().err


def test_uct_text_seeds_its_roots_with_the_prior_and_its_twin_reads_the_twin():
    from nlmcs.methods import make_planner
    from nlmcs.search.config import SearchConfig

    game = make_game("civ", preset="small", max_turns=10)
    state = game.new_initial_state(3)
    cfg = SearchConfig(rollouts=4, depth=2, workers=1)
    for name, twin in (("uct-text", False), ("uct-random-text", True)):
        planner = make_planner(name, game=game, search_config=cfg, seed=1)
        move = planner.choose(state, 0, np.random.default_rng(0))
        assert set(move) == set(state.agents(0))
        for root in planner.roots.values():
            ps = [c.p for c in root.children.values()]
            assert sum(ps) == pytest.approx(1.0)
        assert planner.prior.index.identity["twin"] is twin


def test_agreement_ranks_rules_by_the_readers_lift_against_their_audited_worth():
    from nlmcs.reader.agreement import agreement_rows

    lifts = {"a": [1.0, 2.0], "b": [0.5], "c": [-1.0], "d": []}
    rows, stats = agreement_rows(lifts, {"a": 3.0, "b": 1.0, "c": -2.0, "d": 5.0})
    assert [r["lift"] for r in rows] == [1.5, 0.5, -1.0, None]
    assert stats["rules"] == 3 and stats["spearman"] == pytest.approx(1.0)
    _, reversed_stats = agreement_rows(lifts, {"a": -3.0, "b": 1.0, "c": 2.0})
    assert reversed_stats["spearman"] == pytest.approx(-1.0)


def test_reader_agreement_asks_the_reader_where_each_rule_applies(tmp_path, capsys):
    from pathlib import Path

    audit = Path(__file__).resolve().parents[2] / "results" / "advice" / "civ-guide"
    table = tmp_path / "agreement.csv"
    assert main(["reader", "agreement", "--audit", str(audit), "--turns", "20", "--games", "1",
                 "--csv", str(table)]) == 0
    out = capsys.readouterr().out
    assert "first-city" in out and "Spearman" in out
    rows = table.read_text().splitlines()
    assert rows[0] == "rule,decisions,lift,worth" and len(rows) == 8  # the guide's 7 rules
    first = next(r for r in rows if r.startswith("first-city"))
    assert int(first.split(",")[1]) > 0  # settlers before the first city were asked
    code = main(["reader", "agreement", "--audit", str(tmp_path), "--games", "1"])
    assert code != 0 and "no audit summary" in capsys.readouterr().err


def test_a_variant_reader_reads_each_maps_own_rule_sentence(tmp_path):
    from nlmcs.model.manuals import resolve_manual
    from nlmcs.model.variant_manuals import game_manual
    from nlmcs.reader.outcomes import outcome_game
    from nlmcs.reader.prior import reader_index

    out = tmp_path / "variant"
    assert main(["reader", "train", "--manual", "civ-guide", "--variant", "sacred-terrain",
                 "--games", "2", "--points", "2", "--candidates", "2", "--turns", "6",
                 "--epochs", "2", "--no-progress", "--out", str(out)]) == 0
    model = json.loads((out / "reader.json").read_text())
    assert model["training"]["outcomes"]["spec"]["variant"] == "sacred-terrain"
    spec = OutcomeSpec(games=2, seed=0, turns=6, points=2, candidates=2, variant="sacred-terrain")
    game = outcome_game(spec)
    seeds = [map_seed(0, i) for i in range(2)]
    texts = {reader_index(game_manual(resolve_manual("civ-guide"), game, s), game).texts[-1]
             for s in seeds}
    assert all("sacred" in t or "extra citizens" in t or "more citizens" in t for t in texts)


def test_an_ablation_records_its_readers_and_refuses_a_bad_one_before_any_game(tmp_path):
    from nlmcs.experiments.ablation.spec import AblationSpec
    from nlmcs.methods import ReaderOptions
    from nlmcs.reader.weights import default_model

    path = tmp_path / "reader.json"
    path.write_text(json.dumps(default_model()))
    spec = AblationSpec(methods=("uct-text", "uct"), rollouts=(2,), games=1, seed=0, steps=1,
                        reader=ReaderOptions(reader=str(path)))
    ident = spec.identity()["reader"]
    assert ident["reader"]["path"] == str(path) and ident["twin_reader"] is None
    before = spec.fingerprint()
    path.write_text(json.dumps({**default_model(), "label_bias": [1.0, 0.0, 0.0]}))
    assert spec.fingerprint() != before  # other weights: another run
    path.write_text('{"format": "nlmcs-reader/1"}')
    out = tmp_path / "run"
    code = main(["ablation", "run", "--methods", "uct-text", "--reader", str(path), "--games",
                 "1", "--steps", "1", "--out", str(out), "--no-progress"])
    assert code != 0 and not out.exists()
