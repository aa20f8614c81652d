import multiprocessing
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path

import pytest

from nlmcs.errors import WorkerExited
from nlmcs.methods import make_planner
from nlmcs.processes import ONE_THREAD
from nlmcs.search.config import SearchConfig
from nlmcs.search.evaluator import ConstantEvaluator
from nlmcs.search.mc_rollouts import RolloutResult
from nlmcs.search.workers import SOCKET_BUFFER, ProcessExecutor, _large_buffers


class Copies(ConstantEvaluator):
    """Q = 0, and replicas with nothing to share or copy (what the executor asks of one)."""

    def prepare(self, datapoints):
        return None

    def shared_memory(self, ctx, workers):
        return None

    def share_scores(self, memory, worker, workers):
        pass

    def learned(self):
        return None

    def load_learned(self, learned):
        pass

    def keep_changes(self):
        pass

    def changes(self):
        return None

    def load_changes(self, changes):
        pass


class WaitingCore:
    """A roll-out core whose roll-out 0 finishes only once roll-outs 1..n-1 have run (each
    leaves a file): with a fixed share per worker (0, 2, ... on one worker) the batch would
    never end; handed out to whichever worker is free, the other worker runs them all."""

    def __init__(self, folder: Path, n: int):
        self.folder, self.n = folder, n
        self.config = SearchConfig()
        self.evaluator = Copies()
        self.applied: list[int] = []

    def warm_up(self):
        pass

    def reset(self):
        pass

    def run(self, root, player, step, seed, index):
        if index == 0:
            deadline = time.monotonic() + 30  # a guard against a hung test, not a timing
            others = [self.folder / str(k) for k in range(1, self.n)]
            while not all(p.exists() for p in others):
                if time.monotonic() > deadline:
                    return RolloutResult(index, -1.0, {})
                time.sleep(0.01)
        else:
            (self.folder / str(index)).touch()
        return RolloutResult(index, float(index), {"agent": index})

    def learn(self, results):
        self.applied.extend(r.index for r in results)


def test_a_busy_worker_does_not_hold_back_the_batch(tmp_path):
    ex = ProcessExecutor(WaitingCore(tmp_path, 4), workers=2)
    try:
        ex.begin_step(None, 0, 0, 0)
        results = ex.run_batch([0, 1, 2, 3])
    finally:
        ex.close()
    assert [r.index for r in results] == [0, 1, 2, 3]
    assert [r.reward for r in results] == [0.0, 1.0, 2.0, 3.0]  # roll-out 0 did not give up
    assert [r.first for r in results] == [{"agent": k} for k in range(4)]


class LearningCore(WaitingCore):
    """Roll-out n-1 (handed out last) finishes only once another worker has learned roll-outs
    0..n-2: a worker left without roll-outs learns the batch's finished prefix meanwhile."""

    def run(self, root, player, step, seed, index):
        if index == self.n - 1:
            deadline = time.monotonic() + 30  # a guard against a hung test, not a timing
            learned = [self.folder / f"learned-{k}" for k in range(self.n - 1)]
            while not all(p.exists() for p in learned):
                if time.monotonic() > deadline:
                    return RolloutResult(index, -1.0, {})
                time.sleep(0.01)
        return RolloutResult(index, float(index), {"agent": index})

    def learn(self, results):
        for r in sorted(results, key=lambda r: r.index):
            (self.folder / f"learned-{r.index}").touch()


def test_a_worker_out_of_work_learns_the_finished_prefix(tmp_path):
    ex = ProcessExecutor(LearningCore(tmp_path, 4), workers=2)
    try:
        ex.begin_step(None, 0, 0, 0)
        results = ex.run_batch([0, 1, 2, 3])
        ex.apply(results)
        ex.flush()  # the workers learn the rest of the batch
    finally:
        ex.close()
    assert [r.reward for r in results] == [0.0, 1.0, 2.0, 3.0]  # roll-out 3 did not give up
    assert (tmp_path / "learned-3").exists()


def test_a_batch_not_applied_stops_the_next(tmp_path):
    ex = ProcessExecutor(WaitingCore(tmp_path, 1), workers=2)
    try:
        ex.begin_step(None, 0, 0, 0)
        ex.run_batch([0, 1])
        with pytest.raises(RuntimeError, match="not applied"):
            ex.run_batch([2, 3])
    finally:
        ex.close()


class DyingCore(WaitingCore):
    """Roll-out 1 kills the worker that runs it, as the out-of-memory killer would."""

    def run(self, root, player, step, seed, index):
        if index == 1:
            os.kill(os.getpid(), signal.SIGKILL)
        return RolloutResult(index, float(index), {"pid": os.getpid()})


def test_a_worker_killed_mid_batch_is_named_and_the_others_stop(tmp_path):
    ex = ProcessExecutor(DyingCore(tmp_path, 4), workers=2)
    procs = list(ex.procs)
    try:
        ex.begin_step(None, 0, 0, 0)
        with pytest.raises(WorkerExited, match=r"roll-out worker \d \(pid \d+\) was killed by "
                                               r"signal 9 while playing a step"):
            ex.run_batch([0, 1, 2, 3])
        for p in procs:
            p.join(timeout=10)
        assert [p.is_alive() for p in procs] == [False, False]
    finally:
        ex.close()


def test_a_worker_that_dies_while_starting_is_reported_not_waited_for(tmp_path, monkeypatch):
    """A worker whose import of the parent's main module fails (a script without the
    `__main__` guard) dies before it reads its start arguments: the parent must say so, not
    hang writing them (it did when the core, ~MBs, went in those arguments)."""
    script = tmp_path / "dies.py"
    script.write_text("import os\nos._exit(3)\n")
    main = sys.modules["__main__"]
    monkeypatch.setattr(main, "__spec__", None, raising=False)
    monkeypatch.setattr(main, "__file__", str(script), raising=False)
    core = WaitingCore(tmp_path, 1)
    core.padding = b"x" * (8 << 20)  # more than a pipe or socket buffer holds
    outcome = []

    def start():
        try:
            ProcessExecutor(core, workers=2).close()
            outcome.append("started")
        except Exception as err:  # what the test reads below
            outcome.append(err)

    t = threading.Thread(target=start, daemon=True)
    t.start()
    t.join(timeout=120)  # a guard against the old hang, not a timing
    assert outcome, "the parent still waits on a worker that died while starting"
    assert isinstance(outcome[0], WorkerExited)
    assert "exited with code 3 while starting" in str(outcome[0])
    assert "__main__" in str(outcome[0])


def _send_buffer(conn) -> int:
    sock = socket.socket(fileno=os.dup(conn.fileno()))
    with sock:
        return sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)


def test_worker_connections_ask_for_buffers_that_hold_a_result():
    limit = Path("/proc/sys/net/core/wmem_max")
    if not limit.exists():
        pytest.skip("no Linux socket limits to read")
    parent, child = multiprocessing.get_context("spawn").Pipe()
    try:
        _large_buffers(parent)
        # Linux doubles what it grants (for its bookkeeping), up to net.core.wmem_max
        granted = 2 * min(SOCKET_BUFFER, int(limit.read_text()))
        assert _send_buffer(parent) >= granted
        parent.send(b"x" * 1000)
        assert child.recv() == b"x" * 1000
    finally:
        parent.close()
        child.close()


def test_a_connection_that_is_no_socket_is_left_alone():
    reader, writer = multiprocessing.get_context("spawn").Pipe(duplex=False)
    try:
        before = len(os.listdir("/proc/self/fd")) if Path("/proc/self/fd").exists() else None
        _large_buffers(reader)
        if before is not None:
            assert len(os.listdir("/proc/self/fd")) == before  # the duplicate was closed
        writer.send("still works")
        assert reader.recv() == "still works"
    finally:
        reader.close()
        writer.close()


def _blas_threads() -> list[int]:
    from threadpoolctl import threadpool_info

    return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]


class ThreadsCore(WaitingCore):
    """Reports the worker's BLAS thread limits, its thread variables and whether the process
    runs threads Python did not start (an idle BLAS pool made before the worker was pinned)."""

    def run(self, root, player, step, seed, index):
        tasks = Path("/proc/self/task")
        native = len(list(tasks.iterdir())) - threading.active_count() if tasks.exists() else 0
        env = {var: os.environ.get(var) for var in ONE_THREAD}
        return RolloutResult(index, 0.0, {"blas": _blas_threads(), "env": env, "native": native})


def test_building_a_multi_worker_planner_leaves_this_process_its_threads(monkeypatch):
    from threadpoolctl import threadpool_limits
    from toy_game import ToyGame

    for var in ONE_THREAD:
        monkeypatch.delenv(var, raising=False)
    game = ToyGame(units=1, max_turns=3)
    cfg = SearchConfig(workers=2, rollouts=4, batch=2, depth=1, opponent="random")
    make_planner("linear", game=game, seed=0).close()  # every library it needs, loaded now
    with threadpool_limits(limits=2, user_api="blas"):
        before = _blas_threads()
        assert before and all(n == 2 for n in before)
        planner = make_planner("linear", game=game, search_config=cfg, seed=0)
        try:
            move = planner.choose(game.new_initial_state(0), 0, None)
        finally:
            planner.close()
        assert set(move) == set(game.new_initial_state(0).agents(0))
        assert _blas_threads() == before
    assert not any(var in os.environ for var in ONE_THREAD)


def test_workers_run_one_blas_thread_from_their_start(tmp_path, monkeypatch):
    for var in ONE_THREAD:
        monkeypatch.delenv(var, raising=False)
    ex = ProcessExecutor(ThreadsCore(tmp_path, 2), workers=2)
    try:
        ex.begin_step(None, 0, 0, 0)
        reports = [r.first for r in ex.run_batch([0, 1])]
    finally:
        ex.close()
    for report in reports:
        assert report["blas"] and all(n == 1 for n in report["blas"])
        assert report["env"] == ONE_THREAD
        assert report["native"] == 0  # no BLAS pool started with more threads, left idle
    assert not any(var in os.environ for var in ONE_THREAD)
