"""The manual measures: action/state information is what a word-permuted twin loses."""

from __future__ import annotations

import sys
from pathlib import Path

from nlmcs.advice.readability import action_state_information, measures, readability_rows
from nlmcs.cli import main
from nlmcs.games import make_game
from nlmcs.games.civ.labels import vocabulary

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "search"))
from toy_game import make_manual

ADVICE = ["Irrigate grassland now.", "Mine hills early.", "Irrigate plains too.",
          "Mine mountains later.", "Irrigate grassland beside rivers.", "Mine hills always."]
SALAD = ["Irrigate hills now.", "Mine grassland early.", "Irrigate grassland too.",
         "Mine hills later.", "Irrigate plains beside rivers.", "Mine plains always."]


def test_information_is_high_when_actions_go_with_their_own_terrains():
    actions = frozenset({"irrigate", "mine"})
    states = frozenset({"grassland", "plains", "hills", "mountains"})
    consistent = [{"irrigate", "grassland"}, {"mine", "hills"}] * 5
    mixed = [{"irrigate", "grassland"}, {"irrigate", "hills"}, {"mine", "grassland"},
             {"mine", "hills"}] * 5
    assert action_state_information(consistent, actions, states) == 1.0
    assert action_state_information(mixed, actions, states) == 0.0
    assert action_state_information([set()], actions, states) == 0.0


def test_readability_rows_compare_a_manual_with_its_salad():
    vocab = vocabulary(make_game("civ", preset="small").tables)
    manual, twin = make_manual(ADVICE, name="advice"), make_manual(SALAD, name="salad")
    row = readability_rows([manual], [twin], vocab, [None])[0]
    assert row["manual"] == "advice" and row["sentences"] == 6
    assert row["share_with_game_word"] == 1.0 and row["share_action_and_state"] == 1.0
    assert row["action_state_mi"] > row["twin_action_state_mi"]
    assert row["mi_over_twin"] > 0.3
    words = measures(manual, frozenset({"irrigate"}), frozenset({"grassland"}))
    assert words["game_words_used"] == 2


def test_manual_stats_prints_the_table_and_refuses_an_unknown_manual(capsys, tmp_path):
    out = tmp_path / "stats.csv"
    assert main(["manual", "stats", "civ-guide", "--csv", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "action_state_mi" in printed and "civ-guide" in printed
    # every line says what it measures, with its unit (issue 55)
    lines = [line for line in printed.splitlines()[2:]
             if line.strip() and not line.startswith("written:")]
    assert all(line.rstrip().endswith(")") for line in lines), lines
    assert "mutual information of action and state words in one sentence (bits)" in printed
    assert out.read_text().startswith("manual,")
    assert main(["manual", "stats", "no-such-manual"]) == 2
    err = capsys.readouterr().err.strip()
    assert "no-such-manual" in err and "\n" not in err
