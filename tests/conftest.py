"""Every test runs with NLMCS_DATA pointing into the session's temporary folder, so no test reads
or writes the user's own store; tests that need an empty store set their own. The browser tests
share one way to start Debian's chromium (Playwright with executable_path=/usr/bin/chromium)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CHROMIUM = Path(os.environ.get("NLMCS_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync"]  # fmt: skip
"""Without the background-networking flags chromium keeps trying hosts a closed network refuses."""


@pytest.fixture(scope="session", autouse=True)
def _session_data_root(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("NLMCS_DATA", str(tmp_path_factory.mktemp("nlmcs-data")))
        yield


@pytest.fixture(scope="module")
def browser():
    """Headless chromium driven by Playwright through `executable_path` (`playwright install`
    is not needed); skips, saying why, where either is missing."""
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="Playwright for Python is not installed "
                                          "(pip install playwright)")  # fmt: skip
    if not CHROMIUM.is_file():
        pytest.skip(f"no chromium at {CHROMIUM} (apt-get install chromium)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS, headless=True)
        try:
            yield b
        finally:
            b.close()
