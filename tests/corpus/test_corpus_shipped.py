"""The sample corpus that ships with nlmcs: found by name on a fresh store, compatible with the
game, played by uct-corpus; a corpus of another ruleset or feature list is refused in one line."""

from __future__ import annotations

import json
import shutil
from types import SimpleNamespace

import pytest

from corpus.bundle import DEFAULT_CORPUS, check_compatible
from corpus.shipped import SAMPLE_CORPUS, export_corpus, find_corpus_dir, shipped_corpora
from corpus.store import corpus_dir, load_corpus
from nlmcs.cli import main
from nlmcs.errors import UserInputError
from nlmcs.games import make_game
from nlmcs.paths import shipped_dir


@pytest.mark.slow
def test_the_sample_is_shipped_small_and_found_on_a_fresh_store():
    assert DEFAULT_CORPUS == SAMPLE_CORPUS
    where = find_corpus_dir(SAMPLE_CORPUS)
    assert where == shipped_dir() / "corpora" / SAMPLE_CORPUS == shipped_corpora()[SAMPLE_CORPUS]
    assert sum(p.stat().st_size for p in where.iterdir()) < 5e6
    corpus = load_corpus(where)
    assert corpus.meta["counts"]["games"] == 200
    assert set(corpus.decisions["player_kind"]) == {"builtin"}
    assert all("/" not in s["path"] for s in corpus.meta["sources"])  # no recording machine paths
    check_compatible(corpus, make_game("civ", preset="small"))
    check_compatible(corpus, make_game("civ"))  # the map size is not part of the vectors
    assert find_corpus_dir("mine") == corpus_dir("mine")  # unknown names stay in the store


@pytest.mark.slow
def test_a_stored_corpus_of_the_same_name_wins(tmp_path):
    export_corpus(SAMPLE_CORPUS, corpus_dir(SAMPLE_CORPUS))
    assert find_corpus_dir(SAMPLE_CORPUS) == corpus_dir(SAMPLE_CORPUS)
    assert load_corpus(SAMPLE_CORPUS).meta["counts"] == load_corpus(
        shipped_corpora()[SAMPLE_CORPUS]).meta["counts"]
    with pytest.raises(UserInputError, match="not empty"):
        export_corpus(SAMPLE_CORPUS, corpus_dir(SAMPLE_CORPUS))


def _game(ruleset: str = "classic", sha: str = "", features=None):
    real = make_game("civ", preset="tiny")
    names = features or list(real.state_feature_names())
    return SimpleNamespace(name="civ", ruleset=SimpleNamespace(name=ruleset, sha256=sha),
                           state_feature_names=lambda: names)


@pytest.mark.parametrize("game, message", [
    (_game(ruleset="civ2civ3"), "ruleset 'classic', not this game's 'civ2civ3'"),
    (_game(sha="ab" * 32), "another version of ruleset 'classic'"),
    (_game(features=["turn_fraction"]), "other state features"),
])  # fmt: skip
def test_incompatible_games_are_refused(game, message):
    corpus = load_corpus(find_corpus_dir(SAMPLE_CORPUS))
    with pytest.raises(UserInputError, match=message):
        check_compatible(corpus, game)


@pytest.mark.slow
def test_play_uct_corpus_on_a_fresh_store_and_refuse_another_ruleset(tmp_path, capsys):
    args = ["play", "--method", "uct-corpus", "--map", "tiny", "--steps", "1", "--rollouts",
            "3", "--depth", "2", "--no-progress"]
    assert main(args) == 0, capsys.readouterr().err
    assert "method uct-corpus" in capsys.readouterr().out
    other = tmp_path / "other-ruleset"
    shutil.copytree(shipped_corpora()[SAMPLE_CORPUS], other)
    meta = json.loads((other / "meta.json").read_text())
    (other / "meta.json").write_text(json.dumps({**meta, "ruleset": "civ2civ3"}))
    assert main([*args, "--corpus", str(other)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "recorded with ruleset 'civ2civ3'" in err[0]
