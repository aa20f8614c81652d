"""`start_position` and `--start-turn`: the benchmarks can time a step from later in a game,
where it costs more, and a turn the game never reaches is refused in one line."""

from __future__ import annotations

import csv

import pytest

from nlmcs.cli import main
from nlmcs.errors import UserInputError
from nlmcs.experiments.positions import start_position
from nlmcs.games.civ import CivConfig, CivGame
from nlmcs.games.runner import play_game


@pytest.fixture(autouse=True)
def _data_root(tmp_path, monkeypatch):
    monkeypatch.setenv("NLMCS_DATA", str(tmp_path / "data"))


def test_turn_zero_is_the_start_position():
    game = CivGame(CivConfig.preset("tiny"))
    assert start_position(game, seed=3).to_json() == game.new_initial_state(3).to_json()


def test_a_later_turn_is_where_the_built_in_ais_play_to_and_the_same_for_a_seed():
    game = CivGame(CivConfig.preset("tiny"))
    got = start_position(game, seed=3, turns=6)
    assert got.turn == 6 and not got.is_terminal()
    again = game.new_initial_state(3)
    pols = {p: game.policy("builtin:normal") for p in range(game.num_players)}
    play_game(game, pols, seed=3, max_turns=6, state=again)
    assert got.to_json() == again.to_json() == start_position(game, seed=3, turns=6).to_json()
    assert got.to_json() != start_position(game, seed=4, turns=6).to_json()
    # the built-in AIs have founded cities and built units by then
    assert len(got.cities) > len(game.new_initial_state(3).cities)


def test_a_turn_past_the_end_of_the_game_is_refused():
    game = CivGame(CivConfig.preset("tiny", max_turns=5))
    with pytest.raises(UserInputError, match="over at turn 5, so it has no turn 9"):
        start_position(game, seed=0, turns=9)
    with pytest.raises(UserInputError, match="no turn 5 to start from: ask for a turn before 5"):
        start_position(game, seed=0, turns=5)  # the last turn is the end of the game
    assert start_position(game, seed=0, turns=4).turn == 4


def test_bench_step_and_search_time_from_the_asked_turn(tmp_path, capsys):
    step_out, search_out = tmp_path / "step.csv", tmp_path / "search.csv"
    assert main(["bench", "step", "--method", "linear", "--rollouts", "2", "--depth", "2",
                 "--steps", "1", "--map", "tiny", "--start-turn", "4", "--path", "tables",
                 "--out", str(step_out)]) == 0
    assert "from turn 4;" in capsys.readouterr().out
    assert main(["bench", "search", "--methods", "uct", "--rollouts", "2", "--workers", "1",
                 "--depth", "2", "--map", "tiny", "--start-turn", "4",
                 "--out", str(search_out)]) == 0
    for out in (step_out, search_out):
        with out.open(newline="") as fh:
            assert [r["start_turn"] for r in csv.DictReader(fh)] == ["4"]


@pytest.mark.parametrize("command", [["step", "--method", "linear"],
                                     ["search", "--methods", "uct"]])
def test_bench_refuses_a_turn_the_game_does_not_reach(command, tmp_path, capsys):
    out = tmp_path / "bench.csv"
    code = main(["bench", *command, "--rollouts", "2", "--depth", "2", "--map", "tiny",
                 "--max-turns", "5", "--start-turn", "9", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "no turn 9" in err
    assert not out.exists()
