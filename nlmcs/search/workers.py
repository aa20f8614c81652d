"""Roll-outs in worker processes, each holding a replica of the roll-out core and its evaluator.

Replicas stay identical because every one applies the same updates in the same (roll-out index)
order: a batch's results come back to the parent, which passes them on to every worker, as a prefix
of the batch to a worker left without roll-outs while others finish theirs, the rest with the next
batch. Within a batch the parent hands out roll-outs one at a time to whichever worker is free, so
a worker that drew short roll-outs does not wait for one that drew long ones; which worker runs a
roll-out does not change its result (its chance comes from its index alone and every replica holds
the batch's weights). The parent does not learn during a step (it would be one process more than
there are workers competing for the cores); when it needs its weights (the end of a step), the
workers learn the last batch and the first sends back the weights that moved since the last step
(`Replica.changes` of `nlmcs.search.evaluator`: a share of the 8 MB tables, which took ~28 ms to
send whole), which, the replicas being identical, is what replaying the updates would have
given. Each worker pins torch
and BLAS to one thread (parallelism is over processes); the process that builds the workers keeps
its own thread settings.

Every worker process of the project (these, and the game pools of `nlmcs.processes`) is set up
by `nlmcs.processes.worker_setup`.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import pickle
import socket
from multiprocessing.connection import wait
from typing import TYPE_CHECKING, NoReturn

from nlmcs.errors import WorkerExited
from nlmcs.processes import one_thread_environment, worker_setup
from nlmcs.search.evaluator import check_replicable
from nlmcs.search.mc_rollouts import RolloutResult

if TYPE_CHECKING:
    from nlmcs.search.mc_rollouts import RolloutCore


class LocalExecutor:
    """Roll-outs in this process (workers = 1)."""

    def __init__(self, core: RolloutCore):
        self.core = core
        self._step = None

    def begin_step(self, root, player: int, step: int, seed: int) -> None:
        self.core.reset()
        self._step = (root, player, step, seed)

    def run_batch(self, indices: list[int]) -> list[RolloutResult]:
        root, player, step, seed = self._step
        return [self.core.run(root, player, step, seed, k) for k in indices]

    def apply(self, results: list[RolloutResult]) -> None:
        self.core.learn(results)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


def _worker(conn, parent_pid: int, shared, worker: int, workers: int) -> None:
    worker_setup(parent_pid)
    core = pickle.loads(conn.recv())
    if shared is not None:
        core.evaluator.share_scores(shared, worker, workers)
    if worker == 0:  # it sends the parent what its replica learned, at the end of each step
        core.evaluator.keep_changes()
    core.warm_up()
    conn.send("ready")
    step = None
    held: list[RolloutResult] = []  # this worker's roll-outs of the batch, not learned yet

    def catch_up(others: list[bytes] | None) -> None:
        """Learn the rest of the last batch: this worker's own results and the others' (None:
        the parent did not apply that batch; it must, once any worker learned a prefix)."""
        nonlocal held
        if others is not None:
            core.learn(held + [pickle.loads(blob) for blob in others])
        held = []

    def run(k: int) -> None:
        root, player, t, seed = step
        r = core.run(root, player, t, seed, k)
        held.append(r)
        # The parent reads the summary and passes the prepared datapoints on to the other
        # workers as they are (pickled once, here), never unpickling them itself.
        conn.send((RolloutResult(r.index, r.reward, r.first),
                   pickle.dumps(r, protocol=pickle.HIGHEST_PROTOCOL)))

    while True:
        msg = conn.recv()
        kind = msg[0]
        if kind == "stop":
            break
        if kind == "step":
            catch_up(msg[2])  # the last batch of the previous step: weights may persist
            core.reset()
            step = pickle.loads(msg[1])
        elif kind == "sync":
            _, others, reply = msg
            catch_up(others)
            if reply:
                conn.send(core.evaluator.changes())
        elif kind == "batch":  # a new batch: learn the last one, then its first roll-out
            _, others, k = msg
            catch_up(others)
            if k is not None:
                run(k)
        elif kind == "run":
            run(msg[1])
        elif kind == "prefix":  # out of work while others finish the batch: learn what is done
            _, upto, others = msg
            mine = [r for r in held if r.index < upto]
            held = [r for r in held if r.index >= upto]
            core.learn(mine + [pickle.loads(blob) for blob in others])
    conn.close()


class ProcessExecutor:
    """Roll-outs of each batch run by `workers` processes, each handed the next roll-out of the
    batch when it is free. A worker with no roll-out
    left in the batch learns the batch's finished prefix (in roll-out order) while the others
    finish theirs, so every batch that `run_batch` runs must then be `apply`-ed, as the search
    does (checked). A worker that dies (killed, out of memory, failing to start) ends the
    search with `WorkerExited`, which names it and how it ended, once the others are stopped."""

    def __init__(self, core: RolloutCore, workers: int):
        self.conns, self.procs = [], []
        check_replicable(core.evaluator, workers)
        self.core = core
        self.unapplied = False  # a batch was run and not applied yet
        ctx = mp.get_context("spawn")
        blob = pickle.dumps(core)
        # Scores the workers share (made before they start, which inherit it), if the
        # evaluator has any: a worker reuses the ones another computed under the same weights.
        shared = core.evaluator.shared_memory(ctx, workers)
        with one_thread_environment():  # the workers' own; this process keeps its threads
            for i in range(workers):
                parent, child = ctx.Pipe()
                for end in (parent, child):
                    _large_buffers(end)
                proc = ctx.Process(target=_worker, daemon=True,
                                   args=(child, os.getpid(), shared, i, workers))
                proc.start()
                child.close()
                self.conns.append(parent)
                self.procs.append(proc)
        # The core goes over the connection, not in the start arguments: a worker that dies
        # before reading those (its main module failing to import) would leave the start
        # writing them forever, where a send to a dead worker fails at once.
        for i in range(workers):  # start-up is not part of any step's time
            self._post(i, blob, "starting")
        for i in range(workers):
            if self._recv(i, "starting") != "ready":
                self._lost(i, "starting")
        self.last: dict[int, tuple[int, bytes]] = {}  # index -> (worker, pickled result)
        self.sent: dict[int, int] = {}  # worker -> roll-outs of the batch it has learned
        self.pending: tuple | None = None  # (last, sent) of the applied batch
        self.behind = False  # whether this process's replica misses updates

    def _others(self, i: int) -> list[bytes] | None:
        """What worker i has to learn before its next task: the results of the applied batch
        that other workers ran (it keeps its own), after the prefix it has learned."""
        if self.pending is None:
            return None
        last, sent = self.pending
        done = sorted(last.items())[sent.get(i, 0):]
        return [blob for _, (j, blob) in done if j != i]

    def _send(self, make_msg) -> None:
        if self.unapplied:  # workers that learned a prefix would be ahead of the others
            raise RuntimeError("a batch of roll-outs was run and not applied")
        # A worker that may still be learning a prefix is sent its message last: a large
        # message to it must not keep the parent from the others.
        prefixed = set(self.pending[1]) if self.pending is not None else set()
        for i in sorted(range(len(self.conns)), key=lambda i: i in prefixed):
            self._post(i, make_msg(i, self._others(i)))
        self.pending = None

    def begin_step(self, root, player: int, step: int, seed: int) -> None:
        self.flush()
        self.core.reset()
        blob = pickle.dumps((root, player, step, seed))
        # workers reset; persistent weights carry over
        self._send(lambda i, others: ("step", blob, others))

    def run_batch(self, indices: list[int]) -> list[RolloutResult]:
        indices = sorted(indices)
        todo = iter(indices)
        first = [next(todo, None) for _ in self.conns]
        self._send(lambda i, others: ("batch", others, first[i]))
        self.unapplied = True
        # connection -> worker, for those running a roll-out
        busy = {c: i for i, c in enumerate(self.conns) if first[i] is not None}
        self.last, self.sent, results = {}, {}, []
        while busy:
            for c in wait(list(busy)):
                i = busy[c]
                summary, blob = self._recv(i)
                results.append(summary)
                self.last[summary.index] = (i, blob)
                k = next(todo, None)
                if k is not None:
                    self._post(i, ("run", k))
                    continue
                del busy[c]
                if busy:
                    self._send_prefix(i, indices)
        return sorted(results, key=lambda r: r.index)

    def _send_prefix(self, i: int, indices: list[int]) -> None:
        """Worker i has nothing left to run in this batch: send it the finished roll-outs of
        the batch up to the first one still running (others' results; it keeps its own)."""
        upto = 0
        while upto < len(indices) and indices[upto] in self.last:
            upto += 1
        start = self.sent.get(i, 0)
        if upto <= start:
            return
        blobs = [self.last[k][1] for k in indices[start:upto] if self.last[k][0] != i]
        self._post(i, ("prefix", indices[upto], blobs))  # some roll-out is still running
        self.sent[i] = upto

    def apply(self, results: list[RolloutResult]) -> None:
        """Learn the batch `run_batch` returned last (the workers do, before their next task)."""
        self.pending = (self.last, self.sent)
        self.behind = True
        self.unapplied = False

    def flush(self) -> None:
        """Bring this process's replica up to date (before reading its weights): every worker
        learns what it has not yet, and the first sends back the weights that moved since the
        last time (this replica resets as the workers' do)."""
        if not self.behind:
            return
        self._send(lambda i, others: ("sync", others, i == 0))
        self.core.evaluator.load_changes(self._recv(0))
        self.behind = False

    def _post(self, i: int, msg, when: str = "playing a step") -> None:
        try:
            self.conns[i].send(msg)
        except OSError:  # broken pipe, reset connection: the worker is gone
            self._lost(i, when)

    def _recv(self, i: int, when: str = "playing a step"):
        try:
            return self.conns[i].recv()
        except (EOFError, OSError):
            self._lost(i, when)

    def _lost(self, i: int, when: str) -> NoReturn:
        """Worker i is gone: stop the others and say how it ended."""
        proc = self.procs[i]
        proc.join(timeout=5)
        code = proc.exitcode
        if code is None:
            how = "closed its connection"
        elif code < 0:
            how = f"was killed by signal {-code}"
        else:
            how = f"exited with code {code}"
        self.close()
        hint = ""
        if when == "starting":  # each worker imports the main module of the parent again
            hint = ("; a script that runs a search with workers must do so under "
                    "`if __name__ == '__main__':`")
        raise WorkerExited(f"roll-out worker {i} (pid {proc.pid}) {how} while {when}{hint}")

    def close(self) -> None:
        for c in self.conns:
            # A worker that already exited has nothing left to stop.
            with contextlib.suppress(BrokenPipeError, OSError):
                c.send(("stop",))
        for p in self.procs:
            p.join(timeout=5)
            if p.is_alive():
                p.terminate()
        self.conns, self.procs = [], []

    def __del__(self):
        self.close()


SOCKET_BUFFER = 4 << 20  # a roll-out's prepared datapoints are ~0.4 MB


def _large_buffers(conn) -> None:
    """Ask for socket buffers that hold a few roll-out results, so a worker's send does not
    wait for the parent to read, nor the parent's for a busy worker (the kernel caps the size
    at its limit, net.core.wmem_max; a connection that is no socket is left as it is)."""
    fd = os.dup(conn.fileno())
    try:
        sock = socket.socket(fileno=fd)
    except OSError:
        os.close(fd)
        return
    with sock, contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SOCKET_BUFFER)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SOCKET_BUFFER)


def make_executor(core: RolloutCore, workers: int):
    return LocalExecutor(core) if workers <= 1 else ProcessExecutor(core, workers)
