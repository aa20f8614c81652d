"""The one run store (`nlmcs.runs`) and the one job loop (`nlmcs.jobs`) every command that plays
many games uses: rows fsynced as jobs end, a cut last line repaired once, results kept before a
failure is acted on, a lost worker one line that counts what was kept."""

from __future__ import annotations

import json
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool

import pytest

from nlmcs.errors import UserInputError, WorkerExited
from nlmcs.jobs import WorkerLost, run_jobs
from nlmcs.runs import (
    JsonLinesStore,
    append_row,
    fingerprint,
    identity_changes,
    read_results,
    read_run,
    repair_tail,
    write_run,
)


def _check(row: object) -> str | None:
    return None if isinstance(row, dict) and isinstance(row.get("i"), int) else "no index"


def _square(job: int) -> dict:
    if job == 3:
        raise ValueError("job 3 fails")
    return {"i": job, "square": job * job}


class Inline:
    """An executor that plays each job as it is submitted (so every submitted job has ended by
    the time the loop waits), counting what was in flight."""

    def __init__(self, lose: int | None = None):
        self.submitted, self.lose = [], lose

    def submit(self, fn, job):
        self.submitted.append(job)
        future = Future()
        try:
            if job == self.lose:
                raise BrokenProcessPool("a worker died")
            future.set_result(fn(job))
        except BaseException as err:
            future.set_exception(err)
        return future


def test_results_are_appended_as_jobs_end_and_read_back(tmp_path):
    path = tmp_path / "games.jsonl"
    seen = []
    store = JsonLinesStore(path, check=_check, on_row=seen.append)
    with ThreadPoolExecutor(2) as pool:
        run_jobs(range(3), _square, store, pool, max_in_flight=2)
    rows = read_results(path, check=_check, key=lambda r: r["i"]).rows
    assert sorted(r["i"] for r in rows) == [0, 1, 2] and store.stored == 3 and len(seen) == 3
    assert path.read_bytes().count(b"\n") == 3


def test_no_executor_plays_in_order_in_this_process(tmp_path):
    store = JsonLinesStore(tmp_path / "r.jsonl", check=_check)
    run_jobs([2, 0, 1], _square, store)
    assert [r["i"] for r in store.rows] == [2, 0, 1]


def test_a_failing_job_keeps_every_result_that_ended_with_it(tmp_path):
    store = JsonLinesStore(tmp_path / "r.jsonl", check=_check)
    executor = Inline()
    with pytest.raises(ValueError, match="job 3 fails"):
        run_jobs(range(6), _square, store, executor, max_in_flight=5)
    assert executor.submitted == [0, 1, 2, 3, 4]  # the window: never the sixth
    assert [r["i"] for r in read_results(tmp_path / "r.jsonl").rows] == [0, 1, 2, 4]


def test_a_lost_worker_is_a_one_line_error_counting_the_stored_results(tmp_path):
    store = JsonLinesStore(tmp_path / "r.jsonl", stored=7, check=_check,
                           describe=lambda job: f"job {job}")
    with pytest.raises(WorkerLost, match=r"during job 1 \(BrokenProcessPool\); 9 games are "
                                         "stored in .*r.jsonl; re-run") as err:
        run_jobs(range(3), _square, store, Inline(lose=1), max_in_flight=None)  # 0, 2 kept
    assert isinstance(err.value, WorkerExited)  # the CLI's one-line worker error


def test_a_bad_result_is_never_stored(tmp_path):
    store = JsonLinesStore(tmp_path / "r.jsonl", check=_check, describe=lambda j: f"job {j}")
    with pytest.raises(RuntimeError, match=r"job 0: bad row \(no index\)"):
        run_jobs([0], lambda job: {"x": job}, store)
    assert not (tmp_path / "r.jsonl").exists()


def test_each_result_is_kept_as_its_job_ends_not_in_job_order():
    kept_1 = threading.Event()

    class Store:
        noun, where, stored = "results", "memory", 0

        def __init__(self):
            self.pairs = []

        def describe(self, job):
            return str(job)

        def keep(self, job, result):
            self.pairs.append((job, result))
            kept_1.set()

    def first_ends_last(job: int) -> int:
        if job == 0:
            assert kept_1.wait(5)  # job 1 ended and was kept before job 0 ends
        return job * 10

    store = Store()
    with ThreadPoolExecutor(2) as pool:
        run_jobs(range(2), first_ends_last, store, pool, max_in_flight=None)
    assert store.pairs == [(1, 10), (0, 0)]


def test_the_tail_repair_drops_a_cut_line_once_and_nothing_else(tmp_path, caplog):
    path = tmp_path / "games.jsonl"
    append_row(path, {"i": 0})
    path.write_bytes(path.read_bytes() + b'{"i": 1, "squ')
    results = read_results(path, check=_check)
    assert results.cut_tail == 2 and [r["i"] for r in results.rows] == [0] and not results.bad
    assert repair_tail(path) and not repair_tail(path)
    assert caplog.text.count("dropped a last line cut off") == 1
    append_row(path, {"i": 1})
    assert [r["i"] for r in read_results(path, check=_check).rows] == [0, 1]


def test_bad_and_repeated_lines_are_named_never_dropped(tmp_path):
    path = tmp_path / "games.jsonl"
    path.write_text('{"i": 0}\n{"i": 0}\n\n[1]\n{"i": 2}\n')
    before = path.read_bytes()
    with pytest.raises(UserInputError, match=r"line 2: repeats index 0 \(first on line 1\) "
                                             r"\(and 2 more bad lines\); the 2 good rows"):
        read_results(path, check=_check, key=lambda r: r["i"], label=lambda i: f"index {i}")
    assert not repair_tail(path) and path.read_bytes() == before


def test_run_json_holds_the_identity_and_a_wrong_one_is_one_line(tmp_path):
    write_run(tmp_path, {"format": "demo/1", "identity": {"a": 1}})
    assert (tmp_path / "games.jsonl").read_bytes() == b""  # a started run has its results
    assert read_run(tmp_path, fmt="demo/1", what="a demo run")["identity"] == {"a": 1}
    with pytest.raises(UserInputError, match=r"run.json: not an other run \(other/1\)"):
        read_run(tmp_path, fmt="other/1", what="an other run")
    (tmp_path / "run.json").write_text("{")
    with pytest.raises(UserInputError, match="not a readable run file"):
        read_run(tmp_path, fmt="demo/1", what="a demo run")
    assert read_run(tmp_path / "none", fmt="demo/1", what="a demo run") is None


def test_identities_hash_stably_and_name_their_changes():
    assert fingerprint({"b": 1, "a": [1, 2]}) == fingerprint(json.loads('{"a": [1, 2], "b": 1}'))
    assert identity_changes({"s": {"x": 1}}, {"s": {"x": 2}, "t": 3}) == [
        "s.x 1 -> 2", "t (absent) -> 3"]


def test_the_stopped_pools_manager_thread_fails_quietly_and_other_threads_do_not():
    import threading

    from nlmcs.processes import quiet_thread

    def fail():
        raise OSError("handle is closed")

    previous, reported = threading.excepthook, []
    threading.excepthook = lambda args: reported.append(args.thread)
    try:
        manager, other = threading.Thread(target=fail), threading.Thread(target=fail)
        quiet_thread(manager)
        for thread in (manager, other):
            thread.start()
            thread.join()
        assert reported == [other]
    finally:
        threading.excepthook = previous
