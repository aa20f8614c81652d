"""Fixtures for the manual-pipeline tests: one stored manual per session, CLI runner."""

from __future__ import annotations

from pathlib import Path

import pytest
from manual_fixtures import FIXTURES

from manual_pipeline.ingest import ingest
from manual_pipeline.store import load_manual
from nlmcs.cli import main


@pytest.fixture(scope="session")
def stored_root(tmp_path_factory) -> Path:
    """A manuals root holding `guide` (ingested from guide.md) for read-only tests."""
    root = tmp_path_factory.mktemp("manuals")
    ingest(FIXTURES / "guide.md", name="guide", root=root)
    return root


@pytest.fixture(scope="session")
def guide(stored_root):
    return load_manual("guide", root=stored_root)


@pytest.fixture
def data_root(tmp_path, monkeypatch) -> Path:
    """An empty NLMCS_DATA for tests that go through the CLI."""
    root = tmp_path / "data"
    monkeypatch.setenv("NLMCS_DATA", str(root))
    return root


@pytest.fixture
def cli(capsys):
    """Run `nlmcs ARGS...` in this process; return (exit code, stdout, stderr)."""

    def run(*args: str) -> tuple[int, str, str]:
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run
