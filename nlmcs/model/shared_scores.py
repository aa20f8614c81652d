"""E[Q] of signatures shared by the replicas of one search (the roll-out worker processes).

After every weight change each replica rescores the candidates its roll-outs meet, and the
roll-outs of one batch meet many of the same ones in every worker. The replicas go through the
same weights in the same order (they learn the same roll-outs in the same order, at different
times), so a worker tags each E[Q] it computes with its signature's key and the weight snapshot
(the count of weight changes so far): another worker that finds the same key under the same
snapshot holds the same weights and would compute the same value, to the last bit. A worker
publishes each E[Q] it computes and looks up the others' before computing its own.

Each worker writes only its own region of the table (one writer per slot, no locks); a slot holds
(version, key's two words, snapshot) and the value, the version odd while the slot is written, and
a reader takes a value only if the version was even and unchanged around its reads of the key, the
snapshot and the value (a sequence lock). That relies on stores becoming visible in program order,
which x86-64 guarantees; elsewhere (`available`) the workers do not share.
"""

from __future__ import annotations

import platform

from nlmcs.model.features import digest

CAPACITY = 1 << 15  # slots per worker, direct-mapped by key: a collision is only a miss


def available() -> bool:
    return platform.machine().lower() in ("x86_64", "amd64")


def allocate(ctx, workers: int, capacity: int = CAPACITY) -> tuple:
    """The table's shared memory, made before the workers start (they inherit it)."""
    return ctx.RawArray("q", workers * capacity * 4), ctx.RawArray("d", workers * capacity)


def signature_key(sig) -> tuple[int, int]:
    """A 128-bit key of a signature, the same in every process (`features.digest`): two
    signatures that shared one would share a value. Two signed words, as the table holds."""
    h = digest(repr(sig), 16)
    return (int.from_bytes(h[:8], "little", signed=True),
            int.from_bytes(h[8:], "little", signed=True))


class SharedScores:
    """One worker's view of the table: it writes its region and reads the others'. The table is
    read and written through memoryviews, whose items are plain Python ints and floats (a
    lookup per candidate, so numpy's scalar indexing would cost more than the value)."""

    def __init__(self, memory: tuple, worker: int, workers: int):
        meta, values = memory
        capacity = len(values) // workers
        self.meta = memoryview(meta).cast("B").cast("q")
        self.values = memoryview(values).cast("B").cast("d")
        self.worker = worker
        self.others = [w * capacity for w in range(workers) if w != worker]
        self.mine = worker * capacity
        self.mask = capacity - 1

    def get(self, key: tuple[int, int], snapshot: int) -> float | None:
        """The value another worker published for (key, snapshot), else None."""
        low, high = key
        slot = low & self.mask
        meta, values = self.meta, self.values
        for region in self.others:
            i = region + slot
            m = 4 * i
            version = meta[m]
            if (version & 1 or meta[m + 1] != low or meta[m + 2] != high
                    or meta[m + 3] != snapshot):
                continue
            value = values[i]
            if meta[m] == version:
                return value
        return None

    def put(self, key: tuple[int, int], snapshot: int, value: float) -> None:
        low, high = key
        i = self.mine + (low & self.mask)
        meta, m = self.meta, 4 * i
        meta[m] += 1  # odd: being written
        meta[m + 1] = low
        meta[m + 2] = high
        meta[m + 3] = snapshot
        self.values[i] = value
        meta[m] += 1
