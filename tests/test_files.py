"""Whole-or-nothing outputs: an interrupt, wherever it lands in a write, leaves either the old
file or the complete new one, and never a hidden temporary (CI once found one left by a
SIGTERM landing between closing a temporary and renaming it)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from nlmcs import files
from nlmcs.files import AtomicFile, atomic_output, held_interrupts


class Stop(Exception):
    """What the test's SIGTERM handler raises, like the CLI's."""


def _leftovers(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def _interrupt_inside(monkeypatch, name: str, signum: int = signal.SIGINT):
    """Make `os.NAME` deliver `signum` to this process before doing its work."""
    real = getattr(os, name)

    def interrupted(*args, **kwargs):
        signal.raise_signal(signum)
        return real(*args, **kwargs)

    monkeypatch.setattr(files.os, name, interrupted)


def test_an_interrupt_while_the_temporary_is_made_leaves_nothing(tmp_path, monkeypatch):
    _interrupt_inside(monkeypatch, "fchmod")
    with pytest.raises(KeyboardInterrupt), atomic_output(tmp_path / "out.csv") as fh:
        fh.write("never\n")
    assert _leftovers(tmp_path) == [] and not (tmp_path / "out.csv").exists()


def test_an_interrupt_while_renaming_keeps_the_complete_output(tmp_path, monkeypatch):
    target = tmp_path / "out.csv"
    target.write_text("old\n")
    _interrupt_inside(monkeypatch, "replace")
    with pytest.raises(KeyboardInterrupt), atomic_output(target) as fh:
        fh.write("new\n")
    assert target.read_text() == "new\n" and _leftovers(tmp_path) == []


def test_sigterm_is_held_and_delivered_to_its_own_handler(tmp_path, monkeypatch):
    def stop(signum, frame):
        raise Stop

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        _interrupt_inside(monkeypatch, "replace", signal.SIGTERM)
        out = AtomicFile(tmp_path / "log.jsonl")
        out.file.write("{}\n")
        with pytest.raises(Stop):
            out.commit()
        assert signal.getsignal(signal.SIGTERM) is stop  # the handler is put back
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert (tmp_path / "log.jsonl").read_text() == "{}\n" and _leftovers(tmp_path) == []


def test_held_interrupts_deliver_only_after_the_block(tmp_path):
    done = []
    with pytest.raises(KeyboardInterrupt), held_interrupts():
        signal.raise_signal(signal.SIGINT)
        done.append("rest of the block")
    assert done == ["rest of the block"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_temporary_nobody_took_is_removed_at_exit(tmp_path):
    code = ("import sys; from nlmcs.files import AtomicFile; "
            "AtomicFile(sys.argv[1]).file.write('orphan')")
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "out.json")], check=True)
    assert _leftovers(tmp_path) == [] and not (tmp_path / "out.json").exists()


def _writes_and_waits(folder: str) -> None:
    """Worker: leave a temporary half-written, say so, and wait to be stopped."""
    out = AtomicFile(os.path.join(folder, "game.jsonl"))
    out.file.write("half a game")
    out.file.flush()
    open(os.path.join(folder, "started"), "w").close()
    time.sleep(120)


def test_a_worker_stopped_by_sigterm_takes_its_temporary_with_it(tmp_path):
    """A pool stopped mid-game terminates its workers (SIGTERM, as a scheduler's signal to the
    process group): the log a worker was writing goes with it (CI once found it left)."""
    from nlmcs.processes import local_pool

    with pytest.raises(Stop), local_pool(1) as pool:
        job = pool.submit(_writes_and_waits, str(tmp_path))
        deadline = time.monotonic() + 120
        while not (tmp_path / "started").exists():
            assert time.monotonic() < deadline and not job.done(), job
            time.sleep(0.05)
        assert len(_leftovers(tmp_path)) == 1  # the temporary, being written
        raise Stop
    assert _leftovers(tmp_path) == [] and not (tmp_path / "game.jsonl").exists()


def test_orphan_temporaries_of_dead_local_writers_are_swept(tmp_path):
    from nlmcs.files import _HOST, TEMP_SUFFIX, sweep_folder, sweep_orphans

    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead = int(done.stdout)
    target = tmp_path / "out.csv"
    names = {"dead": f".out.csv.{_HOST}-{dead}.x1{TEMP_SUFFIX}",
             "live": f".out.csv.{_HOST}-{os.getpid()}.x2{TEMP_SUFFIX}",
             "other host": f".out.csv.elsewhere-{dead}.x3{TEMP_SUFFIX}",
             "other file": f".in.csv.{_HOST}-{dead}.x4{TEMP_SUFFIX}"}  # fmt: skip
    for name in names.values():
        (tmp_path / name).write_text("partial")
    assert sweep_orphans(target) == [tmp_path / names["dead"]]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        v for k, v in names.items() if k != "dead")
    # the whole folder: the dead writer's temporary of another file too, nothing live or foreign
    assert sweep_folder(tmp_path) == [tmp_path / names["other file"]]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        v for k, v in names.items() if k in ("live", "other host"))


def test_a_csv_without_rows_keeps_its_header_and_named_columns_come_first(tmp_path):
    """A FreeCiv game without losses wrote an empty losses.csv, which a table reader refuses."""
    import pandas as pd

    from nlmcs.experiments.freeciv_report import LOSS_COLUMNS
    from nlmcs.files import write_csv_rows

    empty = write_csv_rows(tmp_path / "losses.csv", [], LOSS_COLUMNS)
    assert empty.read_text().strip() == "turn,unit,type,server_said"
    assert pd.read_csv(empty).empty
    rows = write_csv_rows(tmp_path / "t.csv", [{"b": 1, "extra": 2}], ("a", "b"))
    assert rows.read_text().splitlines() == ["a,b,extra", ",1,2"]
