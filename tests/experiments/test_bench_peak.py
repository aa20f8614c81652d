"""`nlmcs bench search`'s peak memory is each row's own, not the largest of the process so far
(which counted what ran before the row, such as the numpy reference's row)."""

import os

import numpy as np
import pytest

import nlmcs.experiments.bench_search as bench_search_module
from nlmcs.experiments.bench_search import bench_search, fresh_peak, peak_kib
from nlmcs.games import make_game
from nlmcs.search.config import SearchConfig

MIB = 1024  # KiB

needs_proc = pytest.mark.skipif(
    peak_kib() is None or not os.access("/proc/self/clear_refs", os.W_OK),
    reason="no /proc peak resident size to read and reset (Linux)")


def _rss_kib() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


def _transient(mib: int) -> int:
    """Touch `mib` MiB above what the process holds and free them again: a peak that is over
    by the time it returns. Returns the resident size after (KiB)."""
    block = np.ones(mib * MIB * MIB // 8)
    block[::512] += 1.0
    del block
    return _rss_kib()


@needs_proc
def test_fresh_peak_forgets_what_was_freed_before():
    held = _transient(256)
    assert peak_kib() > held + 200 * MIB
    assert fresh_peak()
    assert peak_kib() < held + 50 * MIB


def _rows():
    return bench_search(game=make_game("civ", preset="tiny"), methods=["linear", "uct"],
                        rollouts=[2], workers=[1, 2],
                        search_config=SearchConfig(depth=2))  # fmt: skip


@pytest.mark.slow
@needs_proc
def test_a_rows_peak_leaves_out_what_ran_before_it(monkeypatch):
    held = _transient(384) / MIB
    rows = _rows()
    assert [(r.method, r.workers) for r in rows] == [("linear", 1), ("linear", 2), ("uct", 1),
                                                     ("uct", 2)]
    for row in rows:  # a tiny game's rows add far less than 384 MiB to what the process holds
        assert 0 < row.peak_mb < held + 250, (row, held)
    # where the peak cannot be started afresh, the largest so far counts the 384 MiB
    monkeypatch.setattr(bench_search_module, "fresh_peak", lambda: False)
    held = _transient(384) / MIB
    assert all(row.peak_mb > held + 300 for row in _rows())
