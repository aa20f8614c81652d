"""Every test runs with NLMCS_DATA pointing into the session's temporary folder, so no test reads
or writes the user's own store; tests that need an empty store set their own."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session", autouse=True)
def _session_data_root(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("NLMCS_DATA", str(tmp_path_factory.mktemp("nlmcs-data")))
        yield
