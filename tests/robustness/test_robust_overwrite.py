"""Outputs over inputs (issue 60, class 1): no command writes over a file it reads, inside a
folder it reads, or over another of its outputs, whether the paths come from options,
positional arguments, the --config file or that file's own keys. One check
(`commands.options.check_paths`, by `files.check_distinct`) runs for every command after its
config file is applied; each case here is refused in one line and changes nothing stored."""

from __future__ import annotations

import json

import pytest
from robust_support import assert_refused, tree_digest


@pytest.fixture
def run_folder(tmp_path):
    """A run folder as a reader sees one: a run.json and a games file."""
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "run.json").write_text(json.dumps({"format": "x"}))
    (folder / "games.jsonl").write_text('{"game": 0}\n')
    return folder


def _refused_and_kept(cli, folder, args, *needles):
    before = tree_digest(folder)
    assert_refused(cli(*args), *needles)
    assert tree_digest(folder) == before


@pytest.mark.parametrize("name", ["games.jsonl", "run.json", "new-page.html"])
def test_a_report_never_writes_inside_the_run_folder_it_reads(cli, run_folder, name):
    _refused_and_kept(cli, run_folder, ("relevance", "report", run_folder, "--html",
                                        run_folder / name),
                      "--html would write inside", "which the log reads")


def test_the_config_file_is_an_input_of_every_command_that_reads_one(cli, tmp_path):
    config = tmp_path / "c.toml"
    config.write_text("seed = 1\n")
    for args in (("play", "--config", config, "--log-decisions", config),
                 ("play", "--config", config, "--report", config),
                 ("relevance", "planted", "--config", config, "--out", config)):
        assert_refused(cli(*args), "would write over --config")
        assert config.read_text() == "seed = 1\n"


def test_an_output_named_inside_the_config_file_is_checked_too(cli, tmp_path):
    config = tmp_path / "c.toml"
    config.write_text(f'steps = 1\nlog_decisions = "{config}"\n')
    before = config.read_text()
    assert_refused(cli("play", "--config", config), "--log-decisions would write over --config")
    assert config.read_text() == before


def test_reader_training_never_writes_its_files_over_the_outcomes_it_reads(cli, tmp_path):
    out = tmp_path / "reader"
    out.mkdir()
    outcomes = out / "reader.json"
    outcomes.write_text("{}\n")
    before = tree_digest(out)
    assert_refused(cli("reader", "train", "--out", out, "--outcomes", outcomes, "--games", "1"),
                   "would write over --outcomes")
    assert tree_digest(out) == before


def test_a_positional_input_is_named_as_such(cli, tmp_path):
    state = tmp_path / "s.json"
    state.write_text("{}")
    assert_refused(cli("game", "render", state, "--png", state), "would write over the state")
