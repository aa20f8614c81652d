"""Shared fixtures for the civ engine tests: games built on the shipped classic ruleset."""

from __future__ import annotations

import pytest

from nlmcs.games.civ import CivConfig, CivGame
from nlmcs.paths import shipped_dir

CLASSIC = shipped_dir() / "rulesets" / "classic.json"


@pytest.fixture(scope="session")
def small_game() -> CivGame:
    return CivGame(CivConfig.small(ruleset=str(CLASSIC)))


@pytest.fixture(scope="session")
def default_game() -> CivGame:
    return CivGame(CivConfig(ruleset=str(CLASSIC)))
