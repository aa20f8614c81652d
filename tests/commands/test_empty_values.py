"""An empty option value is refused by name, never taken for the default."""

import pytest

from nlmcs.cli import main


@pytest.mark.parametrize("argv,named", [
    (["ablation", "run", "--methods", ""], "--methods"),
    (["ablation", "run", "--rollouts", " "], "--rollouts"),
    (["ablation", "run", "--map", ""], "--map"),
    (["ablation", "run", "--methods="], "--methods"),
    (["play", "--reader", ""], "--reader"),
    (["net", "train", "--out", ""], "--out"),
    (["manual", "ingest", ""], "an empty argument"),
])  # fmt: skip
def test_an_empty_value_is_a_usage_error_naming_its_option(argv, named, capsys, tmp_path,
                                                           monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "empty" in err and named in err and len(err.splitlines()) == 1
    assert not any(tmp_path.iterdir())  # nothing was run or written
