"""Decision logs shared by the relevance tests: one seeded short text game on the tiny map, played
once per session through `nlmcs play --log-decisions --report` (the report comes with it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from relevance_records import TEXT_GAME

from nlmcs.cli import main


@pytest.fixture(scope="session")
def text_game(tmp_path_factory) -> tuple[Path, Path]:
    """(decision log with states, its report written by `nlmcs play --report`)."""
    folder = tmp_path_factory.mktemp("text-game")
    log, report = folder / "text.jsonl", folder / "text.html"
    code = main(["play", *TEXT_GAME, "--log-decisions", str(log), "--report", str(report)])
    assert code == 0
    return log, report
