"""One writer at a time per store (a stored manual, a corpus, an ablation run), across processes.

A store has a lock file beside it, `.<name>.lock` in the same folder (an ablation run folder
keeps its own inside), held with `filelock` while anything in the store changes. A second
writer waits for the first and says so in one `note:` line (or, with `wait=False`, refuses with
one line). The lock is re-entrant within a process (`is_singleton`), so a writer may call
another writer of the same store (building a shipped manual runs an ingest). Lock files stay
after use: removing one while another process waits on it would let two writers in.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from nlmcs.errors import UserInputError

notice = logging.getLogger("nlmcs.notice")


def lock_path(store: Path) -> Path:
    """The lock file of the store at `store`: a hidden file beside it."""
    store = Path(store)
    return store.parent / f".{store.name}.lock"


@contextmanager
def store_lock(store: Path, *, what: str, wait: bool = True) -> Iterator[None]:
    """Hold the lock of `store` (`what` names it in messages, e.g. "corpus demo")."""
    store = Path(store)
    with hold(lock_path(store), what=what, wait=wait):
        yield


@contextmanager
def hold(lock_file: Path, *, what: str, wait: bool = True) -> Iterator[None]:
    """Hold the lock file `lock_file` (its folder is created): a second holder waits, saying
    so in one line, or with `wait=False` is refused with one line."""
    from filelock import FileLock, Timeout

    lock_file = Path(lock_file)
    try:
        lock_file.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UserInputError(f"cannot write under {lock_file.parent}: {err.strerror or err}") \
            from None
    lock = FileLock(str(lock_file), is_singleton=True)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        if not wait:
            raise UserInputError(f"{what}: another nlmcs process is writing it; try again when "
                                 "it is done") from None
        notice.info("waiting for another nlmcs process writing %s (%s)", what, lock_file)
        lock.acquire()
    except OSError as err:
        raise UserInputError(f"{lock_file}: cannot lock ({err.strerror or err})") from None
    try:
        yield
    finally:
        lock.release()


def try_store_lock(store: Path):
    """The lock of `store` if it is free now, else None; the caller releases it. For tidying
    that may be skipped while another process works there."""
    from filelock import FileLock, Timeout

    lock = FileLock(str(lock_path(store)), is_singleton=True)
    try:
        lock.acquire(timeout=0)
    except (Timeout, OSError):
        return None
    return lock
