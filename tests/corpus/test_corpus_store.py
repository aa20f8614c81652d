import json

import numpy as np
import pytest
from corpus_logs import EFFECT, game_lines, write_log

from corpus.format import read_games
from corpus.mine import action_key, mine_game, player_result
from corpus.store import corpus_dir, ingest, load_corpus
from nlmcs.errors import UserInputError


def test_mining_gives_action_vector_as_after_minus_before(make_log):
    record = next(read_games(make_log(n_games=1)))
    mined = mine_game(record)
    assert mined.states.shape == (len(record.decisions), 6)
    d = record.decisions[0]
    np.testing.assert_allclose(mined.actions[0], np.subtract(d.after_vector, d.state_vector),
                               atol=1e-5)
    row = mined.decisions.iloc[0]
    assert row["agent_label"] == "settlers" and row["player_kind"] == "builtin"
    # player 0 won this game; player 1 lost
    assert set(mined.decisions.loc[mined.decisions.player == 0, "result"]) == {1.0}
    assert set(mined.decisions.loc[mined.decisions.player == 1, "result"]) == {0.0}


def test_action_key_and_result():
    assert action_key("build", "warriors") == "build:warriors"
    assert action_key("attack", 17) == "attack"
    assert action_key("fortify", None) == "fortify"
    assert player_result(None, 0) == 0.5 and player_result(1, 1) == 1.0


def test_ingest_load_round_trip(make_log):
    path = make_log(n_games=3, turns=2)
    summary = ingest([path], name="demo")
    assert (summary.new_games, summary.new_decisions) == (3, 3 * 2 * 2 * 4)
    c = load_corpus("demo")
    assert c.states.shape == (48, 6) and c.states.dtype == np.float32
    assert c.meta["counts"]["games"] == 3
    assert c.meta["sources"][0]["sha256"] and c.meta["feature_names"][0] == "cities"
    assert sum(c.meta["counts"]["action_types"].values()) == 48
    assert c.meta["counts"]["players_per_kind"] == {"builtin": 3, "random": 3}
    # the action vectors are the recorded effects
    first = c.decisions.iloc[0]
    assert first["action_type"] in {"build_city", "irrigate", "move"}
    effect = {"build_city": EFFECT["build city"], "irrigate": EFFECT["irrigate"],
              "move": EFFECT["move"]}[first["action_type"]]
    np.testing.assert_allclose(c.actions[0], effect, atol=1e-3)


def test_append_and_reingest_is_not_duplicated(make_log):
    first = make_log("a.jsonl", n_games=2)
    second = make_log("b.jsonl", n_games=2, start=2)
    ingest([first], name="demo")
    again = ingest([first], name="demo")
    assert again.new_games == 0 and again.already_ingested == [str(first)]
    more = ingest([second, first], name="demo")
    assert more.new_games == 2 and more.total_games == 4
    c = load_corpus("demo")
    assert sorted(c.games.game_id) == ["g0", "g1", "g2", "g3"]
    assert len(c.meta["sources"]) == 2 and len(c.meta["parts"]) == 2
    assert len(c.states) == len(c.decisions) == c.meta["counts"]["decisions"]


def test_duplicate_game_id_refused_and_corpus_untouched(make_log, tmp_path):
    ingest([make_log("a.jsonl", n_games=2)], name="demo")
    meta_before = (corpus_dir("demo") / "meta.json").read_text()
    clash = write_log(tmp_path / "c.jsonl", [game_lines("g1", seed=99)])
    with pytest.raises(UserInputError, match=r"c.jsonl:1: duplicate game id 'g1'"):
        ingest([clash], name="demo")
    twice = write_log(tmp_path / "d.jsonl", [game_lines("x", seed=1), game_lines("x", seed=2)])
    with pytest.raises(UserInputError, match="duplicate game id 'x'"):
        ingest([twice], name="demo")
    assert (corpus_dir("demo") / "meta.json").read_text() == meta_before
    assert load_corpus("demo").meta["counts"]["games"] == 2


def test_other_ruleset_refused(make_log, tmp_path):
    ingest([make_log(n_games=1)], name="demo")
    other = write_log(tmp_path / "o.jsonl", [game_lines("z", seed=5, ruleset="civ2")])
    with pytest.raises(UserInputError, match="o.jsonl:1: log uses ruleset 'civ2'"):
        ingest([other], name="demo")


def test_empty_or_missing(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(UserInputError, match="empty.jsonl: no complete game"):
        ingest([empty], name="demo")
    assert not (corpus_dir("demo") / "meta.json").exists()
    with pytest.raises(UserInputError, match="no corpus at"):
        load_corpus("demo")
    with pytest.raises(UserInputError, match="no such log file"):
        ingest([tmp_path / "nope.jsonl"], name="demo")


def test_interrupted_ingest_leaves_no_visible_part(make_log, monkeypatch):
    ingest([make_log("a.jsonl", n_games=1)], name="demo")
    import corpus.store as store

    def crash(*args, **kwargs):
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(store, "_write_json", crash)
        with pytest.raises(KeyboardInterrupt):
            ingest([make_log("b.jsonl", n_games=1, start=5)], name="demo")
    c = load_corpus("demo")
    assert list(c.games.game_id) == ["g0"] and len(c.meta["parts"]) == 1
    # the next ingest removes the orphan and commits cleanly
    ingest([make_log("b.jsonl", n_games=1, start=5)], name="demo")
    assert sorted(load_corpus("demo").games.game_id) == ["g0", "g5"]
    directory = corpus_dir("demo")
    assert sorted(p.name for p in directory.glob("decisions-*")) == [
        "decisions-0001.parquet", "decisions-0002.parquet"]
    assert json.loads((directory / "meta.json").read_text())["counts"]["games"] == 2


def test_directory_of_logs_is_read_in_sorted_order(make_log, tmp_path):
    make_log("b.jsonl", n_games=1, start=1)
    make_log("a.jsonl", n_games=1, start=0)
    (tmp_path / "notes.txt").write_text("not a log")
    summary = ingest([tmp_path], name="demo")
    assert summary.new_games == 2
    assert list(load_corpus("demo").games.game_id) == ["g0", "g1"]
    with pytest.raises(UserInputError, match="holds no .jsonl"):
        ingest([tmp_path / "data"], name="demo")
