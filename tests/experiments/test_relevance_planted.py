"""The planted-sentence test (`nlmcs relevance planted`): at the release's budget, one real step
of today's default model leaves the one sentence that says which move wins at uniform, and the
`selecting` preset puts it at least 5x above uniform and at least twice its twin copy's lift."""

from __future__ import annotations

import pytest

from nlmcs.cli import main
from nlmcs.errors import UserInputError
from nlmcs.experiments.relevance.planted import planted_case, run_planted, verdict
from nlmcs.model.config import ModelConfig
from nlmcs.search.config import SearchConfig


def _rows(preset: str, rollouts: int, depth: int) -> list[dict]:
    return run_planted(seed=3, twin_seed=0, budgets=[rollouts],
                       search_config=SearchConfig(rollouts=rollouts, depth=depth),
                       model_config=ModelConfig.preset(preset))


def test_the_planted_sentence_is_a_settlers_candidate_saying_to_found_there():
    case = planted_case(seed=3)
    assert case.planted == len(case.manual.sentences) - 1 > 700  # among the guide's sentences
    assert "Settlers" in case.sentence and "grassland" in case.sentence
    assert case.action.kind == "build_city"
    assert "grassland" in case.state.state_labels(case.agent)


def test_a_seed_whose_settlers_are_not_on_the_sacred_terrain_is_refused():
    with pytest.raises(UserInputError, match=r"--seed 0: .* seeds below 40 whose do: 3, "):
        planted_case(seed=0)


@pytest.mark.slow
def test_at_500_by_20_the_default_model_fails_and_selecting_passes():
    default = _rows("default", 500, 20)
    text = next(r for r in default if r["arm"] == "text")
    assert text["planted_candidate"] and text["uniform"]
    assert not verdict(default, 500).passed
    selecting = _rows("selecting", 500, 20)
    assert verdict(selecting, 500).passed, verdict(selecting, 500).line()
    text = next(r for r in selecting if r["arm"] == "text")
    twin = next(r for r in selecting if r["arm"] == "twin")
    assert not text["uniform"] and text["entropy"] < twin["entropy"]
    assert text["u_moved"] > 0 and text["w_moved"] > 0  # the step learned in both layers


def test_the_command_prints_both_arms_and_the_verdict(tmp_path, capsys):
    out = tmp_path / "planted.csv"
    code = main(["relevance", "planted", "--model-preset", "selecting", "--budgets", "1",
                 "--depth", "2", "--out", str(out)])
    assert code == 0
    text = capsys.readouterr().out
    assert "text " in text and "twin " in text and "PASS" in text
    lines = out.read_text().splitlines()
    assert lines[0].startswith("arm,rollouts,depth") and len(lines) == 3


def test_bad_budgets_are_one_line(capsys):
    code = main(["relevance", "planted", "--budgets", "0,5"])
    err = capsys.readouterr().err
    assert code != 0 and "budgets" in err and "Traceback" not in err


def test_the_csv_is_never_written_over_the_config(tmp_path, capsys):
    config = tmp_path / "c.toml"
    config.write_text("[search]\ndepth = 2\n")
    code = main(["relevance", "planted", "--config", str(config), "--out", str(config)])
    assert code == 2 and "would write over" in capsys.readouterr().err
    assert config.read_text() == "[search]\ndepth = 2\n"
