import time
from pathlib import Path

from nlmcs.search.mc_rollouts import RolloutResult
from nlmcs.search.workers import ProcessExecutor


class _Evaluator:
    def learned(self):
        return ()

    def load_learned(self, learned):
        pass


class WaitingCore:
    """A roll-out core whose roll-out 0 finishes only once roll-outs 1..n-1 have run (each
    leaves a file): with a fixed share per worker (0, 2, ... on one worker) the batch never
    ends; handed out to whichever worker is free, the other worker runs them all."""

    def __init__(self, folder: Path, n: int):
        self.folder, self.n = folder, n
        self.evaluator = _Evaluator()
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

    def end_batch(self):
        pass

    def apply(self, results):
        self.learn(results)
        self.end_batch()


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
