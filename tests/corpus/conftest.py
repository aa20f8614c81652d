"""Fixtures of the corpus tests; the log synthesiser lives in corpus_logs.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from corpus_logs import game_lines, write_log


@pytest.fixture
def make_log(tmp_path):
    """make_log(name, n_games, start=0, **game_kwargs) -> path of a valid log."""

    def make(name: str = "log.jsonl", n_games: int = 2, start: int = 0, **kwargs) -> Path:
        games = [game_lines(f"g{start + i}", seed=start + i, **kwargs) for i in range(n_games)]
        return write_log(tmp_path / name, games)

    return make


@pytest.fixture(autouse=True)
def _data_root(tmp_path, monkeypatch):
    monkeypatch.setenv("NLMCS_DATA", str(tmp_path / "data"))
