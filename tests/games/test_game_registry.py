"""The table of games: what each entry promises, and that the CLI and the corpus reader ask it
(a game registered at run time is playable and checked without touching either)."""

from __future__ import annotations

import json
import re

import pytest
from extra_games import extra_games_registered

from corpus.format import CorpusFormatError, read_games
from nlmcs.cli import main
from nlmcs.errors import UserInputError
from nlmcs.games import game_entries, game_entry, game_names, make_game
from nlmcs.games.record import CorpusRecorder
from nlmcs.games.registry import action_kinds
from nlmcs.games.runner import play_game


def test_the_shipped_table():
    assert game_names() == ["civ", "freeciv"]
    assert [e.name for e in game_entries() if e.simulated] == ["civ"]
    with pytest.raises(UserInputError, match=r"unknown game 'chess' \(known: civ, freeciv\)"):
        game_entry("chess")


def test_civ_maps_are_the_presets_the_engine_knows_and_the_help_tells_their_size():
    civ = game_entry("civ")
    sizes = dict(re.findall(r"(\w+) (\d+x\d+)", civ.map_help))
    assert list(sizes) == list(civ.maps) and civ.maps[0] == "default"
    for name in civ.maps:
        config = make_game("civ", **civ.options(map_preset=name, max_turns=None)).config
        assert f"{config.width}x{config.height}" == sizes[name]
    with pytest.raises(UserInputError, match="unknown map preset"):
        make_game("civ", **civ.options(map_preset="huge", max_turns=None))


def test_options_give_a_preset_only_to_a_game_with_maps():
    assert game_entry("civ").options(map_preset="tiny", max_turns=7) == {"preset": "tiny",
                                                                         "max_turns": 7}
    assert game_entry("freeciv").options(map_preset="tiny", max_turns=None) == {}
    assert make_game("freeciv", **game_entry("freeciv").options(
        map_preset="tiny", max_turns=12)).config.max_turns == 12


def test_action_kinds_are_the_engines():
    from nlmcs.games.civ.legal import ACTION_KINDS

    assert action_kinds("civ") == tuple(ACTION_KINDS)
    assert action_kinds("freeciv") is None and action_kinds("chess") is None


def test_a_recorded_configuration_rebuilds_the_same_game():
    game = make_game("civ", preset="small", max_turns=9)
    recorded = {**json.loads(json.dumps(game.config.to_dict())), "from_a_newer_version": 1}
    assert game_entry("civ").rebuild(recorded).config == game.config
    assert game_entry("civ").rebuild({}).config == make_game("civ").config
    with pytest.raises(UserInputError, match="runs on a server"):
        game_entry("freeciv").rebuild({"max_turns": 5})


def test_the_cli_plays_a_game_registered_at_run_time(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NLMCS_DATA", str(tmp_path))
    argv = ["play", "--game", "toy", "--method", "uct", "--steps", "2", "--rollouts", "3",
            "--depth", "2", "--max-turns", "5", "--no-progress"]
    assert main(argv) == 2  # not in the table: refused by --game's choices
    assert "invalid choice: 'toy'" in capsys.readouterr().err
    with extra_games_registered():
        assert main(argv) == 0
    assert "method uct  seed 0  steps 2" in capsys.readouterr().out


def test_the_corpus_reader_checks_the_action_kinds_the_table_lists(tmp_path):
    with extra_games_registered():
        game = make_game("toy", max_turns=3)
    path = tmp_path / "toy.jsonl"
    pols = {p: game.policy("random") for p in range(game.num_players)}
    play_game(game, pols, seed=1, hooks=[CorpusRecorder(path)])
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    decision = next(r for r in lines if r["type"] == "decision")
    decision["action"] = {"kind": "fortify", "arg": None}
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    assert len(list(read_games(path, on_error="stop"))) == 1  # kinds of an unknown game: unchecked
    with extra_games_registered(), pytest.raises(CorpusFormatError,
                                                 match="unknown action kind 'fortify' for game "
                                                       "'toy'"):
        list(read_games(path, on_error="stop"))
